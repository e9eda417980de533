import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { addCounts, zeroCounts } from "../../../api_keys/metering/_usage_counts.ts";
import { API_KEY_USAGE_REFUSALS } from "../../../api_keys/metering/usage.ts";

describe("api_keys/metering/_usage_counts.ts", () => {
  it("zeroCounts: nothing accepted, refused or spent, one refusal count per code", () => {
    const zero = zeroCounts();
    assert.deepEqual([zero.accepted, zero.cost], [0, 0]);
    assert.deepEqual(Object.keys(zero.refused).sort(), [...API_KEY_USAGE_REFUSALS].sort());
    assert.ok(Object.values(zero.refused).every((count) => count === 0));
    assert.notEqual(zeroCounts().refused, zero.refused, "a fresh object each call");
  });

  it("addCounts adds every count", () => {
    const into = zeroCounts();
    addCounts(into, { ...zeroCounts(), accepted: 2, cost: 3 });
    into.refused.api_key_expired = 1;
    addCounts(into, into);
    assert.deepEqual([into.accepted, into.cost, into.refused.api_key_expired], [4, 6, 2]);
  });
});
