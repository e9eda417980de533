import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { answersWellFormed, isWellFormed, policyCheckOf } from "../../rate_limits/_well_formed.ts";
import { compileRateLimitPolicies } from "../../rate_limits/policy.ts";
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";

describe("answersWellFormed / isWellFormed", () => {
  it("marks one function, not another of the same text; the library's memory store is marked", () => {
    const marked = () => [];
    const other = () => [];
    assert.equal(isWellFormed(marked), false);
    answersWellFormed(marked);
    assert.equal(isWellFormed(marked), true);
    assert.equal(isWellFormed(other), false);
    assert.equal(isWellFormed(undefined), false);
    assert.equal(isWellFormed(createMemoryRateLimitStore().checkNow), true);
  });

  it("policyCheckOf: the memory store's check of compiled policies counts as checkNow does; a function marked without one has none", () => {
    const store = createMemoryRateLimitStore({ now: () => 1_000_000 });
    const check = policyCheckOf(store.checkNow)!;
    const policies = compileRateLimitPolicies([
      { name: "api", limit: 2, windowMs: 1_000 },
      { name: "day", limit: 5, windowMs: 86_400_000, cost: 2 },
    ]);
    const first = check("k", policies);
    assert.deepEqual(first, [
      { name: "api", limit: 2, windowMs: 1_000, remaining: 1, resetMs: 1_100, allowed: true },
      {
        name: "day",
        limit: 5,
        windowMs: 86_400_000,
        remaining: 3,
        resetMs: 94_040_000,
        allowed: true,
      },
    ]);
    const counters = policies.map((p) => ({ kind: "window" as const, subject: "k", ...p }));
    assert.deepEqual(store.checkNow(counters).map((r) => r.remaining), [0, 1]);
    const refused = check("k", policies);
    assert.deepEqual(refused.map((r) => [r.allowed, r.remaining]), [[false, 0], [false, 1]]);
    assert.notEqual(check("k", policies)[0], refused[0]);
    const marked = () => [];
    answersWellFormed(marked);
    assert.equal(policyCheckOf(marked), undefined);
    assert.equal(policyCheckOf(() => []), undefined);
  });
});
