/**
 * The Redis check script's writes on a real Redis, on a pinned clock: a
 * counter's expiry, and a batch mixing window-only and credit checks; a value
 * it cannot read, or an ACL user it cannot run as, failing closed; `ready()`'s
 * probe of the prefix (the script's static rules:
 * tests/rate_limits/redis/_script_test.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { connectRedis, freshSubject, pinnedClient, readyStores, REDIS_URL } from "./_services.ts";
import { createRedisRateLimitStore, type RedisScriptClient } from "../../rate_limits/redis/mod.ts";
import type { StoreCheck } from "../../rate_limits/store.ts";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { MAX_CREDITS, MAX_POLICY_LIMIT } from "../../rate_limits/_checks.ts";

/** The numbers of the window counter at `key` (`struct.unpack` on the server: its value is binary). */
async function counterAt(client: Awaited<ReturnType<typeof connectRedis>>, key: string) {
  const reply = await client.eval(
    "local n = { struct.unpack('<dddddddddddd', redis.call('GET', KEYS[1])) } " +
      "for i = 1, 12 do n[i] = tostring(n[i]) end return { unpack(n, 1, 12) }",
    { keys: [key] },
  );
  return (reply as string[]).map(Number);
}

/** Writes a counter of `numbers` (Lua expressions) at `key`, packed as the check script packs it. */
async function packCounter(
  client: Awaited<ReturnType<typeof connectRedis>>,
  key: string,
  numbers: readonly string[],
) {
  await client.eval(
    `redis.call('SET', KEYS[1], struct.pack('<dddddddddddd', ${numbers.join(", ")}))`,
    {
      keys: [key],
    },
  );
}

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
        const key = `${prefix}{s}:s:api:${WINDOW}:w`;
        const pttl = async () => Number(await client.pTTL(key));
        // New: expires when sub-bucket Q leaves every window, 110 s - 1 s after now.
        await store.checkBatch([check("s")]);
        // Its newest sub-bucket, then its ring: sub-bucket Q in slot Q % 11 = 1; 96 bytes.
        assert.deepEqual(await counterAt(client, key), [Q, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert.equal(await client.strLen(key), 96);
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

    it("fails closed on a counter or balance it cannot parse: a TypeError, nothing written, never allowed", async () => {
      const client = await connectRedis(REDIS_URL!, 2_000);
      try {
        const prefix = `${freshSubject("garbage")}:`;
        const store = createRedisRateLimitStore({
          client: client as unknown as RedisScriptClient,
          prefix,
        });
        await store.ready();
        // The default failure policy passes requests: a bug must not.
        const limiter = createRateLimiter({ store, logger: () => {} });
        const deadline = Date.now() + 60_000;
        const window = {
          kind: "window",
          subject: "s",
          name: "api",
          limit: 10,
          windowMs: WINDOW,
          cost: 1,
        } as const;
        const credit = {
          kind: "credit",
          subject: "s",
          name: "credits",
          cost: 1,
          initial: 5,
        } as const;
        const windowKey = `${prefix}{s}:s:api:${WINDOW}:w`;
        const creditKey = `${prefix}{s}:credits:c`;
        const refuses = async (what: string) => {
          await assert.rejects(
            store.checkBatch([{ counters: [window, credit], deadline }]),
            TypeError,
            what,
          );
          await assert.rejects(
            Promise.resolve(limiter.check("s", [{ name: "api", limit: 10, windowMs: WINDOW }])),
            TypeError,
            what,
          );
        };
        // Text (the earlier layout), a wrong length, then 96 bytes whose numbers are no counter's.
        for (const garbage of ["not a counter", "1,2,3", `${Q},0,1,0,0,0,0,0,0,0,0,0`]) {
          await client.set(windowKey, garbage);
          await refuses(garbage);
          assert.equal(await client.get(windowKey), garbage, "left as it was");
          assert.equal(await client.exists(creditKey), 0, "the balance was not spent");
        }
        const ring = (slot: string) => [String(Q), slot, ...Array(10).fill("0")];
        const head = (newest: string) => [newest, ...ring("0").slice(1)];
        for (
          const numbers of [
            ring("-1"),
            ring("0.5"),
            ring("1/0"),
            ring("0/0"),
            head("0.5"),
            // Whole numbers no counter holds: more units than any limit, a sub-bucket before the
            // epoch or past a Date's range (its expiry could not be set).
            ring(String(MAX_POLICY_LIMIT + 1)),
            ring("1e300"),
            head("-1"),
            head("1e300"),
          ]
        ) {
          await packCounter(client, windowKey, numbers);
          const packed = await counterAt(client, windowKey);
          await refuses(numbers.join());
          assert.deepEqual(await counterAt(client, windowKey), packed, "left as it was");
          assert.equal(await client.exists(creditKey), 0, "the balance was not spent");
        }
        await client.del(windowKey);
        for (
          const garbage of [
            { b: "lots", at: "1" },
            { b: "3", at: "then" },
            { b: "3" },
            // Text Lua's tonumber reads, but no balance or time: infinite, not a number, past the
            // range, negative, fractional.
            { b: "inf", at: "1" },
            { b: "nan", at: "1" },
            { b: "1e400", at: "1" },
            { b: "-inf", at: "1" },
            { b: "-1", at: "1" },
            { b: "5.5", at: "1" },
            { b: String(MAX_CREDITS + 1), at: "1" },
            { b: "3", at: "inf" },
            { b: "3", at: "-1" },
            { b: "3", at: "0.5" },
            { b: "3", at: "8640000000000001" },
          ] as Record<string, string>[]
        ) {
          await client.del(creditKey);
          await client.hSet(creditKey, garbage);
          await assert.rejects(
            store.checkBatch([{ counters: [window, credit], deadline }]),
            TypeError,
          );
          await assert.rejects(store.changeCredits(credit, { add: 1 }, deadline), TypeError);
          await assert.rejects(store.readCredits([credit]), TypeError);
          assert.deepEqual(await client.hGetAll(creditKey), garbage, "left as it was");
          assert.equal(await client.exists(windowKey), 0, "the window was not counted");
        }
        // A batch whose later check meets an unreadable counter or balance writes nothing of the batch:
        // the error answers every check of it (the failure policy), so none of them is counted.
        const okWindowKey = `${prefix}{ok}:ok:api:${WINDOW}:w`;
        const okCreditKey = `${prefix}{ok}:credits:c`;
        const ok = [{ ...window, subject: "ok" }, { ...credit, subject: "ok" }];
        const corrupt = {
          [windowKey]: () => client.set(windowKey, "not a counter"),
          [creditKey]: () => client.hSet(creditKey, { b: "lots", at: "1" }),
        };
        for (const [key, write] of Object.entries(corrupt)) {
          await client.del([windowKey, creditKey]);
          await write();
          await assert.rejects(
            store.checkBatch([
              { counters: ok, deadline },
              { counters: ok, deadline },
              { counters: [window, credit], deadline },
            ]),
            TypeError,
            key,
          );
          assert.equal(await client.exists([okWindowKey, okCreditKey]), 0, "nothing of the batch");
        }
        await client.del([windowKey, creditKey]);
        // A value of another type at a counter's key: the same.
        await client.del(creditKey);
        await client.hSet(windowKey, { a: "1" });
        await refuses("a hash");
        store.close();
      } finally {
        client.destroy();
      }
    });

    it("a user whose ACL lacks the prefix's keys: ready() and every check reject with a TypeError, never an open pass; one denied a command the script runs: that check rejects, counting nothing", async () => {
      const admin = await connectRedis(REDIS_URL!, 2_000);
      const password = crypto.randomUUID();
      const outsider = `rl-acl-${crypto.randomUUID()}`;
      const noHmget = `rl-acl-${crypto.randomUUID()}`;
      const prefix = `${freshSubject("acl")}:`;
      const clients: Awaited<ReturnType<typeof connectRedis>>[] = [];
      /** A store on a client logged in as `user`, and a limiter failing open over it. */
      const as = async (user: string) => {
        const url = new URL(REDIS_URL!);
        url.username = user;
        url.password = password;
        const client = await connectRedis(url.href, 2_000);
        clients.push(client);
        const store = createRedisRateLimitStore({
          client: client as unknown as RedisScriptClient,
          prefix,
          logger: () => {},
        });
        return { store, limiter: createRateLimiter({ store, logger: () => {} }) };
      };
      const policy = [{ name: "api", limit: 10, windowMs: WINDOW }];
      try {
        await admin.sendCommand(
          ["ACL", "SETUSER", outsider, "on", `>${password}`, "~elsewhere:*", "+@all"],
        );
        await admin.sendCommand(
          ["ACL", "SETUSER", noHmget, "on", `>${password}`, `~${prefix}*`, "+@all", "-hmget"],
        );
        const outside = await as(outsider);
        await assert.rejects(
          outside.store.ready(),
          (e) => e instanceof TypeError && /NOPERM/.test(e.message),
        );
        await assert.rejects(outside.limiter.ready(), TypeError);
        for (let i = 0; i < 3; i++) {
          await assert.rejects(Promise.resolve(outside.limiter.check("s", policy)), TypeError);
          await assert.rejects(
            Promise.resolve(outside.limiter.check("s", policy, { credits: { initial: 0 } })),
            TypeError,
          );
        }
        // Allowed the keys, denied HMGET: start-up and window checks run; a credit check's script
        // fails as it runs (Redis answers ERR, not NOPERM), before anything of it is written.
        const denied = await as(noHmget);
        await denied.store.ready();
        assert.equal((await denied.limiter.check("s", policy)).policies[0].remaining, 9);
        await assert.rejects(
          Promise.resolve(denied.limiter.check("s", policy, { credits: { initial: 5 } })),
          (e) => e instanceof TypeError && /can't run this command/.test(e.message),
        );
        assert.equal((await denied.limiter.check("s", policy)).policies[0].remaining, 8);
        assert.equal(await admin.exists(`${prefix}{s}:credits:c`), 0);
      } finally {
        for (const client of clients) client.destroy();
        await admin.sendCommand(["ACL", "DELUSER", outsider, noHmget]);
        admin.destroy();
      }
    });

    it("ready() runs the check script once on one key under the prefix, past its deadline: nothing there read or written", async () => {
      const client = await connectRedis(REDIS_URL!, 2_000);
      try {
        const prefix = `${freshSubject("probe")}:`;
        const keys: string[][] = [];
        const recording: RedisScriptClient = {
          evalSha: (sha, call) => (keys.push(call.keys), client.evalSha(sha, call)),
          eval: (script, call) => (keys.push(call.keys), client.eval(script, call)),
        };
        const store = createRedisRateLimitStore({ client: recording, prefix });
        await store.ready();
        const probed = [...new Set(keys.flat())];
        assert.equal(probed.length, 1);
        assert.ok(probed[0].startsWith(prefix), probed[0]);
        assert.equal(await client.exists(probed[0]), 0, "nothing written");
        // A value no script can read there: ready() still resolves, and leaves it as it is.
        await client.set(probed[0], "not a counter");
        await store.ready();
        assert.equal(await client.get(probed[0]), "not a counter");
        assert.equal(await client.pTTL(probed[0]), -1);
        await client.del(probed[0]);
        store.close();
      } finally {
        client.destroy();
      }
    });
  });
}
