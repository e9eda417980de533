import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  createRateLimiter,
  type RateLimiterMetric,
  type RateLimitMetric,
} from "../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";
import { compileRateLimitPolicies } from "../../rate_limits/policy.ts";
import type { CounterResult, CreditBalance, RateLimitStore } from "../../rate_limits/store.ts";
import { FakeRemoteStore } from "./_fake_store.ts";
import { type LimiterTaps, tapsOf } from "../../telemetry/_taps.ts";

const quiet = { logger: () => {} };
const api = { name: "api", limit: 3, windowMs: 60_000 };
const burst = { name: "burst", limit: 1, windowMs: 60_000 };
const failing: RateLimitStore = { checkBatch: () => Promise.reject(new Error("down")) };
const hanging: RateLimitStore = { checkBatch: () => new Promise(() => {}) };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const until = async (done: () => boolean) => {
  for (let i = 0; i < 500 && !done(); i++) await sleep(10);
  assert.ok(done(), "condition not reached in 5 s");
};

describe("createRateLimiter", () => {
  it("defaults to the in-memory store and answers per policy, outcome store", async () => {
    const limiter = createRateLimiter(quiet);
    const result = await limiter.check("k", [api, burst]);
    assert.equal(result.allowed, true);
    assert.equal(result.unavailable, false);
    assert.equal(result.outcome, "store");
    assert.equal(result.reason, undefined);
    assert.deepEqual(result.policies.map((p) => [p.name, p.limit, p.remaining, p.allowed]), [
      ["api", 3, 2, true],
      ["burst", 1, 0, true],
    ]);
  });

  it("each policy result names its window (windowMs), so a caller need not copy it in", async () => {
    const limiter = createRateLimiter(quiet);
    const result = await limiter.check("k", [api, { ...burst, windowMs: 1_000 }]);
    assert.deepEqual(result.policies.map((p) => p.windowMs), [60_000, 1_000]);
    const local = createRateLimiter({
      ...quiet,
      store: failing,
      onStoreError: "local",
      instances: 1,
    });
    assert.deepEqual((await local.check("k", [api])).policies.map((p) => p.windowMs), [60_000]);
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

  it("throws a TypeError for a bad subject, policy, cost or option, whatever the failure policy", async () => {
    for (const onStoreError of ["open", "closed"] as const) {
      const limiter = createRateLimiter({ ...quiet, onStoreError, store: failing });
      await assert.rejects(limiter.check("", [api]), TypeError);
      await assert.rejects(limiter.check("k".repeat(513), [api]), TypeError);
      // A brace would make two subjects one Redis key (a hash tag's delimiter): refused everywhere.
      for (const subject of ["acme}:alice", "{k}", "k{"]) {
        await assert.rejects(limiter.check(subject, [api]), /must not contain \{ or \}/);
        await assert.rejects(
          limiter.check("k", [], { credits: { initial: 5, subject } }),
          /must not contain \{ or \}/,
        );
      }
      // A lone surrogate: the remote stores would count user-\uD800 and user-\uDC00 as user-\uFFFD.
      for (const subject of ["user-\uD800", "user-\uDC00"]) {
        await assert.rejects(limiter.check(subject, [api]), /lone surrogate/);
        await assert.rejects(limiter.check("k", [api], { slot: subject }), /lone surrogate/);
      }
      await assert.rejects(limiter.check("k", [{ ...api, limit: 0 }]), /"api": limit/);
      // A hole in `subjects` is no subject (a loop skipping it would count every check apart).
      await assert.rejects(
        limiter.check("k", [api], { subjects: [,] as unknown as string[] }),
        /subject/,
      );
      await assert.rejects(limiter.check("k", [api], { cost: -1 }), /cost/);
      await assert.rejects(limiter.check("k", [api], { cost: 1e15 + 1 }), /cost must be at most/);
      await assert.rejects(limiter.check("k", [{ ...api, windowMs: 10 }]), /subSecond/);
      await assert.rejects(
        limiter.check("k", [api, { ...api, windowMs: 3_600_000 }]),
        /one name counts one window/,
      );
    }
    // Compiled policies passed again are not looked up; other policies still are, after them.
    const limiter = createRateLimiter({ ...quiet });
    const compiled = compileRateLimitPolicies([api]);
    await assert.rejects(limiter.check("k", undefined as never), /policies must be a list/);
    assert.equal((await limiter.check("k", compiled)).allowed, true);
    for (const bad of [undefined, [], [{ ...api, limit: 0 }]]) {
      await assert.rejects(
        limiter.check("k", bad as never),
        /rate-limit policies must be a list|"api": limit/,
      );
    }
    assert.equal((await limiter.check("k", compiled)).policies[0].remaining, api.limit - 2);
    assert.throws(() => createRateLimiter({ onStoreError: "maybe" as "open" }), TypeError);
    assert.throws(() => createRateLimiter({ timeoutMs: 0 }), TypeError);
    assert.throws(() => createRateLimiter({ timeoutMs: 60_001 }), TypeError);
    assert.equal(createRateLimiter({ timeoutMs: 250 }).timeoutMs, 250);
    assert.equal(createRateLimiter().timeoutMs, 1_000);
  });

  it("frozen options passed again keep their check; passed with another subject or policies they are checked anew, the counts of each apart", async () => {
    const limiter = createRateLimiter(quiet);
    const compiled = compileRateLimitPolicies([api]);
    const other = compileRateLimitPolicies([{ ...api, name: "other" }]);
    const options = Object.freeze({ cost: 1 });
    const remaining = async (subject: string, policies = compiled) =>
      (await limiter.check(subject, policies, options)).policies[0].remaining;
    assert.deepEqual(
      [
        await remaining("a"),
        await remaining("a"),
        await remaining("b"),
        await remaining("a"),
        await remaining("b", other),
        await remaining("b"),
      ],
      [2, 1, 2, 0, 2, 1],
    );
    await assert.rejects(limiter.check("", compiled, options), TypeError);
    assert.equal((limiter.checkNow!("a", compiled, options)).allowed, false);
  });

  it("refuses unknown options naming them", () => {
    assert.throws(
      () => createRateLimiter({ ...quiet, timeout: 50 } as never),
      /^TypeError: createRateLimiter: unknown option `timeout`/,
    );
    assert.throws(() => createRateLimiter("open" as never), /options must be an object/);
  });

  it("refuses a function option that is not a function, naming it (a logger string drops every outage line)", () => {
    for (const name of ["logger", "onMetric", "onMetricError"]) {
      for (const value of ["console.warn", 5, null, {}]) {
        assert.throws(
          () => createRateLimiter({ ...quiet, [name]: value } as never),
          new RegExp(`^TypeError: createRateLimiter: ${name} must be a function$`),
          `${name}: ${JSON.stringify(value)}`,
        );
      }
    }
    createRateLimiter({ logger: () => {}, onMetric: () => {}, onMetricError: undefined });
  });

  it("refuses an unknown check option naming it (a misspelt cost counted 1), kept options too, and counts nothing", async () => {
    const limiter = createRateLimiter(quiet);
    const policies = compileRateLimitPolicies([api]);
    const unknown =
      /^TypeError: check: unknown option `costs` \(known: cost, subjects, credits, slot\)/;
    await assert.rejects(limiter.check("s", policies, { costs: 5 } as never), unknown);
    assert.throws(() => limiter.checkNow!("s", policies, { costs: 5 } as never), unknown);
    const kept = Object.freeze({ cost: 1, slot: "t", costs: 5 });
    for (let i = 0; i < 2; i++) {
      await assert.rejects(limiter.check("s", policies, kept as never), unknown);
    }
    assert.equal((await limiter.check("s", policies)).policies[0].remaining, 2);
  });

  it("refuses at construction an object that is not a store, saying what to pass", () => {
    const cases: [unknown, RegExp][] = [
      [
        { evalSha() {}, connect() {}, isOpen: false },
        /Redis client: pass createRedisRateLimitStore/,
      ],
      [
        { query() {}, connect() {} },
        /PostgreSQL pool or client: pass createPostgresRateLimitStore/,
      ],
      [{ check() {} }, /check\(counters\) of the old contract: implement checkBatch/],
      [createRateLimiter(quiet), /this is a rate limiter/],
      [{}, /no checkBatch/],
      [null, /must be a rate-limit store/],
    ];
    for (const [store, message] of cases) {
      assert.throws(
        () => createRateLimiter({ ...quiet, store: store as RateLimitStore }),
        (error: Error) => error instanceof TypeError && message.test(error.message),
        String(message),
      );
    }
  });

  it("names the store, the failure policy and the 1,000 ms default timeout in one start-up line", () => {
    const lines: string[] = [];
    createRateLimiter({ logger: (line) => lines.push(line) });
    createRateLimiter({
      store: failing,
      onStoreError: "closed",
      timeoutMs: 80,
      logger: (l) => lines.push(l),
    });
    createRateLimiter({
      store: failing,
      onStoreError: "local",
      instances: 4,
      logger: (l) => lines.push(l),
    });
    assert.deepEqual(lines, [
      'rate-limits: memory store; onStoreError "open": when it fails or takes over 1000 ms, requests pass',
      'rate-limits: custom store; onStoreError "closed": when it fails or takes over 80 ms, requests are refused (503)',
      'rate-limits: custom store; onStoreError "local": when it fails or takes over 1000 ms, each policy is enforced per instance at limit / 4, credit spends are refused',
    ]);
    assert.doesNotThrow(() =>
      createRateLimiter({
        logger: () => {
          throw new Error("x");
        },
      })
    );
  });

  it("open: a failing store lets requests through (outcome and reason say so), one metric per interval", async () => {
    const metrics: RateLimitMetric[] = [];
    const limiter = createRateLimiter({
      ...quiet,
      store: failing,
      onMetric: (m) => void (m.type === "rate_limit.store_unavailable" && metrics.push(m)),
      metricIntervalMs: 200,
    });
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await limiter.check("k", [api]), {
        allowed: true,
        unavailable: true,
        outcome: "open",
        reason: "error",
        policies: [],
      });
    }
    assert.deepEqual(metrics, [
      { type: "rate_limit.store_unavailable", onStoreError: "open", failures: 1, reason: "error" },
    ]);
    await sleep(220);
    assert.equal(metrics.length, 2, "the interval's other failures, at its end");
    assert.equal(metrics[1].failures, 4);
    await limiter.check("k", [api]);
    await sleep(220);
    assert.deepEqual(metrics.map((m) => m.failures), [1, 4, 1], "every failure reported once");
  });

  it("logs every answer by the failure policy by default, at most one line per metricIntervalMs, and when the store answers again", async () => {
    const lines: string[] = [];
    const store = new FakeRemoteStore();
    store.failing = new Error("ECONNREFUSED");
    const limiter = createRateLimiter({
      store,
      metricIntervalMs: 150,
      logger: (line) => lines.push(line),
    });
    for (let i = 0; i < 3; i++) await limiter.check("k", [api]);
    assert.deepEqual(lines.slice(1), [
      'rate-limits: the fake store is unavailable (error): 1 check answered by onStoreError "open" (passed uncounted) since the last line',
    ]);
    await sleep(170);
    assert.equal(
      lines[2],
      'rate-limits: the fake store is unavailable (error): 2 checks answered by onStoreError "open" (passed uncounted) since the last line',
      "the interval's other failures, at its end",
    );
    await limiter.check("k", [api]);
    store.failing = undefined;
    await limiter.check("k", [api]);
    await limiter.check("k", [api]);
    assert.equal(lines.length, 3, "the last failure waits for its interval's end");
    await sleep(170);
    assert.deepEqual(lines.slice(3), [
      'rate-limits: the fake store is unavailable (error): 1 check answered by onStoreError "open" (passed uncounted) since the last line',
      "rate-limits: the fake store answers again",
    ]);
  });

  it("an outage's failures are all reported by its interval's end (not with a later outage), and the log never ends on a failure while the store answers", async () => {
    const lines: string[] = [];
    const metrics: RateLimiterMetric[] = [];
    const store = new FakeRemoteStore();
    const limiter = createRateLimiter({
      store,
      onStoreError: "closed",
      metricIntervalMs: 100,
      logger: (line) => lines.push(line),
      onMetric: (m) => void (m.type === "rate_limit.store_unavailable" && metrics.push(m)),
    });
    const failed = (n: number) =>
      metrics.reduce(
        (sum, m) => sum + (m.type === "rate_limit.store_unavailable" ? m.failures : 0),
        0,
      ) ===
        n;
    let refused = 0;
    const round = async (failing: boolean, checks: number) => {
      store.failing = failing ? new Error("ECONNRESET") : undefined;
      for (let i = 0; i < checks; i++) {
        if ((await limiter.check("k", [api])).unavailable) refused++;
      }
    };
    // An outage of 280 checks, then the store answers: all 280 reported within one interval.
    await round(true, 280);
    await round(false, 3);
    await sleep(150);
    assert.equal(refused, 280);
    assert.ok(failed(280), JSON.stringify(metrics));
    assert.equal(lines.at(-1), "rate-limits: the fake store answers again");
    // A flapping store: failure, recovery, failure past the interval, recovery within it.
    await round(true, 1);
    await round(false, 1);
    await sleep(110);
    await round(true, 5);
    await round(false, 1);
    await sleep(150);
    assert.equal(refused, 286);
    assert.ok(failed(286), JSON.stringify(metrics));
    assert.equal(lines.at(-1), "rate-limits: the fake store answers again", lines.join("\n"));
    const kinds = lines.slice(1).map((line) => line.endsWith("answers again") ? "up" : "down");
    assert.ok(
      kinds.every((kind, i) => kind === "down" || kinds[i - 1] === "down"),
      "no recovery line twice",
    );
  });

  it("closed: a hanging store answers unavailable within timeoutMs", async () => {
    const metrics: RateLimiterMetric[] = [];
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
    assert.deepEqual(result, {
      allowed: false,
      unavailable: true,
      outcome: "closed",
      reason: "timeout",
      policies: [],
    });
    assert.ok(waited >= 25 && waited < 1_000, String(waited));
    assert.equal((metrics[0] as RateLimitMetric).reason, "timeout");
  });

  it("a store bug or a malformed reply is an error naming its cause, never an open pass", async () => {
    const stores: [RateLimitStore, RegExp][] = [
      [{
        name: "redis",
        checkBatch: () => Promise.reject(new TypeError("client is not connected")),
      }, /redis store failed \(TypeError: client is not connected\)/],
      [{ name: "redis", checkBatch: () => Promise.resolve({ results: [] }) }, /malformed/],
      [{
        checkBatch: () => Promise.reject(new Error("unused")),
        checkNow: () => {
          throw new TypeError("bug");
        },
      }, /custom store failed \(TypeError: bug\)/],
      [{ checkBatch: () => Promise.reject(new Error("unused")), checkNow: () => [] }, /malformed/],
    ];
    for (const [store, message] of stores) {
      const limiter = createRateLimiter({ ...quiet, store, onStoreError: "open" });
      await assert.rejects(
        limiter.check("k", [api]),
        (error: Error) => error instanceof TypeError && message.test(error.message),
      );
    }
  });

  it("defaults stay exact under a burst: 4 limiters over one remote store × 1,000 concurrent checks of one key admit the limit, none by the failure policy, credits spent = admitted", async () => {
    const store = new FakeRemoteStore();
    store.requestDelayMs = 2;
    const policy = { name: "api", limit: 100, windowMs: 60_000 };
    const credits = { initial: 150 };
    const results = (await Promise.all(Array.from({ length: 4 }, () => {
      const limiter = createRateLimiter({ ...quiet, store });
      return Promise.all(
        Array.from({ length: 1_000 }, () => limiter.check("key", [policy], { credits })),
      );
    }))).flat();
    assert.equal(results.filter((r) => r.outcome !== "store").length, 0);
    assert.equal(results.filter((r) => r.allowed).length, 100);
    const [balance] = await store.inner.readCredits([{
      kind: "credit",
      subject: "key",
      name: "credits",
      cost: 0,
      initial: 150,
    }]);
    assert.equal(balance?.remaining, 50);
    assert.ok(store.calls <= 40, `${store.calls} store calls for 4,000 checks`);
  });

  it("remembers a refusal by a remote store: the same compiled policies or frozen options of a subject are refused again without it, resets counted down, also while it fails; other checks reach it", async () => {
    const store = new FakeRemoteStore();
    const limiter = createRateLimiter({ ...quiet, store });
    const compiled = compileRateLimitPolicies([burst]);
    assert.equal((await limiter.check("k", compiled)).allowed, true);
    const first = await limiter.check("k", compiled);
    assert.equal(first.allowed, false);
    const calls = store.calls;
    await sleep(5);
    const again = await limiter.check("k", compiled);
    assert.equal(store.calls, calls, "answered without the store");
    assert.deepEqual(
      [again.allowed, again.unavailable, again.outcome, again.policies[0].remaining],
      [false, false, "store", 0],
    );
    assert.ok(again.policies[0].resetMs < first.policies[0].resetMs, "counted down");
    store.failing = new Error("ECONNREFUSED");
    assert.equal(
      (await limiter.check("k", compiled)).outcome,
      "store",
      "still refused, not passed",
    );
    store.failing = undefined;
    assert.equal(store.calls, calls);
    // Another subject, inline policies, and a changed limit each reach the store.
    assert.equal((await limiter.check("other", compiled)).allowed, true);
    assert.equal((await limiter.check("k", [burst])).allowed, false);
    const raised = compileRateLimitPolicies([{ ...burst, limit: 5 }]);
    assert.equal((await limiter.check("k", raised)).allowed, true);
    assert.equal(store.calls, calls + 3);
    // Two compiled lists of one subject, in turn: each refusal remembered.
    const other = compileRateLimitPolicies([{ ...burst, name: "other" }]);
    await limiter.check("t", compiled);
    await limiter.check("t", other);
    await limiter.check("t", compiled);
    await limiter.check("t", other);
    const turns = store.calls;
    for (let i = 0; i < 3; i++) {
      assert.equal((await limiter.check("t", compiled)).allowed, false);
      assert.equal((await limiter.check("t", other)).allowed, false);
    }
    assert.equal(store.calls, turns);
    // Frozen options: a refusal on a policy is remembered, with the balance it answered.
    const spend = Object.freeze({ credits: Object.freeze({ initial: 100 }) });
    assert.equal((await limiter.check("f", compiled, spend)).allowed, true);
    assert.equal((await limiter.check("f", compiled, spend)).allowed, false);
    const spent = store.calls;
    const remembered = await limiter.check("f", compiled, spend);
    assert.deepEqual([remembered.allowed, remembered.credits?.remaining], [false, 99]);
    assert.equal(store.calls, spent);
    // A refusal on credits alone is not: a balance can be topped up at any time.
    const broke = Object.freeze({ credits: Object.freeze({ initial: 0 }) });
    const none = compileRateLimitPolicies([api]);
    for (let i = 0; i < 3; i++) {
      assert.equal((await limiter.check("c", none, broke)).allowed, false);
    }
    assert.equal(store.calls, spent + 3);
  });

  it("refusalMemory 0 sends every refused check to the store; a bad value is a TypeError", async () => {
    const store = new FakeRemoteStore();
    const limiter = createRateLimiter({ ...quiet, store, refusalMemory: 0 });
    const compiled = compileRateLimitPolicies([burst]);
    for (let i = 0; i < 4; i++) await limiter.check("k", compiled);
    assert.equal(store.calls, 4);
    for (const bad of [-1, 1.5, 1_000_001, "10"]) {
      assert.throws(
        () => createRateLimiter({ ...quiet, refusalMemory: bad as number }),
        /refusalMemory/,
      );
    }
  });

  it("closed with credits: a check the store got past its deadline is refused and spends nothing, also later", async () => {
    const store = new FakeRemoteStore();
    store.requestDelayMs = 300;
    const limiter = createRateLimiter({ ...quiet, store, onStoreError: "closed", timeoutMs: 100 });
    const credits = { initial: 5 };
    const results = await Promise.all(
      Array.from({ length: 20 }, () => limiter.check("k", [api], { credits })),
    );
    assert.ok(results.every((r) => !r.allowed && r.outcome === "closed"));
    await until(() => store.pending === 0);
    assert.equal(store.appliedAt.size, 0);
    const [balance] = await store.inner.readCredits([{
      kind: "credit",
      subject: "k",
      name: "credits",
      cost: 0,
      initial: 5,
    }]);
    assert.equal(balance?.remaining, 5, "no balance was ever spent");
    assert.equal(store.inner.size, 0, "nor made");
    store.requestDelayMs = 0;
    const after = await limiter.check("k", [api], { credits });
    assert.equal(after.credits?.remaining, 4, "nothing replayed on recovery");
    assert.equal(after.policies[0].remaining, 2);
  });

  it("local: while the store fails, each policy holds per instance at floor(limit / instances), credits are refused, the metric says local; the store counts again after", async () => {
    const store = new FakeRemoteStore();
    store.failing = new Error("down");
    const metrics: RateLimiterMetric[] = [];
    const limiter = createRateLimiter({
      ...quiet,
      store,
      onStoreError: "local",
      instances: 4,
      onMetric: (m) => void metrics.push(m),
    });
    const policy = { name: "api", limit: 10, windowMs: 60_000 };
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await limiter.check("k", [policy]));
    assert.deepEqual(answers.map((a) => [a.allowed, a.outcome, a.reason]), [
      [true, "local", "error"],
      [true, "local", "error"],
      [false, "local", "error"],
      [false, "local", "error"],
      [false, "local", "error"],
    ]);
    assert.deepEqual(answers[2].policies.map((p) => [p.name, p.limit, p.remaining, p.allowed]), [
      ["api", 2, 0, false],
    ]);
    assert.ok(answers.every((a) => a.unavailable));
    const spend = await limiter.check("k", [], { credits: { initial: 100 } });
    assert.deepEqual(spend, {
      allowed: false,
      unavailable: true,
      outcome: "local",
      reason: "error",
      policies: [],
    });
    assert.deepEqual(metrics.find((m) => m.type === "rate_limit.store_unavailable"), {
      type: "rate_limit.store_unavailable",
      onStoreError: "local",
      failures: 1,
      reason: "error",
    });
    store.failing = undefined;
    const back = await limiter.check("k", [policy]);
    assert.deepEqual([back.outcome, back.policies[0].limit, back.policies[0].remaining], [
      "store",
      10,
      9,
    ]);
  });

  it("local is exact per instance: 4 limiters over one failing store, 1,000 concurrent checks each, admit floor(limit / 4) each", async () => {
    const store = new FakeRemoteStore();
    store.failing = new Error("down");
    const policy = { name: "api", limit: 103, windowMs: 60_000 };
    const admitted = await Promise.all(Array.from({ length: 4 }, async () => {
      const limiter = createRateLimiter({ ...quiet, store, onStoreError: "local", instances: 4 });
      const results = await Promise.all(
        Array.from({ length: 1_000 }, () => limiter.check("k", [policy])),
      );
      return results.filter((r) => r.allowed).length;
    }));
    assert.deepEqual(admitted, [25, 25, 25, 25]);
  });

  it("local needs instances, and instances only goes with local", () => {
    assert.throws(
      () => createRateLimiter({ ...quiet, onStoreError: "local" }),
      /instances must be a safe integer >= 1/,
    );
    assert.throws(
      () => createRateLimiter({ ...quiet, instances: 2 }),
      /instances is only for onStoreError "local"/,
    );
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
    await sleep(0);
    assert.equal((errors[0] as Error).message, "sink");
  });

  it("a metric sink throwing or rejecting with a value whose name cannot be read: the check answers, the default line says unknown", async () => {
    const unreadable = () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    };
    const warn = console.warn;
    const lines: string[] = [];
    console.warn = (line: string) => void lines.push(line);
    try {
      for (
        const onMetric of [() => {
          throw unreadable();
        }, () => Promise.reject(unreadable())]
      ) {
        const limiter = createRateLimiter({
          ...quiet,
          store: failing,
          onStoreError: "open",
          onMetric,
        });
        const result = await limiter.check("k", [api]);
        assert.deepEqual([result.allowed, result.outcome], [true, "open"]);
        await sleep(0);
      }
    } finally {
      console.warn = warn;
    }
    assert.deepEqual(lines, Array(2).fill("rate-limits: onMetric failed (unknown)"));
  });

  it("reports store latency at most once per metricIntervalMs", async () => {
    const metrics: RateLimiterMetric[] = [];
    const store = new FakeRemoteStore();
    store.requestDelayMs = 5;
    const limiter = createRateLimiter({
      ...quiet,
      store,
      metricIntervalMs: 60_000,
      onMetric: (m) => void metrics.push(m),
    });
    await Promise.all(Array.from({ length: 10 }, () => limiter.check("k", [api])));
    await limiter.check("k", [api]);
    assert.equal(metrics.length, 1);
    const [latency] = metrics;
    assert.equal(latency.type, "rate_limit.store_latency");
    if (latency.type !== "rate_limit.store_latency") return;
    assert.equal(latency.calls, 1);
    assert.ok(latency.checks >= 1 && latency.maxMs >= 4 && latency.meanMs <= latency.maxMs);
  });

  it("calls a store's checkNow in place of checkBatch", async () => {
    const inner = createMemoryRateLimitStore();
    const calls: string[] = [];
    const sync: RateLimitStore = {
      checkBatch: (c) => (calls.push("checkBatch"), inner.checkBatch(c)),
      checkNow: (c) => (calls.push("checkNow"), inner.checkNow(c)),
    };
    const result = await createRateLimiter({ ...quiet, store: sync }).check("k", [api]);
    assert.equal(result.policies[0].remaining, api.limit - 1);
    assert.deepEqual(calls, ["checkNow"]);
  });

  it("hands on the memory store's answers as policy results, each check's its own; copies another in-process store's", () => {
    const limiter = createRateLimiter({ ...quiet, store: createMemoryRateLimitStore() });
    const first = limiter.checkNow!("k", [api]);
    const expected = { name: "api", limit: 3, windowMs: 60_000, remaining: 2, allowed: true };
    assert.deepEqual({ ...first.policies[0], resetMs: 0 }, { ...expected, resetMs: 0 });
    (first.policies[0] as { remaining: number }).remaining = 99; // a caller's change counts nothing
    const wide = { name: "wide", limit: 5, windowMs: 1_000 };
    const second = limiter.checkNow!("k", [api, wide], { credits: { initial: 5 } });
    assert.notEqual(second.policies, first.policies);
    assert.notEqual(second.policies[0], first.policies[0]);
    assert.equal(second.policies[0].remaining, 1);
    assert.deepEqual(second.policies.map((p) => [p.name, p.remaining]), [["api", 1], ["wide", 4]]);
    assert.equal(second.credits?.remaining, 4);
    const shared = [{ allowed: true, remaining: 1, resetMs: 0 }];
    const own: RateLimitStore = {
      checkBatch: () => Promise.resolve({ results: [] }),
      checkNow: () => shared,
    };
    const copied = createRateLimiter({ ...quiet, store: own }).checkNow!("k", [api]);
    assert.deepEqual(copied.policies, [{ ...shared[0], name: "api", limit: 3, windowMs: 60_000 }]);
    assert.notEqual(copied.policies[0], shared[0]);
  });

  it("compiled policies checked again on the memory store: its clock's failure applies the failure policy (local: each policy's share), a bug throws", () => {
    const policies = compileRateLimitPolicies([{ name: "api", limit: 4, windowMs: 60_000 }]);
    let failure: Error | undefined;
    const now = () => {
      if (failure !== undefined) throw failure;
      return 1_000_000;
    };
    const closed = createRateLimiter({
      ...quiet,
      store: createMemoryRateLimitStore({ now }),
      onStoreError: "closed",
    });
    const local = createRateLimiter({
      ...quiet,
      store: createMemoryRateLimitStore({ now }),
      onStoreError: "local",
      instances: 2,
    });
    closed.checkNow!("k", policies);
    local.checkNow!("k", policies);
    failure = new Error("clock down");
    const refused = closed.checkNow!("k", policies);
    assert.deepEqual([refused.allowed, refused.outcome, refused.reason], [
      false,
      "closed",
      "error",
    ]);
    const shares = [1, 2, 3].map(() => local.checkNow!("k", policies));
    assert.deepEqual(shares.map((r) => [r.allowed, r.outcome, r.policies[0].limit]), [
      [true, "local", 2],
      [true, "local", 2],
      [false, "local", 2],
    ]);
    failure = new TypeError("clock bug");
    assert.throws(() => closed.checkNow!("k", policies), TypeError);
    failure = undefined;
    assert.equal(closed.checkNow!("k", policies).policies[0].remaining, 2); // 2 counted, none while down
  });

  it("compiled policies checked again count each check's own subject, also when the store's clock checks another subject mid-check", () => {
    const policies = compileRateLimitPolicies([api, { name: "wide", limit: 5, windowMs: 1_000 }]);
    let nested: string | undefined;
    const store = createMemoryRateLimitStore({
      now: () => {
        const subject = nested;
        nested = undefined;
        if (subject !== undefined) limiter.checkNow!(subject, policies); // a clock calling back
        return 1_000_000;
      },
    });
    const limiter = createRateLimiter({ ...quiet, store });
    const remaining = (subject: string) =>
      limiter.checkNow!(subject, policies, { cost: 0 }).policies.map((p) => p.remaining);
    limiter.checkNow!("a", policies);
    limiter.checkNow!("b", policies);
    nested = "c";
    limiter.checkNow!("a", policies); // "c" checked inside "a"'s check
    limiter.checkNow!("b", policies);
    assert.deepEqual(remaining("a"), [1, 3]);
    assert.deepEqual(remaining("b"), [1, 3]);
    assert.deepEqual(remaining("c"), [2, 4]);
  });

  it("passes every policy of a check in one counter list, and concurrent checks in one batch (the first sent at once by an idle door)", async () => {
    const batches: number[][] = [];
    const inner = createMemoryRateLimitStore();
    const counting: RateLimitStore = {
      checkBatch: (
        checks,
      ) => (batches.push(checks.map((c) => c.counters.length)), inner.checkBatch(checks)),
    };
    const limiter = createRateLimiter({ ...quiet, store: counting });
    await Promise.all([
      limiter.check("k", [api, burst]),
      limiter.check("j", [api]),
      limiter.check("i", [api, burst]),
    ]);
    assert.deepEqual(batches, [[2], [1, 2]]);
  });

  it("puts a check's slot on every counter (credits included); a bad slot is a TypeError", async () => {
    const seen: (string | undefined)[][] = [];
    const inner = createMemoryRateLimitStore();
    const store: RateLimitStore = {
      checkBatch: (checks) => (
        seen.push(...checks.map((c) => c.counters.map((counter) => counter.slot))),
          inner.checkBatch(checks)
      ),
    };
    const limiter = createRateLimiter({ ...quiet, store });
    await limiter.check("key:a", [api, burst], {
      subjects: ["key:a", "tenant:t"],
      slot: "tenant:t",
      credits: { initial: 5, subject: "key:p" },
    });
    await limiter.check("key:a", [api]);
    assert.deepEqual(seen, [["tenant:t", "tenant:t", "tenant:t"], [undefined]]);
    await assert.rejects(limiter.check("key:a", [api], { slot: "" }), TypeError);
    await assert.rejects(limiter.check("key:a", [api], { slot: "a\nb" }), TypeError);
    // A slot is a Redis hash tag: a brace in it would end the tag early.
    await assert.rejects(limiter.check("alice}", [api], { slot: "acme" }), /\{ or \}/);
    await assert.rejects(limiter.check("key:a", [api], { slot: "acme}" }), /\{ or \}/);
    await assert.rejects(
      limiter.check("key:a", [], { credits: { initial: 5, slot: "{t}" } }),
      /\{ or \}/,
    );
  });

  it("a clustered store: a check whose counters span several hash tags is a TypeError naming the fix (CROSSSLOT would pass it uncounted under open); one slot, or one subject, passes", async () => {
    const sent: (string | undefined)[][] = [];
    const inner = createMemoryRateLimitStore();
    const store: RateLimitStore = {
      clustered: true,
      checkBatch: (checks) => (
        sent.push(
          ...checks.map((c) => c.counters.map((counter) => counter.slot ?? counter.subject)),
        ), inner.checkBatch(checks)
      ),
      changeCredits: (counter, change, deadline) => inner.changeCredits!(counter, change, deadline),
      readCredits: (counters) => inner.readCredits!(counters),
    };
    for (const onStoreError of ["open", "closed"] as const) {
      const limiter = createRateLimiter({ ...quiet, store, onStoreError });
      // A balance given a slot beside window counters keyed by the subject.
      await assert.rejects(
        limiter.check("key:a", [api], { credits: { initial: 5, slot: "tenant:t" } }),
        { name: "TypeError", message: /one hash tag.*pass `slot`/ },
      );
      // A tenant's shared policy beside the key's, no slot.
      await assert.rejects(
        limiter.check("key:a", [api, burst], { subjects: ["key:a", "tenant:t"] }),
        { name: "TypeError", message: /one hash tag/ },
      );
      // A predecessor's balance, no slot.
      await assert.rejects(
        limiter.check("key:a", [], { credits: [{ initial: 5 }, { initial: 5, subject: "key:p" }] }),
        { name: "TypeError", message: /one hash tag/ },
      );
    }
    assert.equal(sent.length, 0);
    const limiter = createRateLimiter({ ...quiet, store });
    await limiter.check("key:a", [api, burst], {
      subjects: ["key:a", "tenant:t"],
      slot: "tenant:t",
      credits: { initial: 5, subject: "key:p" },
    });
    await limiter.check("key:a", [], { credits: { initial: 5, slot: "tenant:t" } });
    await limiter.check("key:a", [api], { credits: { initial: 5 } });
    assert.deepEqual(sent, [["tenant:t", "tenant:t", "tenant:t"], ["tenant:t"], [
      "key:a",
      "key:a",
    ]]);
    // The same checks on a store that is not clustered: one script may touch any key.
    const single = createRateLimiter({ ...quiet, store: { ...store, clustered: false } });
    await single.check("key:b", [api], { credits: { initial: 5, slot: "tenant:t" } });
    await single.check("key:b", [api, burst], { subjects: ["key:b", "tenant:t"] });
  });

  it("checkNow: with an in-process store, a check answered synchronously (throwing where check rejects); absent with a remote store", async () => {
    const limiter = createRateLimiter(quiet);
    assert.equal(typeof limiter.checkNow, "function");
    const first = limiter.checkNow!("key:a", [burst]);
    assert.ok(!(first instanceof Promise));
    assert.deepEqual([first.allowed, first.outcome, first.policies[0].remaining], [
      true,
      "store",
      0,
    ]);
    // The same counters as check: the second unit is refused by either.
    assert.equal((await limiter.check("key:a", [burst])).allowed, false);
    assert.equal(limiter.checkNow!("key:a", [burst]).allowed, false);
    assert.throws(() => limiter.checkNow!("a\nb", [burst]), TypeError);
    assert.throws(() => limiter.checkNow!("key:a", [burst], { cost: -1 }), TypeError);
    const remote = createRateLimiter({ ...quiet, store: new FakeRemoteStore() });
    assert.equal(remote.checkNow, undefined);
  });

  it("checkNow(subject, policies, options, nowMs): hands the caller's wall-clock time to the store's checkNow (check hands none); a bad one is a TypeError, nothing counted", async () => {
    const inner = createMemoryRateLimitStore();
    const times: (number | undefined)[] = [];
    const store: RateLimitStore = {
      checkBatch: (c) => inner.checkBatch(c),
      checkNow: (c, nowMs) => (times.push(nowMs), inner.checkNow(c, nowMs)),
    };
    const limiter = createRateLimiter({ ...quiet, store });
    const day = Date.UTC(2026, 0, 1);
    limiter.checkNow!("key:a", [burst], undefined, day);
    await limiter.check("key:a", [burst]);
    limiter.checkNow!("key:a", [burst]);
    assert.deepEqual(times, [day, undefined, undefined]);
    // The memory store counted the first unit at `day`: a day later its window is empty.
    const memory = createRateLimiter(quiet);
    memory.checkNow!("key:a", [burst], undefined, day);
    assert.equal(memory.checkNow!("key:a", [burst], undefined, day + 1).allowed, false);
    assert.equal(memory.checkNow!("key:a", [burst], undefined, day + 86_400_000).allowed, true);
    for (const bad of [Number.NaN, Infinity, -1, 0.5, 1e16]) {
      assert.throws(() => memory.checkNow!("key:b", [burst], undefined, bad), TypeError);
    }
    assert.equal(memory.checkNow!("key:b", [burst]).policies[0].remaining, 0, "none counted");
  });

  it("reads frozen check options once (validated once per options object); options that may change are read on every check", async () => {
    const limiter = createRateLimiter(quiet);
    const policies = compileRateLimitPolicies([api, { name: "day", limit: 5, windowMs: 60_000 }]);
    const reads: PropertyKey[] = [];
    /** `target` frozen behind a proxy that records every property read. */
    const watched = <T extends object>(target: T): T =>
      new Proxy(Object.freeze(target), {
        get: (t, key) => (reads.push(key), Reflect.get(t, key)),
      });
    const balance = watched({
      initial: 10,
      subject: "key:p",
      refill: Object.freeze({ amount: 1, everyMs: 60_000 }),
    });
    const options = watched({
      subjects: watched(["key:a", "tenant:t"]),
      credits: watched([balance]),
      slot: "tenant:t",
    });
    const first = await limiter.check("key:a", policies, options);
    const readOnce = reads.length;
    assert.ok(readOnce > 0);
    const second = await limiter.check("key:a", policies, options);
    assert.equal(reads.length, readOnce, "the second check read its frozen options again");
    // The same counters, counted on: one unit more each, the balance spent twice.
    assert.deepEqual(second.policies.map((p) => p.remaining), [1, 3]);
    assert.deepEqual([first.credits?.remaining, second.credits?.remaining], [9, 8]);
    // Another subject or another policy list is validated anew.
    await assert.rejects(limiter.check("a\nb", policies, options), TypeError);
    await assert.rejects(
      limiter.check("key:a", compileRateLimitPolicies([api]), options),
      TypeError,
    );
    // Unfrozen options, or a getter behind frozen ones, are read on every check.
    const open = { subjects: ["key:b"] };
    await limiter.check("key:b", [api], open);
    open.subjects[0] = "a\nb";
    await assert.rejects(limiter.check("key:b", [api], open), TypeError);
    let subject = "key:c";
    const getter = Object.freeze({
      get subjects() {
        return [subject];
      },
    });
    await limiter.check("key:c", [api], getter);
    subject = "a\nb";
    await assert.rejects(limiter.check("key:c", [api], getter), TypeError);
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

  it("throws a TypeError naming bad credits, and for a store without changeCredits or readCredits", async () => {
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
    await assert.rejects(limiter.changeCredits("k", { initial: 1 }, { set: -1 }), TypeError);
    // A misspelt field is refused, not a fresh balance (`subjct`) or one that never refills.
    for (
      const [credits, field] of [
        [{ initial: 3, subjct: "key:old" }, "subjct"],
        [{ initial: 1, refil: { amount: 100, interval: "daily" } }, "refil"],
        [{ initial: 1, inital: 5 }, "inital"],
      ] as const
    ) {
      const known = /\(known: initial, initialAt, refill, subject, name, slot\)/;
      const unknown = new RegExp(`^TypeError: credits: unknown field \`${field}\``);
      for (const spend of [credits, [credits]]) {
        await assert.rejects(limiter.check("k", [], { credits: spend as never }), unknown);
        await assert.rejects(limiter.check("k", [], { credits: spend as never }), known);
      }
      await assert.rejects(limiter.changeCredits("k", credits as never, { set: 1 }), unknown);
      await assert.rejects(
        limiter.readCredits([{ subject: "k", credits: credits as never }]),
        unknown,
      );
    }
    await assert.rejects(
      limiter.check("k", [], {
        credits: { initial: 1, refill: { amount: 1, interval: "monthly", dya: 3 } } as never,
      }),
      /^TypeError: credits\.refill: unknown field `dya`/,
    );
    // Nothing was spent by the refused checks: the old balance still has its 3.
    assert.equal((await limiter.check("k", [], { credits: { initial: 3 } })).credits?.remaining, 2);
    const bare = createRateLimiter({ ...quiet, store: failing });
    await assert.rejects(
      bare.changeCredits("k", { initial: 1 }, { set: 1 }),
      /the custom store cannot change credits/,
    );
    await assert.rejects(
      bare.readCredits([{ subject: "k", credits: { initial: 1 } }]),
      /the custom store cannot read credits/,
    );
  });

  it("a store rejecting with a value whose name or message cannot be read: the failure policy answers at once, the line and metric readable; a bug so thrown still names the store", async () => {
    const revoked = () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    };
    const throwing = () => ({
      get name(): string {
        throw new Error("name getter");
      },
      get message(): string {
        throw new Error("message getter");
      },
    });
    const bug = () =>
      Object.defineProperty(new TypeError("unused"), "message", {
        get() {
          throw new Error("message getter");
        },
      });
    for (const rejection of [revoked, throwing]) {
      const lines: string[] = [];
      const metrics: RateLimiterMetric[] = [];
      const remote = createRateLimiter({
        store: { name: "redis", checkBatch: () => Promise.reject(rejection()) },
        timeoutMs: 3_000,
        onStoreError: "closed",
        logger: (line) => lines.push(line),
        onMetric: (m) => void metrics.push(m),
      });
      const start = performance.now();
      assert.deepEqual(await remote.check("k", [api]), {
        allowed: false,
        unavailable: true,
        outcome: "closed",
        reason: "error",
        policies: [],
      });
      assert.ok(performance.now() - start < 1_000, "answered at once, not by the deadline");
      assert.deepEqual(metrics.filter((m) => m.type === "rate_limit.store_unavailable"), [
        {
          type: "rate_limit.store_unavailable",
          onStoreError: "closed",
          failures: 1,
          reason: "error",
        },
      ]);
      assert.equal(
        lines[1],
        'rate-limits: the redis store is unavailable (error): 1 check answered by onStoreError "closed" (refused) since the last line',
      );
      const inProcess = createRateLimiter({
        ...quiet,
        store: {
          checkBatch: failing.checkBatch,
          checkNow: () => {
            throw rejection();
          },
        },
        onStoreError: "closed",
      });
      assert.equal((await inProcess.check("k", [api])).reason, "error");
      const credits = createRateLimiter({
        ...quiet,
        store: {
          name: "redis",
          checkBatch: failing.checkBatch,
          changeCredits: () => Promise.reject(rejection()),
        },
        timeoutMs: 3_000,
      });
      const changing = performance.now();
      await assert.rejects(
        credits.changeCredits("k", { initial: 5 }, { add: 1 }),
        /^Error: rate-limits: the redis store failed changeCredits \(\w+: unknown\)$/,
      );
      assert.ok(performance.now() - changing < 1_000, "rejected at once, not by the deadline");
      const starting: string[] = [];
      await createRateLimiter({
        store: {
          name: "redis",
          checkBatch: failing.checkBatch,
          ready: () => Promise.reject(rejection()),
        },
        timeoutMs: 3_000,
        onStoreError: "closed",
        logger: (line) => starting.push(line),
      }).ready();
      assert.match(
        starting[1],
        /^rate-limits: the redis store is unavailable at start-up \(\w+: unknown\); onStoreError "closed"/,
      );
    }
    const buggy = createRateLimiter({
      ...quiet,
      store: { name: "redis", checkBatch: () => Promise.reject(bug()) },
      timeoutMs: 3_000,
    });
    const start = performance.now();
    await assert.rejects(
      buggy.check("k", [api]),
      /^TypeError: rate-limits: the redis store failed \(TypeError: unknown\)$/,
    );
    assert.ok(performance.now() - start < 1_000, "rejected at once, not by the deadline");
  });

  it("changeCredits answers the store's balance before when it tells it; a before that is no balance is a malformed reply (TypeError)", async () => {
    let before: unknown;
    const limiter = createRateLimiter({
      ...quiet,
      store: {
        checkBatch: () => Promise.resolve({ results: [] }),
        changeCredits: () =>
          Promise.resolve({
            allowed: true,
            remaining: 5,
            resetMs: -1,
            ...(before === undefined ? {} : { before }),
          } as CounterResult),
      },
    });
    const credits = { initial: 10 };
    assert.deepEqual(await limiter.changeCredits("a", credits, { set: 5 }), {
      allowed: true,
      remaining: 5,
      resetMs: -1,
    });
    before = 9;
    assert.deepEqual(await limiter.changeCredits("a", credits, { set: 5 }), {
      allowed: true,
      remaining: 5,
      resetMs: -1,
      before: 9,
    });
    for (before of [-1, 1.5, "9", null, 2e15]) {
      await assert.rejects(
        limiter.changeCredits("a", credits, { set: 5 }),
        (error) => error instanceof TypeError && /malformed reply/.test(error.message),
        String(before),
      );
    }
  });

  it("changeCredits goes through the door: a failure rejects naming the store and the reason; a stalled change is never applied after the answer", async () => {
    const store = new FakeRemoteStore();
    const limiter = createRateLimiter({ ...quiet, store, timeoutMs: 100 });
    const credits = { initial: 5 };
    assert.equal((await limiter.changeCredits("k", credits, { add: 1 })).remaining, 6);
    store.failing = new Error("ECONNRESET");
    await assert.rejects(
      limiter.changeCredits("k", credits, { add: 1 }),
      /^Error: rate-limits: the fake store failed changeCredits \(Error: ECONNRESET\)$/,
    );
    store.failing = undefined;
    store.stalled = true;
    await assert.rejects(
      limiter.changeCredits("k", credits, { add: 1 }),
      /the fake store did not answer changeCredits within 100 ms/,
    );
    store.resume();
    await until(() => store.pending === 0);
    assert.equal((await limiter.changeCredits("k", credits, { add: 0 })).remaining, 6);
  });

  it("readCredits reads through the door without writing; a balance the store does not hold is its initial with the refill due", async () => {
    const store = new FakeRemoteStore();
    const limiter = createRateLimiter({ ...quiet, store });
    const held = { initial: 5 };
    await limiter.check("a", [], { credits: held });
    const size = store.inner.size;
    const refill = { amount: 50, everyMs: 1_000 };
    const answers = await limiter.readCredits([
      { subject: "a", credits: held },
      { subject: "b", credits: { initial: 7 } },
      { subject: "c", credits: { initial: 7, initialAt: Date.now() - 5_000, refill } },
    ]);
    assert.deepEqual(answers.map((a) => a.remaining), [4, 7, 50]);
    assert.equal(answers[1].resetMs, -1);
    assert.ok(answers[2].resetMs > 0 && answers[2].resetMs <= 1_000);
    assert.equal(store.inner.size, size, "reading wrote nothing");
    store.failing = new Error("down");
    await assert.rejects(
      limiter.readCredits([{ subject: "a", credits: held }]),
      /the fake store failed readCredits \(Error: down\)/,
    );
  });

  it("readCredits settles a balance the store does not hold on the store's clock (an injected one), not Date.now()", async () => {
    // 30 s into a minute long ago: the refill boundary last passed is 30 s back.
    const now = Date.UTC(2020, 0, 1) + 30_000;
    const limiter = createRateLimiter({
      ...quiet,
      store: createMemoryRateLimitStore({ now: () => now }),
    });
    const refill = { amount: 50, everyMs: 60_000 };
    const [read] = await limiter.readCredits([
      { subject: "unheld", credits: { initial: 7, initialAt: now - 5_000, refill } },
    ]);
    // No boundary between initialAt and the store's now: no refill yet, the next in 30 s.
    assert.deepEqual(read, { allowed: true, remaining: 7, resetMs: 30_000 });
    // A spend at that clock agrees: the balance starts at its initial.
    const spent = await limiter.check("unheld", [], {
      cost: 1,
      credits: { initial: 7, initialAt: now - 5_000, refill },
    });
    assert.equal(spent.credits?.remaining, 6);
  });

  it("spends several balances (a key's and its tenant's) in one atomic step; balances answers each, in order", async () => {
    const limiter = createRateLimiter(quiet);
    const key = { initial: 5, subject: "key:k1" };
    const tenant = { initial: 2, subject: "tenant:t1" };
    for (const expected of [true, true, false]) {
      const result = await limiter.check("key:k1", [api], { cost: 1, credits: [key, tenant] });
      assert.equal(result.allowed, expected);
      assert.deepEqual(result.balances?.map((b) => b.allowed), [true, expected]);
      assert.deepEqual(result.credits, result.balances![0]);
    }
    // Nothing of the refused check was spent: neither the key's balance nor the window.
    const read = await limiter.readCredits([
      { subject: "key:k1", credits: key },
      { subject: "tenant:t1", credits: tenant },
    ]);
    assert.deepEqual(read.map((r) => r.remaining), [3, 0]);
    const single = await limiter.check("key:k2", [], { credits: { initial: 1 } });
    assert.deepEqual(single.balances, [single.credits]);
    await assert.rejects(limiter.check("k", [], { credits: [] }), /credits must list 1-8 balances/);
    await assert.rejects(
      limiter.check("k", [], { credits: [key, { ...key, initial: 9 }] }),
      /credits must name each balance once/,
    );
  });

  it("drainCreditChanges goes through the door and keeps what a late or failed drain drained; absent without the store capability", async () => {
    assert.equal(createRateLimiter(quiet).drainCreditChanges, undefined);
    assert.equal(createRateLimiter(quiet).drainPending, undefined);
    const changed = new Map<string, CreditBalance>();
    let delayMs = 0;
    let failure: Error | undefined;
    const draining: RateLimitStore = {
      name: "redis",
      checkBatch: failing.checkBatch,
      async drainCreditChanges() {
        const drained = [...changed.values()];
        changed.clear(); // draining clears what it returns
        await sleep(delayMs);
        if (failure) throw failure;
        return drained;
      },
    };
    const limiter = createRateLimiter({ ...quiet, store: draining, timeoutMs: 100 });
    const at = Date.now();
    changed.set("a", { subject: "a", name: "credits", remaining: 5, at });
    assert.deepEqual(await limiter.drainCreditChanges!(), [
      { subject: "a", name: "credits", remaining: 5, at },
    ]);
    assert.deepEqual(await limiter.drainCreditChanges!(), []);
    // A drain answered after the deadline: rejected now, its balances kept for the next drain.
    changed.set("a", { subject: "a", name: "credits", remaining: 4, at: at + 1 });
    delayMs = 300;
    assert.equal(limiter.drainPending!(), false);
    await assert.rejects(
      limiter.drainCreditChanges!(),
      /^Error: rate-limits: the redis store did not answer drainCreditChanges within 100 ms$/,
    );
    assert.equal(limiter.drainPending!(), true, "answered after its deadline: pending");
    await sleep(400);
    assert.equal(limiter.drainPending!(), false, "answered");
    delayMs = 0;
    changed.set("b", { subject: "b", name: "credits", remaining: 9, at: at + 2 });
    assert.deepEqual(await limiter.drainCreditChanges!(), [
      { subject: "a", name: "credits", remaining: 4, at: at + 1 },
      { subject: "b", name: "credits", remaining: 9, at: at + 2 },
    ]);
    // A kept balance is replaced by a newer one of the same subject and name, never by an older one.
    changed.set("a", { subject: "a", name: "credits", remaining: 3, at: at + 3 });
    delayMs = 300;
    await assert.rejects(limiter.drainCreditChanges!(), /did not answer/);
    await sleep(400);
    delayMs = 0;
    changed.set("a", { subject: "a", name: "credits", remaining: 2, at: at + 4 });
    assert.deepEqual(await limiter.drainCreditChanges!(), [
      { subject: "a", name: "credits", remaining: 2, at: at + 4 },
    ]);
    // A failed drain rejects naming the store; a malformed reply is a TypeError.
    failure = new Error("ECONNRESET");
    await assert.rejects(
      limiter.drainCreditChanges!(),
      /^Error: rate-limits: the redis store failed drainCreditChanges \(Error: ECONNRESET\)$/,
    );
    failure = undefined;
    const malformed = createRateLimiter({
      ...quiet,
      store: {
        checkBatch: failing.checkBatch,
        drainCreditChanges: () => Promise.resolve([{}] as CreditBalance[]),
      },
    });
    await assert.rejects(malformed.drainCreditChanges!(), TypeError);
  });

  it("drainCreditChanges: a store's drain throwing synchronously rejects and leaves no drain pending", async () => {
    const throwing: RateLimitStore = {
      name: "redis",
      checkBatch: failing.checkBatch,
      drainCreditChanges() {
        throw new Error("socket closed");
      },
    };
    const limiter = createRateLimiter({ ...quiet, store: throwing, timeoutMs: 100 });
    await assert.rejects(limiter.drainCreditChanges!(), /socket closed|did not answer/);
    assert.equal(limiter.drainPending!(), false);
  });

  it("drainCreditChanges: a late drain answered after a newer drain never brings back an older balance", async () => {
    const replies: { delayMs: number; balances: CreditBalance[] }[] = [];
    const store: RateLimitStore = {
      name: "redis",
      checkBatch: failing.checkBatch,
      async drainCreditChanges() {
        const { delayMs, balances } = replies.shift()!;
        await sleep(delayMs);
        return balances;
      },
    };
    const limiter = createRateLimiter({ ...quiet, store, timeoutMs: 100 });
    const a = (remaining: number, at: number) => ({ subject: "a", name: "credits", remaining, at });
    const c = { subject: "c", name: "credits", remaining: 7, at: 1 };
    replies.push({ delayMs: 400, balances: [a(5, 1), c] });
    replies.push({ delayMs: 0, balances: [a(3, 2)] });
    await assert.rejects(limiter.drainCreditChanges!(), /did not answer/);
    assert.deepEqual(await limiter.drainCreditChanges!(), [a(3, 2)]);
    await sleep(500);
    replies.push({ delayMs: 0, balances: [] });
    assert.deepEqual(await limiter.drainCreditChanges!(), [c]);
  });

  it("drainCreditChanges: a balance kept from a late drain called before a successful changeCredits of it is dropped (the change supersedes it); one drained after the change is answered", async () => {
    const replies: { delayMs: number; balances: CreditBalance[] }[] = [];
    const store: RateLimitStore = {
      name: "redis",
      checkBatch: failing.checkBatch,
      async drainCreditChanges() {
        const { delayMs, balances } = replies.shift()!;
        await sleep(delayMs);
        return balances;
      },
      changeCredits: () => Promise.resolve({ allowed: true, remaining: 70, resetMs: -1 }),
    };
    const limiter = createRateLimiter({ ...quiet, store, timeoutMs: 100 });
    const a = (remaining: number, at: number) => ({ subject: "a", name: "credits", remaining, at });
    const b = { subject: "b", name: "credits", remaining: 7, at: 1 };
    replies.push({ delayMs: 200, balances: [a(90, 1), b] });
    await assert.rejects(limiter.drainCreditChanges!(), /did not answer/);
    await sleep(300); // its answer kept
    await limiter.changeCredits("a", { initial: 0 }, { set: 70 });
    await limiter.changeCredits("a", { initial: 0, name: "other" }, { set: 70 });
    replies.push({ delayMs: 0, balances: [] });
    assert.deepEqual(await limiter.drainCreditChanges!(), [b], "a's balance of 90 dropped");
    // A late drain called after the change: what it drained is answered.
    replies.push({ delayMs: 200, balances: [a(60, 3)] });
    await assert.rejects(limiter.drainCreditChanges!(), /did not answer/);
    await sleep(300);
    replies.push({ delayMs: 0, balances: [] });
    assert.deepEqual(await limiter.drainCreditChanges!(), [a(60, 3)]);
  });

  it("ready(): resolves without store.ready; a TypeError (misconfiguration) rejects; a store merely down resolves and logs one line", async () => {
    await createRateLimiter(quiet).ready();
    const misconfigured: RateLimitStore = {
      name: "postgres",
      checkBatch: failing.checkBatch,
      ready: () => Promise.reject(new TypeError("run migration 0009_credit_balances")),
    };
    await assert.rejects(
      createRateLimiter({ ...quiet, store: misconfigured }).ready(),
      /postgres store failed \(TypeError: run migration 0009_credit_balances\)/,
    );
    for (
      const [ready, why] of [
        [() => Promise.reject(new Error("ECONNREFUSED")), "Error: ECONNREFUSED"],
        [() => new Promise<void>(() => {}), "no answer within 50 ms"],
      ] as const
    ) {
      const lines: string[] = [];
      const limiter = createRateLimiter({
        store: { name: "redis", checkBatch: failing.checkBatch, ready },
        timeoutMs: 50,
        onStoreError: "closed",
        logger: (line) => lines.push(line),
      });
      await limiter.ready();
      assert.deepEqual(lines.slice(1), [
        `rate-limits: the redis store is unavailable at start-up (${why}); onStoreError "closed" applies until it answers`,
      ]);
    }
  });

  it("with the check tap on, a remote check's clock is read once as it starts (the door's read), its duration measured from there", async () => {
    const replies: (() => void)[] = [];
    const store: RateLimitStore = {
      checkBatch: (checks) =>
        new Promise((resolve) =>
          replies.push(() =>
            resolve({
              results: checks.map((c) =>
                c.counters.map(() => ({ allowed: true, remaining: 1, resetMs: 1_000 }))
              ),
            })
          )
        ),
    };
    const limiter = createRateLimiter({ ...quiet, store, timeoutMs: 5_000 });
    const durations: number[] = [];
    tapsOf<LimiterTaps>(limiter)!.check = (_outcome, _allowed, ms) => durations.push(ms);
    const warm = limiter.check("warm", [api]); // arms the door's one timer (a clock read of its own)
    await until(() => replies.length > 0);
    replies.shift()!();
    await warm;
    durations.length = 0;
    const now = performance.now;
    let reads = 0;
    performance.now = () => (reads++, now.call(performance));
    let first: Promise<unknown>;
    let queued: Promise<unknown>[];
    let readsForQueued: number;
    try {
      first = limiter.check("k", [api]); // an idle door: sent at once
      await Promise.resolve();
      assert.equal(reads, 1, `${reads} clock reads for one check`);
      reads = 0;
      queued = Array.from({ length: 10 }, (_, i) => limiter.check(`q${i}`, [api]));
      await Promise.resolve(); // the door's pump: one clock read for every check of the task
      readsForQueued = reads;
    } finally {
      performance.now = now;
    }
    assert.equal(readsForQueued, 1, `${readsForQueued} clock reads for 10 queued checks`);
    assert.equal(replies.length, 2); // the first check's call, then one for the 10 queued
    for (const reply of replies.splice(0)) reply();
    await first;
    const results = await Promise.all(queued) as { allowed: boolean }[];
    assert.ok(results.every((r) => r.allowed));
    assert.equal(durations.length, 11);
    assert.ok(
      durations.every((ms) => Number.isFinite(ms) && ms >= 0 && ms < 5_000),
      String(durations),
    );
  });
});
