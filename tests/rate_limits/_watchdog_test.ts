import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Watchdog } from "../../rate_limits/_watchdog.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("Watchdog", () => {
  it("calls each due deadline once, in time, never a cancelled one, and contains a throw", async () => {
    const watchdog = new Watchdog(() => performance.now());
    const called: string[] = [];
    const start = performance.now();
    watchdog.watch(start + 60, () => called.push("late"));
    watchdog.watch(start + 20, () => {
      called.push("early");
      throw new Error("a caller's bug");
    });
    const cancelled = watchdog.watch(start + 10, () => called.push("cancelled"));
    watchdog.cancel(cancelled);
    watchdog.cancel(cancelled);
    assert.equal(watchdog.size, 2);
    await sleep(40);
    assert.deepEqual(called, ["early"]);
    await sleep(60);
    assert.deepEqual(called, ["early", "late"]);
    assert.equal(watchdog.size, 0);
  });

  it("arms one timer for deadlines that come later than the armed one", async () => {
    const timers = globalThis.setTimeout;
    let armed = 0;
    globalThis.setTimeout =
      ((...args: Parameters<typeof setTimeout>) => (armed++, timers(...args))) as typeof setTimeout;
    const watchdog = new Watchdog(() => performance.now());
    let due = 0;
    try {
      for (let i = 0; i < 100; i++) {
        watchdog.cancel(watchdog.watch(performance.now() + 20 + i, () => due++));
      }
      watchdog.watch(performance.now() + 30, () => due++);
    } finally {
      globalThis.setTimeout = timers;
    }
    assert.equal(armed, 1);
    await sleep(80);
    assert.equal(due, 1);
  });
});
