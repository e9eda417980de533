import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  connectRedis,
  freshSubject,
  pinnedClient,
  readyStores,
  REDIS_URL,
} from "../../limits/_services.ts";
import {
  createRedisRateLimitStore,
  type RedisScriptClient,
} from "../../../rate_limits/redis/mod.ts";
import type { StoreCheck } from "../../../rate_limits/store.ts";
import {
  CHANGE_SCRIPT,
  CHECK_SCRIPT,
  CREDIT_LUA,
  READ_SCRIPT,
  TIME_SCRIPT,
} from "../../../rate_limits/redis/_script.ts";

// Behaviour is proven on real Redis (tests/limits/stores_test.ts); here, the rules the scripts keep.
describe("the Redis scripts", () => {
  it("read only the server's clock and touch only the keys they are given", () => {
    for (const script of [CHECK_SCRIPT, CHANGE_SCRIPT, READ_SCRIPT]) {
      assert.match(script, /redis\.call\('TIME'\)/);
      const calls = [...script.matchAll(/redis\.call\('(\w+)', ([\w.]+)/g)].map((m) => m[2]);
      assert.ok(calls.length > 1);
      assert.ok(calls.every((target) => ["w.key", "key"].includes(target)), calls.join());
    }
    assert.match(TIME_SCRIPT, /redis\.call\('TIME'\)/);
  });

  it("name each input in a commented local, never by index arithmetic", () => {
    for (const script of [CHECK_SCRIPT, CHANGE_SCRIPT, READ_SCRIPT]) {
      assert.doesNotMatch(script, /(ARGV|KEYS)\[[^\]]*[-+*][^\]]*\]/);
      for (const line of script.split("\n").filter((l) => /= (tonumber\()?(arg|key)\(\)/.test(l))) {
        assert.match(line, /-- \S/, line);
      }
    }
  });

  it("a check reads and writes each window counter once: one GET (none when its batch read it), and one SET when it consumes", () => {
    const windows = CHECK_SCRIPT.slice(CREDIT_LUA.length);
    const calls = [...windows.matchAll(/redis\.call\('(\w+)', (w\.)?key/g)].map((m) => m[1]);
    assert.deepEqual(calls, ["GET", "SET", "SET"]);
    // The two SETs are the branches of one if: PX when the expiry moves, KEEPTTL otherwise.
    assert.match(
      windows,
      /if c\.moved then[^]*'SET', w\.key, written, 'PX', ttl\)[^]*else\s+redis\.call\('SET', w\.key, written, 'KEEPTTL'\)\s+end/,
    );
    // The batch's copy is looked up before the GET.
    assert.ok(windows.indexOf("counters[key]") < windows.indexOf("redis.call('GET', key)"));
    assert.doesNotMatch(CHECK_SCRIPT, /LRANGE|RPUSH|LTRIM/);
  });

  it("builds the credit helpers only for a batch with a credit counter, once", () => {
    const windows = CHECK_SCRIPT.slice(CREDIT_LUA.length);
    const builds = windows.split("\n").filter((line) => line.includes("credit_helpers()"));
    assert.deepEqual(builds, [
      "    if n_credits > 0 and balance == nil then balance, save = credit_helpers() end",
    ]);
    // Nothing of the credit helpers is a closure of the script's own body.
    const prelude = CREDIT_LUA.slice(0, CREDIT_LUA.indexOf("local function credit_helpers()"));
    assert.doesNotMatch(prelude, /function (days|civil|boundary|period|balance|save)\(/);
  });

  it("the read script writes nothing", () => {
    const body = READ_SCRIPT.slice(READ_SCRIPT.indexOf("local out = {}"));
    assert.doesNotMatch(body, /save\(|HSET|SET'|DEL|EXPIRE/);
  });
});

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
