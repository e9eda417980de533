/**
 * Credit specs: the one validator every entry point uses (the limiter's
 * `credits`, later the API-key service's `create`/`rotate`), the refill's
 * store parameters, and the refill boundaries the in-memory store computes.
 *
 * @module
 */
import { assertCount } from "./policy.ts";
import type { CreditChange, CreditRefill } from "./store.ts";

/** Most credits in a balance, refill, cost or change (exact in every store). */
export const MAX_CREDITS = 1e15;

/** Longest `everyMs` (366 days). */
const MAX_EVERY_MS = 366 * 86_400_000;
const DAY_MS = 86_400_000;

/** Credits as a key stores them: the balance and its refill rule. */
export interface Credits {
  /** Balance (0–`MAX_CREDITS`). */
  readonly remaining: number;
  /** Refill rule. */
  readonly refill?: CreditRefill;
}

/** Throws a `TypeError` naming `what` unless `value` is a safe integer in `min`–`max`. */
function assertBounded(value: unknown, min: number, max: number, what: string): number {
  assertCount(value, min, what);
  if ((value as number) > max) throw new TypeError(`${what} must be at most ${max}`);
  return value as number;
}

/** Throws a `TypeError` naming `what` unless `value` is 0–`MAX_CREDITS` credits. */
export function assertCredits(value: unknown, what: string): number {
  return assertBounded(value, 0, MAX_CREDITS, what);
}

/**
 * Validates and freezes a refill rule; `undefined` stays `undefined`. Throws a
 * `TypeError` naming the field (`label` prefixes it).
 *
 * @example
 * ```ts
 * import { compileCreditRefill } from "./credits.ts";
 * compileCreditRefill({ amount: 100, interval: "monthly", day: 31 });
 * ```
 */
export function compileCreditRefill(
  refill: unknown,
  label = "credits.refill",
): CreditRefill | undefined {
  if (refill === undefined) return undefined;
  if (typeof refill !== "object" || refill === null) {
    throw new TypeError(`${label} must be an object`);
  }
  const r = refill as Record<string, unknown>;
  const amount = assertBounded(r.amount, 1, MAX_CREDITS, `${label}.amount`);
  if (r.everyMs !== undefined) {
    if (r.interval !== undefined || r.day !== undefined) {
      throw new TypeError(`${label} takes everyMs or interval, not both`);
    }
    return Object.freeze({
      amount,
      everyMs: assertBounded(r.everyMs, 1, MAX_EVERY_MS, `${label}.everyMs`),
    });
  }
  if (r.interval !== "daily" && r.interval !== "monthly") {
    throw new TypeError(`${label}.interval must be "daily" or "monthly" (or give everyMs)`);
  }
  if (r.day === undefined) return Object.freeze({ amount, interval: r.interval });
  if (r.interval !== "monthly") throw new TypeError(`${label}.day is only for interval "monthly"`);
  return Object.freeze({
    amount,
    interval: r.interval,
    day: assertBounded(r.day, 1, 31, `${label}.day`),
  });
}

/**
 * Validates and freezes credits (`remaining` 0–`MAX_CREDITS`, a valid refill);
 * call it where keys are created or rotated. Throws a `TypeError` naming the field.
 *
 * @example
 * ```ts
 * import { compileCredits } from "./credits.ts";
 * const credits = compileCredits({ remaining: 20, refill: { amount: 20, everyMs: 3_600_000 } });
 * ```
 */
export function compileCredits(input: Credits): Credits {
  if (typeof input !== "object" || input === null) {
    throw new TypeError("credits must be an object");
  }
  const remaining = assertCredits(input.remaining, "credits.remaining");
  const refill = compileCreditRefill(input.refill);
  return Object.freeze(refill === undefined ? { remaining } : { remaining, refill });
}

/** Throws a `TypeError` unless `change` is `{ set }` or `{ add }` within `MAX_CREDITS`. */
export function assertCreditChange(change: CreditChange): CreditChange {
  const c = change as Record<string, unknown>;
  if (typeof c !== "object" || c === null || ("set" in c) === ("add" in c)) {
    throw new TypeError("a credit change is { set: n } or { add: n }");
  }
  if ("set" in c) return { set: assertCredits(c.set, "set") };
  return { add: assertBounded(c.add, -MAX_CREDITS, MAX_CREDITS, "add") };
}

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
 * with the refill `amount` (0 without one) and ms to the next refill (-1
 * without one). The one home of the lazy refill rule in this process.
 */
export function settleBalance(
  credits: number,
  asOf: number,
  refill: CreditRefill | undefined,
  now: number,
): { credits: number; asOf: number; amount: number; resetMs: number } {
  const [amount, every, day] = refillParams(refill);
  const [start, next] = creditPeriod(now, every, day);
  const due = amount > 0 && start > asOf;
  return {
    credits: due ? amount : credits,
    asOf: due ? start : asOf,
    amount,
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
