/**
 * The count checks of the API-key flows (a cost, a credit threshold): the
 * api-keys core's own, so it imports nothing of the rate-limits core but
 * `MAX_CREDITS` (from a light public file of its entry point).
 *
 * @module
 */
import { MAX_CREDITS } from "../../rate_limits/credits.ts";

/**
 * Throws a `TypeError` naming `what` unless `value` is a safe integer of at least `min`.
 *
 * @example
 * ```ts
 * import { assertCount } from "./_count.ts";
 * assertCount(5, 0, "cost"); // 5
 * ```
 */
export function assertCount(value: unknown, min: number, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new TypeError(`${what} must be a safe integer >= ${min}`);
  }
  return value;
}

/**
 * Throws a `TypeError` naming `what` unless `value` is a cost: a safe integer
 * of 0–`MAX_CREDITS` (10^15, what the limiter and a usage row count exactly).
 *
 * @example
 * ```ts
 * import { assertCost } from "./_count.ts";
 * assertCost(5, "cost"); // 5
 * ```
 */
export function assertCost(value: unknown, what: string): number {
  assertCount(value, 0, what);
  if ((value as number) > MAX_CREDITS) {
    throw new TypeError(`${what} must be at most ${MAX_CREDITS}`);
  }
  return value as number;
}
