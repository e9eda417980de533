import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { batchSize } from "../../../bench/lib/harness.ts";

/** A batch timer of 1 µs per operation, whose calls listed in `stalls` also take `pauseMs` more. */
function timer(stalls: readonly number[], pauseMs = 48) {
  let call = 0;
  return (n: number) => Promise.resolve(n * 0.001 + (stalls.includes(call++) ? pauseMs : 0));
}

describe("batchSize", () => {
  it("sizes a batch to a round of the operation's own cost", async () => {
    assert.equal(await batchSize(timer([]), 100), 100_000);
    assert.equal(await batchSize(timer([]), 100, 64), 100_000);
  });

  it("is not shrunk by a pause in one timed batch (a collection of a setup's garbage)", async () => {
    // Timed once, the first batch of 64 with a 48 ms pause gave 64 × 100 / 48 ≈ 133:
    // each batch's fixed costs spread over a hundred operations, not a hundred thousand.
    for (const stall of [0, 1, 5, 9]) {
      assert.equal(await batchSize(timer([stall]), 100, 64), 100_000, `pause in call ${stall}`);
    }
  });
});
