/**
 * The count check of the API-key flows (a cost, a credit threshold): the
 * api-keys core's own, so it imports nothing of the rate-limits core but its
 * entry point.
 *
 * @module
 */

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
