import { describe, it } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { Worker } from "node:worker_threads";
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

  it("a reply received while the process was busy past a deadline is delivered before that deadline's call", async () => {
    // An echo server on its own thread answers while this one is busy, as a store does.
    const echo = new Worker(
      `const { parentPort } = require("node:worker_threads");
      const server = require("node:net").createServer((conn) => conn.pipe(conn));
      server.listen(0, "127.0.0.1", () => parentPort.postMessage(server.address().port));`,
      { eval: true },
    );
    const port = await new Promise<number>((resolve) => echo.once("message", resolve));
    const socket = net.connect(port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    const watchdog = new Watchdog(() => performance.now());
    const order: string[] = [];
    try {
      for (let trial = 0; trial < 10; trial++) {
        await new Promise<void>((done) => {
          let answered = false;
          socket.once("data", () => {
            if (!answered) order.push("reply");
            answered = true;
            done();
          });
          watchdog.watch(performance.now() + 20, () => {
            if (!answered) order.push("deadline");
            answered = true;
          });
          socket.write("x");
          // Busy past the deadline (a starved process): the reply arrives meanwhile.
          const until = performance.now() + 200;
          while (performance.now() < until) { /* busy */ }
        });
      }
    } finally {
      socket.destroy();
      await echo.terminate();
    }
    assert.deepEqual(order, Array(10).fill("reply"));
  });
});
