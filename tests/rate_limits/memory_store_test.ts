import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";
import { commands, countersOf, maxInWindow, POLICIES, ReferenceStore } from "./_model.ts";

const counter = (subject: string, cost = 1, limit = 2, windowMs = 1_000) => ({
  kind: "window" as const,
  subject,
  name: "api",
  limit,
  windowMs,
  cost,
});

describe("createMemoryRateLimitStore", () => {
  it("answers as the reference sliding log on a fake clock (cost, cost 0, all or nothing)", async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (script) => {
        let now = 1_000_000;
        const store = createMemoryRateLimitStore({ now: () => now });
        const reference = new ReferenceStore();
        const accepted = new Map<string, { t: number; u: number }[]>();
        for (const command of script) {
          now += command.advanceMs;
          const counters = countersOf(command);
          const before = reference.check(counters, now);
          assert.deepEqual(await store.check(counters), before);
          if (before.every((r) => r.allowed) && command.cost > 0) {
            for (const c of counters) {
              const key = `${c.subject}|${c.name}`;
              accepted.set(key, [...accepted.get(key) ?? [], { t: now, u: c.cost }]);
            }
          }
        }
        for (const [key, log] of accepted) {
          const policy = POLICIES.find((p) => key.endsWith(`|${p.name}`))!;
          assert.ok(maxInWindow(log, policy.windowMs) <= policy.limit, key);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("keeps at most maxCounters counters, dropping idle ones first", async () => {
    let now = 0;
    const store = createMemoryRateLimitStore({ maxCounters: 3, now: () => now });
    for (const subject of ["a", "b", "c", "d", "e"]) await store.check([counter(subject)]);
    assert.equal(store.size, 3);
    now += 1_000;
    await store.check([counter("f")]);
    assert.equal(store.size, 1);
  });

  it("counts from its newest entry when the clock steps back", async () => {
    let now = 10_000;
    const store = createMemoryRateLimitStore({ now: () => now });
    await store.check([counter("a")]);
    now = 5_000;
    const [second] = await store.check([counter("a")]);
    assert.deepEqual(second, { allowed: true, remaining: 0, resetMs: 1_000 });
    now = 10_999;
    assert.equal((await store.check([counter("a")]))[0].allowed, false);
    now = 11_000;
    assert.equal((await store.check([counter("a")]))[0].allowed, true);
  });

  it("never fits a cost above the limit, and says so with resetMs = windowMs", async () => {
    const store = createMemoryRateLimitStore({ now: () => 0 });
    assert.deepEqual(await store.check([counter("a", 3)]), [
      { allowed: false, remaining: 2, resetMs: 1_000 },
    ]);
  });

  it("throws a TypeError for a bad maxCounters", () => {
    assert.throws(() => createMemoryRateLimitStore({ maxCounters: 0 }), TypeError);
  });
});
