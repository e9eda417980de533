/**
 * The store contract of `changeCredits(counter, { anchor: true })` (and of
 * `{ set, anchor: true }`), on real time (short `everyMs` rules, the change
 * made just past a boundary): run on
 * the memory store (tests/rate_limits/memory_store_test.ts) and on PostgreSQL
 * and Redis (tests/limits/stores_test.ts). The balance is kept, with the
 * refill the counter's rule owes taken first, and anchored at the change: a
 * check passing another rule gets no refill before that rule's next boundary.
 */
import assert from "node:assert/strict";
import type { CreditCounter, RateLimitStore } from "../../rate_limits/store.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sleeps until 150 ms past the next multiple of `everyMs` (the stores' clocks are this host's). */
function pastBoundary(everyMs: number): Promise<unknown> {
  return sleep(everyMs - (Date.now() % everyMs) + 150);
}

/** Credits left after one check of `counter` (its `cost`). */
async function spend(store: RateLimitStore, counter: CreditCounter): Promise<number> {
  const { results: [result] } = await store.checkBatch([
    { counters: [counter], deadline: Date.now() + 30_000 },
  ]);
  assert.ok(result, "the check's deadline passed");
  return result[0].remaining;
}

/** Each contract case of `{ anchor: true }` on `store`, balances of subjects starting with `label`. */
export async function anchorContract(store: RateLimitStore, label: string): Promise<void> {
  assert.equal(store.anchorsCredits, true, "the store declares anchorsCredits");
  const change = store.changeCredits!.bind(store);
  const later = () => Date.now() + 30_000;

  // Kept and anchored: another rule gets no refill before its next boundary after the change.
  const none: CreditCounter = {
    kind: "credit",
    subject: `${label}:kept:${crypto.randomUUID()}`,
    name: "c",
    cost: 7,
    initial: 10,
  };
  assert.equal(await spend(store, none), 3);
  const every = { amount: 500, everyMs: 2_000 };
  await pastBoundary(every.everyMs); // a boundary of the new rule since the balance's last write
  assert.deepEqual(await change(none, { anchor: true }, later()), {
    allowed: true,
    remaining: 3,
    resetMs: -1,
    before: 3,
  });
  const ruled = { ...none, cost: 1, refill: every };
  assert.equal(await spend(store, ruled), 2, "no refill by the new rule at the change");
  await pastBoundary(every.everyMs);
  assert.equal(await spend(store, ruled), 499, "the new rule's next boundary refills");

  // The refill the counter's rule owes is taken first.
  const owed: CreditCounter = {
    kind: "credit",
    subject: `${label}:owed:${crypto.randomUUID()}`,
    name: "c",
    cost: 47,
    initial: 50,
    refill: { amount: 50, everyMs: 2_000 },
  };
  assert.equal(await spend(store, owed), 3);
  await pastBoundary(2_000);
  const anchored = await change(owed, { anchor: true }, later());
  assert.equal(anchored?.remaining, 50, "the refill due taken");
  assert.ok(anchored!.resetMs > 0 && anchored!.resetMs <= 2_000, `resetMs ${anchored?.resetMs}`);
  const { refill: _, ...noRule } = owed;
  assert.equal(await spend(store, { ...noRule, cost: 1 }), 49);

  // Set and anchored: a check still passing the old rule gets no refill by a boundary crossed
  // before the change.
  const old: CreditCounter = {
    kind: "credit",
    subject: `${label}:set:${crypto.randomUUID()}`,
    name: "c",
    cost: 8,
    initial: 10,
    refill: { amount: 500, everyMs: 2_000 },
  };
  assert.equal(await spend(store, old), 2);
  await pastBoundary(2_000); // the old rule owes a refill, not written
  const { refill: _old, ...newRule } = old;
  assert.deepEqual(await change(newRule, { set: 4, anchor: true }, later()), {
    allowed: true,
    remaining: 4,
    resetMs: -1,
    before: 2,
  });
  assert.equal(await spend(store, { ...old, cost: 1 }), 3, "no old-rule refill at the change");
  await pastBoundary(2_000);
  assert.equal(await spend(store, { ...old, cost: 1 }), 499, "the old rule's next boundary does");

  // Past its deadline: null, nothing changed (the balance not anchored either).
  await pastBoundary(every.everyMs);
  assert.equal(await change(none, { anchor: true }, Date.now() - 1_000), null);
  assert.equal(await spend(store, { ...ruled, cost: 0 }), 500, "the new rule refilled as before");
}
