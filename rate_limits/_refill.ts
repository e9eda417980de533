/**
 * The refill calendar in this process (its reference description is
 * docs/rate-limits.md; the Lua script and the SQL functions hold the same
 * rule): a refill's store parameters, the boundaries around a moment, and a
 * balance with the refill due applied.
 *
 * @module
 */
import type { CreditRefill } from "./store.ts";

const DAY_MS = 86_400_000;

/**
 * A refill as the stores take it: `[amount, everyMs, day]`, `daily` as
 * `everyMs` 86,400,000, `monthly` as `day` (default 1); `[0, 0, 0]` for none.
 */
export function refillParams(refill: CreditRefill | undefined): [number, number, number] {
  if (refill === undefined) return [0, 0, 0];
  if ("everyMs" in refill) return [refill.amount, refill.everyMs, 0];
  if (refill.interval === "daily") return [refill.amount, DAY_MS, 0];
  return [refill.amount, 0, refill.day ?? 1];
}

/**
 * A balance of `credits` as of `asOf`, seen at `now` (ms): the refill due
 * since `asOf` applied (SET to its `amount`, `asOf` moved to that boundary),
 * with the refill `amount` (0 without one), the last refill boundary at or
 * before `now` (`start`, 0 without a refill) and ms to the next refill (-1
 * without one). The one home of the lazy refill rule in this process.
 */
export function settleBalance(
  credits: number,
  asOf: number,
  refill: CreditRefill | undefined,
  now: number,
): { credits: number; asOf: number; amount: number; start: number; resetMs: number } {
  if (refill === undefined) return { credits, asOf, amount: 0, start: 0, resetMs: -1 }; // nothing ever due
  const [amount, every, day] = refillParams(refill);
  const [start, next] = creditPeriod(now, every, day);
  const due = amount > 0 && start > asOf;
  return {
    credits: due ? amount : credits,
    asOf: due ? start : asOf,
    amount,
    start,
    resetMs: next < 0 ? -1 : next - now,
  };
}

/** Start of the month `month` (0-based, any integer) of `year` plus `day` clamped to its length, in ms. */
function monthBoundary(year: number, month: number, day: number): number {
  const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(year, month, Math.min(day, last));
}

/**
 * The refill boundaries around `at` (ms): `[start, next]`, the last at or
 * before it and the first after it; `[0, -1]` without a refill (`every` and `day` 0).
 */
export function creditPeriod(at: number, every: number, day: number): [number, number] {
  if (every > 0) {
    const start = Math.floor(at / every) * every;
    return [start, start + every];
  }
  if (day === 0) return [0, -1];
  const date = new Date(at);
  const [year, month] = [date.getUTCFullYear(), date.getUTCMonth()];
  const here = monthBoundary(year, month, day);
  return at >= here
    ? [here, monthBoundary(year, month + 1, day)]
    : [monthBoundary(year, month - 1, day), here];
}
