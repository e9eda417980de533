import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertKnownFields } from "../../telemetry/_known_fields.ts";
import { withPolyfillField } from "../polyfill_field.ts";

describe("assertKnownFields", () => {
  const known = ["cost", "subjects"];
  it("accepts known fields, own or inherited, and non-enumerable or symbol keys", () => {
    class Options {
      cost = 1;
      method(): void {}
    }
    for (
      const ok of [
        { cost: 1 },
        Object.create({ cost: 7 }),
        new Options(),
        Object.defineProperty({}, "cots", { value: 1 }),
        { [Symbol("x")]: 1 },
      ]
    ) {
      assert.doesNotThrow(() => assertKnownFields(ok, known, "check", "option"));
    }
  });
  it("refuses an unknown enumerable field, own or inherited (the check reads inherited ones), naming it", () => {
    for (
      const bad of [{ cots: 5 }, Object.create({ cots: 5 }), Object.create({ cost: 1, cots: 5 })]
    ) {
      assert.throws(
        () => assertKnownFields(bad, known, "check", "option"),
        /^TypeError: check: unknown option `cots` \(known: cost, subjects\)$/,
      );
    }
  });
  it("names every unknown field, own and inherited, in one message", () => {
    assert.throws(() => assertKnownFields({ d: 1, cost: 1, e: 1 }, known, "x", "option"), {
      name: "TypeError",
      message: "x: unknown options `d`, `e` (known: cost, subjects)",
    });
    assert.throws(
      () => assertKnownFields(Object.assign(Object.create({ f: 1 }), { d: 1 }), known, "x"),
      {
        name: "TypeError",
        message: "x: unknown fields `d`, `f` (known: cost, subjects)",
      },
    );
  });
  it("names at most 10 unknown fields, then how many more (a client passed as options has hundreds)", () => {
    const many = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`f${i}`, i]));
    assert.throws(() => assertKnownFields(many, known, "x", "option"), {
      name: "TypeError",
      message: "x: unknown options " +
        Array.from({ length: 10 }, (_, i) => `\`f${i}\``).join(", ") +
        " and 15 more (known: cost, subjects)",
    });
  });
  it("reads past an enumerable field of Object.prototype (a polyfill's is no caller's option: refused, it would fail every check)", () => {
    withPolyfillField("extend", () => {
      assert.doesNotThrow(() => assertKnownFields({ cost: 1 }, known, "check", "option"));
      assert.doesNotThrow(() => assertKnownFields({}, known, "check", "option"));
      assert.throws(() => assertKnownFields({ extend: 1 }, known, "check", "option"), /`extend`/);
      assert.throws(() => assertKnownFields({ d: 1 }, known, "x"), {
        message: "x: unknown field `d` (known: cost, subjects)",
      });
    });
  });
});
