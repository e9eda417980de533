/** The admin routes' input readers: bounds, JSON objects, known fields, field checks. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  AdminHttpError,
  bodyInstant,
  oneOf,
  queryInstant,
  readObject,
  stringList,
} from "../../../api_keys/admin/_body.ts";
import { ApiKeyValidationError } from "../../../api_keys/errors.ts";

const invalid = (field: string) => (error: unknown) =>
  error instanceof ApiKeyValidationError && error.field === field;

describe("api_keys/admin/_body.ts", () => {
  it("readObject: empty is {}, bytes and text read alike, past the bound a 413", () => {
    assert.deepEqual(readObject(null, 10, []), {});
    assert.deepEqual(readObject(new TextEncoder().encode('{"a":1}'), 10, ["a"]), { a: 1 });
    assert.deepEqual(readObject('{"a":1}', 7, ["a"]), { a: 1 });
    assert.throws(
      () => readObject('{"a":12}', 7, ["a"]),
      (error) => error instanceof AdminHttpError && error.status === 413,
    );
    assert.throws(() => readObject("é".repeat(4), 7, []), AdminHttpError, "UTF-8 bytes counted");
  });

  it("readObject: refuses non-objects, bad UTF-8 and unknown or inherited-looking fields", () => {
    for (const body of ["[]", "1", "null", "{", new Uint8Array([0x7b, 0xc3, 0x7d])]) {
      assert.throws(() => readObject(body, 100, []), invalid("body"));
    }
    assert.throws(() => readObject('{"__proto__":{}}', 100, ["a"]), /unknown fields: __proto__/);
    assert.throws(() => readObject('{"constructor":1}', 100, ["a"]), /unknown fields: constructor/);
  });

  it("the field checks", () => {
    assert.equal(oneOf(undefined, ["a", "b"], "b", "f"), "b");
    assert.equal(oneOf("a", ["a", "b"], "b", "f"), "a");
    assert.throws(() => oneOf("c", ["a", "b"], "b", "f"), invalid("f"));
    assert.deepEqual(stringList(["a"], "s", 1, 2), ["a"]);
    for (const bad of [[], ["a", "b", "c"], [1], "a"]) {
      assert.throws(() => stringList(bad, "s", 1, 2), invalid("s"));
    }
    const fallback = new Date(0);
    assert.equal(queryInstant(null, fallback, "to"), fallback);
    assert.equal(
      queryInstant("2030-01-01T00:00:00Z", fallback, "to").toISOString(),
      "2030-01-01T00:00:00.000Z",
    );
    for (
      const bad of [
        "tomorrow",
        "2030-01-01T00:00:00Z".padEnd(41, " "),
        "Tue, 01 Dec 2026",
        "2026-12-01",
        "+275760-09-13T00:00:00.000Z",
        "2030-02-30T00:00:00Z",
      ]
    ) {
      assert.throws(() => queryInstant(bad, fallback, "to"), invalid("to"));
    }
  });

  it("bodyInstant: date, time and offset all written, each part in range", () => {
    assert.equal(bodyInstant("2030-01-31T12:00Z", "at").toISOString(), "2030-01-31T12:00:00.000Z");
    assert.equal(
      bodyInstant("2028-02-29T23:59:59.5-01:00", "at").toISOString(),
      "2028-03-01T00:59:59.500Z",
    );
    assert.equal(
      bodyInstant("2030-01-01T12:00:00.123456Z", "at").toISOString(),
      "2030-01-01T12:00:00.123Z",
    );
    for (
      const bad of [
        "2030-02-29T00:00:00Z",
        "2030-04-31T00:00:00Z",
        "2030-01-01T12:60:00Z",
        "2030-01-01T12:00:60Z",
        "2030-01-01T12:00:00+02:60",
        "2030-01-01T12:00:00.1234567891Z",
        "2030-01-01T12:00:00z",
        "2030-01-01T12:00:00Z\n",
        new Date(0),
      ]
    ) {
      assert.throws(() => bodyInstant(bad, "at"), invalid("at"), String(bad));
    }
  });

  it("bodyInstant: no later than 9999-12-31T23:59:59.999Z, an offset included", () => {
    assert.equal(
      bodyInstant("9999-12-31T23:59:59.999Z", "at").toISOString(),
      "9999-12-31T23:59:59.999Z",
    );
    assert.equal(
      bodyInstant("9999-12-31T23:59:59+01:00", "at").toISOString(),
      "9999-12-31T22:59:59.000Z",
    );
    for (const bad of ["9999-12-31T23:59:59-23:59", "9999-12-31T23:30:00-00:30"]) {
      // The service's code for a date past the bound (an expiresAt's answer before the route read it).
      assert.throws(
        () => bodyInstant(bad, "at"),
        (e) => invalid("at")(e) && (e as ApiKeyValidationError).code === "api_key_invalid_time",
        bad,
      );
      assert.throws(() => queryInstant(bad, new Date(0), "to"), invalid("to"), bad);
    }
  });
});
