/**
 * The mark of this library's own stores' check functions, whose answers the
 * limiter and its door neither check nor copy again (a leaf: the stores import
 * it without the door).
 *
 * @module
 */
import type { CompiledRateLimitPolicy } from "./policy.ts";
import type { CounterResult } from "./store.ts";

/**
 * The `checkNow` and `checkBatch` functions of this library's stores, whose answers are not
 * checked again (a replaced one is not among them: its answers are).
 */
const WELL_FORMED = new WeakSet<(...args: never[]) => unknown>();

/**
 * An in-process store's check of compiled policies for one subject, each counting its
 * policy's cost, at `nowMs` as `checkNow` takes it: `checkNow`'s answers, no counter built.
 */
export type PolicyCheck = (
  subject: string,
  policies: readonly CompiledRateLimitPolicy[],
  nowMs?: number,
) => CounterResult[];

/** The `PolicyCheck` of each marked `checkNow` that has one. */
const POLICY_CHECKS = new WeakMap<(...args: never[]) => unknown, PolicyCheck>();

/**
 * Marks `checkNow` (the memory store's), or `checkBatch` (the Redis store's: each check's
 * answers), as answering well-formed results, each answer a new object, a window counter's
 * carrying its `name`, `limit` and `windowMs` (a policy result as the limiter answers it);
 * `checkPolicies`: `checkNow`'s check of compiled policies without counters (the limiter's
 * door calls it for a check of compiled policies without options).
 *
 * @example
 * ```ts
 * import { answersWellFormed } from "./_well_formed.ts";
 * const checkNow = () => [];
 * answersWellFormed(checkNow);
 * ```
 */
export function answersWellFormed(
  checkNow: (...args: never[]) => unknown,
  checkPolicies?: PolicyCheck,
): void {
  WELL_FORMED.add(checkNow);
  if (checkPolicies !== undefined) POLICY_CHECKS.set(checkNow, checkPolicies);
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

/**
 * The `PolicyCheck` `checkNow` was marked with, if any (a replaced `checkNow` has none).
 *
 * @example
 * ```ts
 * import { answersWellFormed, policyCheckOf } from "./_well_formed.ts";
 * const checkNow = () => [];
 * answersWellFormed(checkNow, () => []);
 * policyCheckOf(checkNow)?.("key_1", []); // []
 * ```
 */
export function policyCheckOf(checkNow: unknown): PolicyCheck | undefined {
  return POLICY_CHECKS.get(checkNow as (...args: never[]) => unknown);
}
