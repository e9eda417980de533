/** The one refusal of an unknown option of safe-response's options bags. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { optionNames, refuseUnknownOptions } from "../../safe_response/_options.ts";
import { withPolyfillField } from "../polyfill_field.ts";

describe("refuseUnknownOptions", () => {
  it("passes known keys, names an unknown one (own or inherited) and the known ones, refuses a non-object", () => {
    refuseUnknownOptions({}, ["since"], "Deprecated");
    refuseUnknownOptions({ since: 1, sunset: 2 }, ["since", "sunset"], "Deprecated");
    refuseUnknownOptions(Object.create({ since: 1 }), ["since"], "Deprecated");
    assert.throws(
      () => refuseUnknownOptions(Object.create({ sinse: 1 }), ["since"], "Deprecated"),
      { name: "TypeError", message: "Deprecated: unknown option `sinse` (known: since)" },
      "a misspelt option inherited from a defaults object",
    );
    withPolyfillField(
      "polyfilled",
      () => refuseUnknownOptions({ since: 1 }, ["since"], "Deprecated"),
    );
    assert.throws(
      () => refuseUnknownOptions({ since: 1, sunsett: 2 }, ["since", "sunset"], "Deprecated"),
      { name: "TypeError", message: "Deprecated: unknown option `sunsett` (known: since, sunset)" },
    );
    assert.throws(
      () => refuseUnknownOptions({ toString: 1 }, ["since"], "Deprecated"),
      /unknown option `toString`/,
      "a name of Object.prototype is not known",
    );
    for (const options of [null, undefined, 1, "x", []]) {
      assert.throws(
        () => refuseUnknownOptions(options, ["since"], "Paginated"),
        { name: "TypeError", message: "Paginated: options must be an object" },
        String(options),
      );
    }
  });
});

describe("optionNames", () => {
  it("lists the names of its record once, frozen", () => {
    const names = optionNames<{ since?: string; sunset?: string }>({ since: true, sunset: true });
    assert.deepEqual(names, ["since", "sunset"]);
    assert.ok(Object.isFrozen(names));
  });
});
