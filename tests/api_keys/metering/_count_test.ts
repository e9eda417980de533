import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertCost, assertCount } from "../../../api_keys/metering/_count.ts";
import { MAX_CREDITS } from "../../../rate_limits/mod.ts";

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

describe("assertCost", () => {
  it("passes a safe integer of 0 to MAX_CREDITS and names what is wrong otherwise", () => {
    assert.equal(assertCost(0, "cost"), 0);
    assert.equal(assertCost(MAX_CREDITS, "cost"), MAX_CREDITS);
    for (const big of [MAX_CREDITS + 1, Number.MAX_SAFE_INTEGER]) {
      assert.throws(() => assertCost(big, "cost"), /^TypeError: cost must be at most 10+$/);
    }
    assert.throws(() => assertCost(-1, "cost"), /^TypeError: cost must be a safe integer >= 0$/);
  });
});
