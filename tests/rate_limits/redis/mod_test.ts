import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  createRedisRateLimitStore,
  type RedisScriptClient,
} from "../../../rate_limits/redis/mod.ts";

const counters = [
  { kind: "window" as const, subject: "s", name: "a", limit: 5, windowMs: 1_000, cost: 1 },
  { kind: "window" as const, subject: "s", name: "b", limit: 1, windowMs: 500, cost: 0 },
];

// The script runs on real Redis in tests/limits/; here, what the store sends.
describe("createRedisRateLimitStore", () => {
  it("sends one EVALSHA per check, falling back to EVAL once on NOSCRIPT", async () => {
    const calls: string[] = [];
    let cached = false;
    const client: RedisScriptClient = {
      evalSha: (sha, { keys, arguments: args }) => {
        calls.push(`evalsha ${sha.length} ${keys.join(",")} ${args.join(",")}`);
        return cached
          ? Promise.resolve([1, 4, 1_000, 1, 1, 0, 1_700_000_000_000])
          : Promise.reject(new Error("NOSCRIPT No matching script."));
      },
      eval: () => {
        calls.push("eval");
        cached = true;
        return Promise.resolve([1, 4, 1_000, 1, 1, 0, 1_700_000_000_000]);
      },
    };
    const store = createRedisRateLimitStore({ client, prefix: "t:" });
    const expected = [
      { allowed: true, remaining: 4, resetMs: 1_000 },
      { allowed: true, remaining: 1, resetMs: 0 },
    ];
    assert.deepEqual(await store.check(counters), expected);
    assert.deepEqual(await store.check(counters), expected);
    const sent = "evalsha 40 t:{s}:a,t:{s}:a:n,t:{s}:b,t:{s}:b:n 2,5,1000,1,1,500,0";
    assert.deepEqual(calls, [sent, "eval", sent]);
  });

  it("rejects on another error or an unexpected reply", async () => {
    const down: RedisScriptClient = {
      evalSha: () => Promise.reject(new Error("ECONNREFUSED")),
      eval: () => Promise.resolve([]),
    };
    await assert.rejects(
      createRedisRateLimitStore({ client: down }).check(counters),
      /ECONNREFUSED/,
    );
    const odd: RedisScriptClient = {
      evalSha: () => Promise.resolve("OK"),
      eval: () => Promise.resolve([]),
    };
    await assert.rejects(createRedisRateLimitStore({ client: odd }).check(counters), TypeError);
  });

  it("throws a TypeError without a client", () => {
    assert.throws(() => createRedisRateLimitStore({} as never), TypeError);
  });
});
