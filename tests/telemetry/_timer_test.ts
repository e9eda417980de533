import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MAX_TIMER_MS } from "../../telemetry/_timer.ts";

describe("MAX_TIMER_MS", () => {
  it("is the longest delay a timer arms: one ms more fires at once", async () => {
    const fired: number[] = [];
    const longest = setTimeout(() => fired.push(MAX_TIMER_MS), MAX_TIMER_MS);
    const past = setTimeout(() => fired.push(MAX_TIMER_MS + 1), MAX_TIMER_MS + 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    clearTimeout(longest);
    clearTimeout(past);
    assert.deepEqual(fired, [MAX_TIMER_MS + 1]);
  });
});
