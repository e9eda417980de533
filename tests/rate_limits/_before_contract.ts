/**
 * The store contract of a credit change's `before`: the balance the change
 * was applied to (its refill due applied), answered with the balance after
 * it, from the same atomic step. Run on the memory store
 * (tests/rate_limits/memory_store_test.ts) and on PostgreSQL and Redis
 * (tests/limits/stores_test.ts).
 */
import assert from "node:assert/strict";
import { MAX_CREDITS } from "../../rate_limits/_checks.ts";
import type { CreditCounter, RateLimitStore } from "../../rate_limits/store.ts";

/** Each contract case of a credit change's `before` on `store`, balances of subjects starting with `label`. */
export async function beforeContract(store: RateLimitStore, label: string): Promise<void> {
  const change = store.changeCredits!.bind(store);
  const later = () => Date.now() + 30_000;
  const counter: CreditCounter = {
    kind: "credit",
    subject: `${label}:before:${crypto.randomUUID()}`,
    name: "c",
    cost: 0,
    initial: 10,
  };
  const answer = (remaining: number, before: number) => ({
    allowed: true,
    remaining,
    resetMs: -1,
    before,
  });
  // A balance the store does not hold yet: the change was applied to its initial.
  assert.deepEqual(await change(counter, { set: 4 }, later()), answer(4, 10));
  // An add held at 0 or at MAX_CREDITS: the balance it was applied to all the same.
  assert.deepEqual(await change(counter, { add: -9 }, later()), answer(0, 4));
  assert.deepEqual(await change(counter, { add: MAX_CREDITS }, later()), answer(MAX_CREDITS, 0));
  assert.deepEqual(await change(counter, { set: 7 }, later()), answer(7, MAX_CREDITS));
  assert.deepEqual(await change(counter, { add: 2 }, later()), answer(9, 7));
  if (store.anchorsCredits === true) {
    assert.deepEqual(await change(counter, { anchor: true }, later()), answer(9, 9));
    assert.deepEqual(await change(counter, { set: 3, anchor: true }, later()), answer(3, 9));
  }
  // Past its deadline: nothing changed, nothing answered.
  assert.equal(await change(counter, { set: 1 }, Date.now() - 1_000), null);

  // The refill due is applied first: `before` is the balance refilled.
  const refilled: CreditCounter = {
    ...counter,
    subject: `${label}:before-refilled:${crypto.randomUUID()}`,
    initial: 3,
    initialAt: Date.now() - 10 * 60_000,
    refill: { amount: 50, everyMs: 60_000 },
  };
  const set = await change(refilled, { set: 20 }, later());
  assert.deepEqual(set && { ...set, resetMs: 0 }, { ...answer(20, 50), resetMs: 0 });
}
