/**
 * The mark of this library's own stores' check functions, whose answers the
 * limiter and its door neither check nor copy again (a leaf: the stores import
 * it without the door).
 *
 * @module
 */

/**
 * The `checkNow` and `checkBatch` functions of this library's stores, whose answers are not
 * checked again (a replaced one is not among them: its answers are).
 */
const WELL_FORMED = new WeakSet<(...args: never[]) => unknown>();

/**
 * Marks `checkNow` (the memory store's), or `checkBatch` (the Redis store's: each check's
 * answers), as answering well-formed results, each answer a new object, a window counter's
 * carrying its `name`, `limit` and `windowMs` (a policy result as the limiter answers it).
 *
 * @example
 * ```ts
 * import { answersWellFormed } from "./_well_formed.ts";
 * const checkNow = () => [];
 * answersWellFormed(checkNow);
 * ```
 */
export function answersWellFormed(checkNow: (...args: never[]) => unknown): void {
  WELL_FORMED.add(checkNow);
}

/**
 * Whether `checkNow` (or `checkBatch`) was marked by `answersWellFormed`: its answers are also
 * made for the call and kept by nobody (the limiter may hand them on).
 *
 * @example
 * ```ts
 * import { answersWellFormed, isWellFormed } from "./_well_formed.ts";
 * const checkNow = () => [];
 * answersWellFormed(checkNow);
 * isWellFormed(checkNow); // true
 * ```
 */
export function isWellFormed(checkNow: unknown): boolean {
  return WELL_FORMED.has(checkNow as (...args: never[]) => unknown);
}
