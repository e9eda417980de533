import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Refusals } from "../../rate_limits/_refusals.ts";
import type { RateLimitPolicyResult, RateLimitResult } from "../../rate_limits/limiter.ts";
import type { CounterResult } from "../../rate_limits/store.ts";

const policy = (allowed: boolean, resetMs: number, name = "api"): RateLimitPolicyResult => ({
  name,
  limit: 10,
  windowMs: 60_000,
  allowed,
  remaining: allowed ? 5 : 0,
  resetMs,
});

const refused = (
  policies: RateLimitPolicyResult[],
  balances?: CounterResult[],
): RateLimitResult => ({
  allowed: false,
  unavailable: false,
  outcome: "store",
  policies,
  ...(balances === undefined ? {} : { credits: balances[0], balances }),
});

/** An answer as a careless caller sees it. */
type Mutable = { allowed: boolean; policies: { resetMs: number }[] };

describe("Refusals", () => {
  it("answers a remembered refusal of the same check and subject, its resets counted down from the check's start", () => {
    const refusals = new Refusals(10);
    const check = {};
    const balance = { allowed: true, remaining: 7, resetMs: 30_000 };
    const never = { allowed: true, remaining: 3, resetMs: -1 };
    const result = refused([policy(false, 10_000), policy(true, 20_000, "day")], [balance, never]);
    refusals.remember("k", check, performance.now() - 1_000, result, performance.now() - 1_000);
    const again = refusals.recall("k", check) as RateLimitResult;
    assert.equal(again.allowed, false);
    assert.equal(again.outcome, "store");
    assert.equal(again.unavailable, false);
    assert.deepEqual(again.policies.map((p) => [p.name, p.allowed, p.remaining]), [
      ["api", false, 0],
      ["day", true, 5],
    ]);
    assert.ok(again.policies[0].resetMs <= 9_000 && again.policies[0].resetMs > 8_000);
    assert.ok(again.policies[1].resetMs <= 19_000 && again.policies[1].resetMs > 18_000);
    assert.ok(again.balances![0].resetMs <= 29_000 && again.balances![0].resetMs > 28_000);
    assert.equal(again.credits, again.balances![0]);
    assert.equal(again.balances![1].resetMs, -1, "a balance without a refill keeps -1");
    assert.notEqual(again, result, "each answer its own");
    assert.equal(result.policies[0].resetMs, 10_000, "the remembered result is unchanged");
  });

  it("counts the resets it answers down from when the store's reply arrived, not from the check's start (a slow reply never makes Retry-After early); it stops answering by the start's count", () => {
    const refusals = new Refusals(10);
    const check = {};
    const now = performance.now();
    // Sent 900 ms ago, answered just now: the store decided somewhere in between.
    refusals.remember("k", check, now - 900, refused([policy(false, 10_000)]), now);
    const again = refusals.recall("k", check) as RateLimitResult;
    assert.ok(
      again.policies[0].resetMs > 9_900,
      `${again.policies[0].resetMs}: counted from the reply`,
    );
    // Sent 10,000 ms before the reply's start bound: no longer answered (the store may have room).
    refusals.remember("j", check, now - 10_001, refused([policy(false, 10_000)]), now - 5_000);
    assert.equal(refusals.recall("j", check), undefined);
  });

  it("answers a refusal whatever a caller did to an earlier answer (fails closed)", () => {
    const refusals = new Refusals(10);
    const check = {};
    const result = refused([policy(false, 10_000)]);
    refusals.remember("k", check, performance.now(), result, performance.now());
    const first = refusals.recall("k", check)!;
    for (const answer of [result, first] as unknown as Mutable[]) {
      answer.allowed = true;
      answer.policies[0].resetMs = 0;
    }
    const again = refusals.recall("k", check)!;
    assert.deepEqual([again.allowed, again.outcome, again.unavailable], [false, "store", false]);
    assert.ok(again.policies[0].resetMs > 9_000);
  });

  it("answers nothing for another check, another subject, or once the soonest refusing policy can have room", () => {
    const refusals = new Refusals(10);
    const check = {};
    refusals.remember(
      "k",
      check,
      performance.now(),
      refused([policy(false, 60_000)]),
      performance.now(),
    );
    assert.equal(refusals.recall("k", {}), undefined, "another check of the subject");
    assert.equal(refusals.recall("other", check), undefined);
    // Two refusing policies: room again when the sooner one can have it.
    refusals.remember(
      "k",
      check,
      performance.now() - 150,
      refused([policy(false, 60_000), policy(false, 100, "burst")]),
      performance.now(),
    );
    assert.equal(refusals.recall("k", check), undefined);
    assert.equal(refusals.size, 0, "forgotten once past");
  });

  it("remembers only a refusal by the store on a policy: never an allowed, unavailable or local answer, or a refusal on credits alone", () => {
    const refusals = new Refusals(10);
    const check = {};
    const now = performance.now();
    refusals.remember("k", check, now, { ...refused([policy(true, 0)]), allowed: true }, now);
    refusals.remember(
      "k",
      check,
      now,
      { ...refused([]), unavailable: true, outcome: "closed" },
      now,
    );
    refusals.remember(
      "k",
      check,
      now,
      { ...refused([policy(false, 5_000)]), outcome: "local" },
      now,
    );
    refusals.remember(
      "k",
      check,
      now,
      refused([policy(true, 0)], [{ allowed: false, remaining: 0, resetMs: 5_000 }]),
      now,
    );
    refusals.remember(
      "k",
      check,
      now,
      refused([], [{ allowed: false, remaining: 0, resetMs: -1 }]),
      now,
    );
    assert.equal(refusals.size, 0);
    assert.equal(refusals.recall("k", check), undefined);
  });

  it("remembers up to 4 checks per subject (a throttler's hit and its block's start both), forgetting the oldest", () => {
    const refusals = new Refusals(10);
    const checks = [{}, {}, {}, {}, {}];
    const now = performance.now();
    for (const check of checks) {
      refusals.remember("k", check, now, refused([policy(false, 60_000)]), now);
    }
    assert.equal(refusals.size, 1, "one subject");
    assert.equal(refusals.recall("k", checks[0]), undefined, "the oldest forgotten");
    for (const check of checks.slice(1)) assert.equal(refusals.recall("k", check)?.allowed, false);
    // Refused again: the newest of its subject, its old entry replaced.
    refusals.remember("k", checks[1], now, refused([policy(false, 30_000)]), now);
    refusals.remember("k", checks[0], now, refused([policy(false, 60_000)]), now);
    assert.ok(refusals.recall("k", checks[1])!.policies[0].resetMs <= 30_000);
    assert.equal(refusals.recall("k", checks[2]), undefined);
  });

  it("holds at most max subjects, forgetting the oldest first; a subject refused again is the newest", () => {
    const refusals = new Refusals(2);
    const check = {};
    const now = performance.now();
    refusals.remember("a", check, now, refused([policy(false, 60_000)]), now);
    refusals.remember("b", check, now, refused([policy(false, 60_000)]), now);
    refusals.remember("a", check, now, refused([policy(false, 60_000)]), now);
    refusals.remember("c", check, now, refused([policy(false, 60_000)]), now);
    assert.equal(refusals.size, 2);
    assert.equal(refusals.recall("b", check), undefined);
    assert.ok(refusals.recall("a", check));
    assert.ok(refusals.recall("c", check));
  });
});
