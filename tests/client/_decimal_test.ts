import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { decimalCount, isCount } from "../../client/_decimal.ts";

describe("decimalCount", () => {
  it("reads ASCII digit runs up to MAX_SAFE_INTEGER and nothing else", () => {
    assert.equal(decimalCount("0"), 0);
    assert.equal(decimalCount(String(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER);
    for (const text of ["", "9007199254740992", "9".repeat(17), "1e3", " 1", "-1", "１", "0x10"]) {
      assert.equal(decimalCount(text), undefined, text);
    }
  });

  it("isCount accepts safe integers from min only", () => {
    assert.equal(isCount(0, 0), true);
    assert.equal(isCount(0, 1), false);
    for (const value of [1.5, NaN, Infinity, 2 ** 53, "3", null]) {
      assert.equal(isCount(value, 0), false);
    }
  });
});
