/** Each real store against the reference model: on the server's real clock, and Redis on a pinned one. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { commands, countersOf, ReferenceStore } from "../rate_limits/_model.ts";
import {
  checkOnce,
  connectRedis,
  freshSubject,
  openStore,
  readyStores,
  REDIS_URL,
} from "./_services.ts";
import { createRedisRateLimitStore, type RedisScriptClient } from "../../rate_limits/redis/mod.ts";

// Windows scaled ×1,000 (400 s and more): nothing expires during a run, so the
// reference at one instant predicts `allowed` and `remaining` exactly.
const SCALE = 1_000;

for (const kind of await readyStores("rate-limit model")) {
  describe(`${kind} store against the reference`, () => {
    it("agrees on allowed and remaining (cost, cost 0, all or nothing); resetMs stays in its window", async () => {
      const { store, close } = await openStore(kind);
      try {
        await fc.assert(
          fc.asyncProperty(commands, async (script) => {
            const reference = new ReferenceStore();
            const run = freshSubject("model");
            for (const command of script) {
              const counters = countersOf(
                { ...command, subject: `${run}:${command.subject}` },
                SCALE,
              );
              const expected = reference.check(counters, 0);
              const actual = await checkOnce(store, counters);
              assert.deepEqual(
                actual.map((r) => [r.allowed, r.remaining]),
                expected.map((r) => [r.allowed, r.remaining]),
              );
              actual.forEach((r, i) => {
                const most = counters[i].windowMs * 1.1 + 1; // the oldest sub-bucket leaves by then
                assert.ok(r.resetMs >= 0 && r.resetMs <= most, String(r.resetMs));
              });
            }
          }),
          { numRuns: 25 },
        );
      } finally {
        await close();
      }
    });

    it("frees units when they leave the window (real time)", async () => {
      const { store, close } = await openStore(kind);
      try {
        const counter = {
          kind: "window" as const,
          subject: freshSubject("expiry"),
          name: "short",
          limit: 2,
          windowMs: 300,
          cost: 1,
        };
        assert.equal((await checkOnce(store, [counter]))[0].allowed, true);
        assert.equal((await checkOnce(store, [counter]))[0].allowed, true);
        const denied = (await checkOnce(store, [counter]))[0];
        assert.equal(denied.allowed, false);
        assert.ok(denied.resetMs > 0 && denied.resetMs <= 331, String(denied.resetMs));
        // Every unit leaves within windowMs × 1.2 of its acceptance (its sub-bucket's end + B + 1).
        await new Promise((resolve) => setTimeout(resolve, 400));
        assert.deepEqual((await checkOnce(store, [counter]))[0].remaining, 1);
      } finally {
        await close();
      }
    });
  });
}

/**
 * A client whose scripts read `clock()` in place of the server's `TIME` (a
 * pinned clock on real Redis: the script text is the store's, but for that).
 */
function pinnedClient(client: RedisScriptClient, clock: () => number): RedisScriptClient {
  return {
    evalSha: () => Promise.reject(new Error("NOSCRIPT pinned")),
    eval: (script, call) => {
      const now = clock();
      const time = `{'${Math.floor(now / 1_000)}', '${(now % 1_000) * 1_000}'}`;
      return client.eval(script.replace("redis.call('TIME')", time), call);
    },
  };
}

if ((await readyStores("rate-limit model, pinned clock")).includes("redis")) {
  describe("redis store against the reference on a pinned clock", () => {
    it("agrees on allowed, remaining and resetMs as time moves (sub-buckets leave)", async () => {
      const client = await connectRedis(REDIS_URL!, 2_000);
      try {
        await fc.assert(
          fc.asyncProperty(commands, fc.integer({ min: 0, max: 10_000 }), async (script, start) => {
            let now = 1_750_000_000_000 + start;
            const store = createRedisRateLimitStore({
              client: pinnedClient(client as unknown as RedisScriptClient, () => now),
              prefix: `${freshSubject("pinned")}:`,
            });
            const reference = new ReferenceStore();
            for (const command of script) {
              now += command.advanceMs;
              const counters = countersOf(command);
              const expected = reference.check(counters, now);
              const { results } = await store.checkBatch([
                { counters, deadline: Date.now() + 1e9 }, // far, within a timer's range
              ]);
              assert.deepEqual(results[0], expected, `at ${now}`);
            }
            store.close();
          }),
          { numRuns: 40 },
        );
      } finally {
        await client.close();
      }
    });
  });
}
