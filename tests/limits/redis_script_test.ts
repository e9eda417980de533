/**
 * The Redis check script's writes on a real Redis, on a pinned clock: a
 * counter's expiry, and a batch mixing window-only and credit checks (the
 * script's static rules: tests/rate_limits/redis/_script_test.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { connectRedis, freshSubject, pinnedClient, readyStores, REDIS_URL } from "./_services.ts";
import { createRedisRateLimitStore, type RedisScriptClient } from "../../rate_limits/redis/mod.ts";
import type { StoreCheck } from "../../rate_limits/store.ts";

if ((await readyStores("the Redis check script")).includes("redis")) {
  describe("the check script on a real Redis", () => {
    const WINDOW = 100_000; // sub-buckets of 10 s
    const Q = 1_000_000; // a sub-bucket far from now, on the pinned clock
    const check = (subject: string, cost = 1): StoreCheck => ({
      counters: [{ kind: "window", subject, name: "api", limit: 10, windowMs: WINDOW, cost }],
      deadline: Date.now() + 60_000,
    });

    it("sets a counter's expiry when it is new or its newest sub-bucket moves, and keeps it otherwise", async () => {
      const client = await connectRedis(REDIS_URL!, 2_000);
      try {
        let now = Q * 10_000 + 1_000;
        const prefix = `${freshSubject("ttl")}:`;
        const store = createRedisRateLimitStore({
          client: pinnedClient(client as unknown as RedisScriptClient, () => now),
          prefix,
        });
        const key = `${prefix}{s}:s:api:${WINDOW}:b`;
        const pttl = async () => Number(await client.pTTL(key));
        // New: expires when sub-bucket Q leaves every window, 110 s - 1 s after now.
        await store.checkBatch([check("s")]);
        // Its newest sub-bucket, then its ring: sub-bucket Q in slot Q % 11 = 1.
        assert.equal(await client.get(key), `${Q},0,1,0,0,0,0,0,0,0,0,0`);
        const first = await pttl();
        assert.ok(first > 104_000 && first <= 109_000, `${first}`);
        // 8 s later, same sub-bucket: the same expiry kept (a refresh would make it 101 s).
        now += 8_000;
        await store.checkBatch([check("s")]);
        const kept = await pttl();
        assert.ok(kept > 104_000 && kept <= first, `${kept} after ${first}`);
        // The next sub-bucket: its expiry set anew, 120 s - 19 s after the first check's moment.
        now += 10_000;
        const [answer] = (await store.checkBatch([check("s", 2)])).results;
        assert.deepEqual(answer?.map((a) => [a.allowed, a.remaining]), [[true, 6]]);
        const moved = await pttl();
        assert.ok(moved > 96_000 && moved <= 101_000, `${moved}`);
        // A refused check writes nothing: the expiry stays.
        const [refused] = (await store.checkBatch([check("s", 7)])).results;
        assert.equal(refused?.[0].allowed, false);
        assert.ok(await pttl() <= moved);
      } finally {
        client.destroy();
      }
    });

    it("a batch answers window-only checks and credit checks in any order, credits in the same step", async () => {
      const client = await connectRedis(REDIS_URL!, 2_000);
      try {
        const store = createRedisRateLimitStore({ client: client as unknown as RedisScriptClient });
        await store.ready();
        const subject = freshSubject("mixed");
        const window = (cost: number) =>
          ({ kind: "window", subject, name: "api", limit: 3, windowMs: 60_000, cost }) as const;
        const credit = (cost: number) =>
          ({ kind: "credit", subject, name: "credits", cost, initial: 5 }) as const;
        const deadline = Date.now() + 60_000;
        const { results } = await store.checkBatch([
          { counters: [window(1)], deadline }, // no credit helpers yet
          { counters: [window(1), credit(2)], deadline }, // built here
          { counters: [credit(4)], deadline }, // 3 left: refused
          { counters: [window(1), credit(3)], deadline }, // both fit
          { counters: [window(1)], deadline }, // the window is full
        ]);
        const shape = results.map((r) => r?.map((a) => [a.allowed, a.remaining]));
        assert.deepEqual(shape, [
          [[true, 2]],
          [[true, 1], [true, 3]],
          [[false, 3]],
          [[true, 0], [true, 0]],
          [[false, 0]],
        ]);
        const [balance] = await store.readCredits([credit(0)]);
        assert.equal(balance?.remaining, 0);
        store.close();
      } finally {
        client.destroy();
      }
    });
  });
}
