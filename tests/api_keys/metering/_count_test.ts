import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertCount } from "../../../api_keys/metering/_count.ts";

describe("assertCount", () => {
  it("passes a safe integer of at least min and names what is wrong otherwise", () => {
    assert.equal(assertCount(0, 0, "cost"), 0);
    assert.equal(assertCount(7, 1, "threshold"), 7);
    for (const bad of [-1, 0.5, Number.MAX_SAFE_INTEGER + 1, NaN, "3", null]) {
      assert.throws(
        () => assertCount(bad, 0, "cost"),
        /^TypeError: cost must be a safe integer >= 0$/,
      );
    }
    assert.throws(() => assertCount(0, 1, "threshold"), TypeError);
  });
});
