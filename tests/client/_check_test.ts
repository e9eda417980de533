import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  isBoolean,
  isNumber,
  isRecord,
  isString,
  isStringArray,
  isStringOrNull,
  oneOf,
  shape,
} from "../../client/_check.ts";

describe("client/_check.ts", () => {
  it("checks primitives", () => {
    assert.deepEqual([isString("a"), isString(1)], [true, false]);
    assert.deepEqual([isNumber(1), isNumber("1")], [true, false]);
    assert.deepEqual([isBoolean(false), isBoolean(0)], [true, false]);
    assert.deepEqual([isStringOrNull(null), isStringOrNull(undefined)], [true, false]);
    assert.deepEqual([isStringArray(["a"]), isStringArray(["a", 1]), isStringArray("a")], [
      true,
      false,
      false,
    ]);
    assert.deepEqual([isRecord({}), isRecord(null), isRecord([])], [true, false, false]);
    assert.deepEqual([oneOf("a", 1)(1), oneOf("a", 1)("b")], [true, false]);
  });

  it("shape: required fields must pass, optional ones may be absent, others are allowed", () => {
    const check = shape({ id: isString }, { count: isNumber });
    assert.equal(check({ id: "x" }), true);
    assert.equal(check({ id: "x", count: 2, extra: true }), true);
    assert.equal(check({ id: "x", count: "2" }), false);
    assert.equal(check({ count: 2 }), false);
    assert.equal(check(null), false);
  });
});
