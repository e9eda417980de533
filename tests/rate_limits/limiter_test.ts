import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createRateLimiter, type RateLimitMetric } from "../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";
import type { RateLimitStore } from "../../rate_limits/store.ts";

const quiet = { logger: () => {} };
const api = { name: "api", limit: 3, windowMs: 60_000 };
const burst = { name: "burst", limit: 1, windowMs: 60_000 };
const failing: RateLimitStore = { check: () => Promise.reject(new Error("down")) };
const hanging: RateLimitStore = { check: () => new Promise(() => {}) };

describe("createRateLimiter", () => {
  it("defaults to the in-memory store and answers per policy", async () => {
    const limiter = createRateLimiter(quiet);
    const result = await limiter.check("k", [api, burst]);
    assert.equal(result.allowed, true);
    assert.equal(result.unavailable, false);
    assert.deepEqual(result.policies.map((p) => [p.name, p.limit, p.remaining, p.allowed]), [
      ["api", 3, 2, true],
      ["burst", 1, 0, true],
    ]);
  });

  it("consumes nothing when one policy denies (all or nothing)", async () => {
    const limiter = createRateLimiter(quiet);
    await limiter.check("k", [burst]);
    const denied = await limiter.check("k", [api, burst]);
    assert.equal(denied.allowed, false);
    assert.deepEqual(denied.policies.map((p) => [p.remaining, p.allowed]), [[3, true], [0, false]]);
    assert.equal((await limiter.check("k", [api], { cost: 0 })).policies[0].remaining, 3);
  });

  it("uses the check's cost over each policy's, and cost 0 only checks", async () => {
    const limiter = createRateLimiter(quiet);
    const weighted = { ...api, limit: 10, cost: 4 };
    assert.equal((await limiter.check("k", [weighted])).policies[0].remaining, 6);
    assert.equal((await limiter.check("k", [weighted], { cost: 1 })).policies[0].remaining, 5);
    assert.equal((await limiter.check("k", [weighted], { cost: 0 })).policies[0].remaining, 5);
  });

  it("throws a TypeError for a bad subject, policy, cost or option", async () => {
    const limiter = createRateLimiter(quiet);
    await assert.rejects(limiter.check("", [api]), TypeError);
    await assert.rejects(limiter.check("k", [{ ...api, limit: 0 }]), /"api": limit/);
    await assert.rejects(limiter.check("k", [api], { cost: -1 }), /cost/);
    assert.throws(() => createRateLimiter({ onStoreError: "maybe" as "open" }), TypeError);
    assert.throws(() => createRateLimiter({ timeoutMs: 0 }), TypeError);
    assert.throws(() => createRateLimiter({ timeoutMs: 60_001 }), TypeError);
  });

  it("names the store and the failure policy in one start-up line", () => {
    const lines: string[] = [];
    createRateLimiter({ logger: (line) => lines.push(line) });
    createRateLimiter({
      store: failing,
      onStoreError: "closed",
      timeoutMs: 80,
      logger: (l) => lines.push(l),
    });
    assert.deepEqual(lines, [
      'rate-limits: memory store; onStoreError "open": when it fails or takes over 50 ms, requests pass',
      'rate-limits: custom store; onStoreError "closed": when it fails or takes over 80 ms, requests are refused (503)',
    ]);
    assert.doesNotThrow(() =>
      createRateLimiter({
        logger: () => {
          throw new Error("x");
        },
      })
    );
  });

  it("open: a failing store lets requests through, one metric per interval", async () => {
    const metrics: RateLimitMetric[] = [];
    const limiter = createRateLimiter({
      ...quiet,
      store: failing,
      onMetric: (m) => void metrics.push(m),
      metricIntervalMs: 200,
    });
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await limiter.check("k", [api]), {
        allowed: true,
        unavailable: true,
        policies: [],
      });
    }
    assert.deepEqual(metrics, [
      { type: "rate_limit.store_unavailable", onStoreError: "open", failures: 1, reason: "error" },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 220));
    await limiter.check("k", [api]);
    assert.equal(metrics.length, 2);
    assert.equal(metrics[1].failures, 5);
  });

  it("closed: a hanging store answers unavailable within timeoutMs", async () => {
    const metrics: RateLimitMetric[] = [];
    const limiter = createRateLimiter({
      ...quiet,
      store: hanging,
      onStoreError: "closed",
      timeoutMs: 30,
      onMetric: (m) => void metrics.push(m),
    });
    const start = performance.now();
    const result = await limiter.check("k", [api]);
    const waited = performance.now() - start;
    assert.deepEqual(result, { allowed: false, unavailable: true, policies: [] });
    assert.ok(waited >= 25 && waited < 1_000, String(waited));
    assert.equal(metrics[0].reason, "timeout");
  });

  it("contains a store that throws synchronously or answers the wrong shape", async () => {
    const throwing: RateLimitStore = {
      check: () => {
        throw new Error("sync");
      },
    };
    const short: RateLimitStore = { check: () => Promise.resolve([]) };
    for (const store of [throwing, short]) {
      const result = await createRateLimiter({ ...quiet, store }).check("k", [api]);
      assert.equal(result.unavailable, true);
    }
  });

  it("contains a throwing metric sink and routes it to onMetricError", async () => {
    const errors: unknown[] = [];
    const limiter = createRateLimiter({
      ...quiet,
      store: failing,
      onMetric: () => Promise.reject(new Error("sink")),
      onMetricError: (error) => void errors.push(error),
    });
    await limiter.check("k", [api]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal((errors[0] as Error).message, "sink");
  });

  it("calls a store's checkNow in place of check, without a deadline timer; a throw or bad shape is contained", async () => {
    const inner = createMemoryRateLimitStore();
    const calls: string[] = [];
    const sync: RateLimitStore = {
      check: (c) => (calls.push("check"), inner.check(c)),
      checkNow: (c) => (calls.push("checkNow"), inner.checkNow!(c)),
    };
    const timers = globalThis.setTimeout;
    let armed = 0;
    globalThis.setTimeout =
      ((...args: Parameters<typeof setTimeout>) => (armed++, timers(...args))) as typeof setTimeout;
    try {
      const result = await createRateLimiter({ ...quiet, store: sync }).check("k", [api]);
      assert.equal(result.allowed, true);
      assert.equal(result.policies[0].remaining, api.limit - 1);
    } finally {
      globalThis.setTimeout = timers;
    }
    assert.deepEqual(calls, ["checkNow"]);
    assert.equal(armed, 0);
    const throwing: RateLimitStore = {
      check: () => Promise.resolve([]),
      checkNow: () => {
        throw new Error("sync");
      },
    };
    const short: RateLimitStore = { check: () => Promise.resolve([]), checkNow: () => [] };
    for (const store of [throwing, short]) {
      const closed = createRateLimiter({ ...quiet, store, onStoreError: "closed" });
      assert.deepEqual(await closed.check("k", [api]), {
        allowed: false,
        unavailable: true,
        policies: [],
      });
    }
  });

  it("passes every policy to the store in one call", async () => {
    const calls: number[] = [];
    const inner = createMemoryRateLimitStore();
    const counting: RateLimitStore = { check: (c) => (calls.push(c.length), inner.check(c)) };
    await createRateLimiter({ ...quiet, store: counting }).check("k", [api, burst]);
    assert.deepEqual(calls, [2]);
  });

  it("spends credits in the same check (policies may be empty) and changes them", async () => {
    const limiter = createRateLimiter(quiet);
    const credits = { initial: 2 };
    const first = await limiter.check("k", [burst], { credits });
    assert.deepEqual([first.allowed, first.credits], [true, {
      allowed: true,
      remaining: 1,
      resetMs: -1,
    }]);
    const denied = await limiter.check("k", [burst], { credits });
    assert.equal(denied.credits?.remaining, 1, "a rate-limit denial spends nothing");
    assert.equal((await limiter.check("k", [], { credits, cost: 1 })).credits?.remaining, 0);
    assert.equal((await limiter.check("k", [], { credits })).allowed, false);
    assert.equal((await limiter.changeCredits("k", credits, { add: 5 })).remaining, 5);
    const shared = { ...credits, subject: "root", name: "plan" };
    await limiter.check("old", [], { credits: shared });
    assert.equal((await limiter.check("new", [], { credits: shared })).credits?.remaining, 0);
  });

  it("throws a TypeError naming bad credits, and for a store without changeCredits", async () => {
    const limiter = createRateLimiter(quiet);
    for (
      const [credits, field] of [
        [{ initial: -1 }, /credits\.initial/],
        [{ initial: 1, refill: { amount: 1, interval: "daily", day: 3 } }, /credits\.refill\.day/],
        [{ initial: 1, name: "Bad Name" }, /credits\.name/],
        [{ initial: 1, initialAt: -5 }, /credits\.initialAt/],
      ] as const
    ) {
      await assert.rejects(limiter.check("k", [], { credits: credits as never }), field);
    }
    await assert.rejects(limiter.check("k", []), TypeError);
    assert.throws(() => limiter.changeCredits("k", { initial: 1 }, { set: -1 }), TypeError);
    const bare = createRateLimiter({ ...quiet, store: failing });
    assert.throws(
      () => bare.changeCredits("k", { initial: 1 }, { set: 1 }),
      /cannot change credits/,
    );
  });
});
