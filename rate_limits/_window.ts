/**
 * The window rule in this process (its reference description is
 * docs/rate-limits.md, "The algorithm: a sliding window of sub-buckets"): a
 * window of `windowMs` is counted in `SUB_BUCKETS` equal sub-buckets, and a
 * check counts the sub-bucket of its moment and the `SUB_BUCKETS` before it.
 * Integer arithmetic on safe integers only, as the Lua script and the SQL
 * functions do it.
 *
 * @module
 */

/** Sub-buckets per window: a check counts `SUB_BUCKETS + 1` of them. */
export const SUB_BUCKETS = 10;

/**
 * The sub-bucket of moment `t` (ms) in a window of `windowMs`:
 * floor(t × SUB_BUCKETS / windowMs).
 *
 * @example
 * ```ts
 * import { subBucket } from "./_window.ts";
 * subBucket(1_250, 1_000); // 12
 * ```
 */
export function subBucket(t: number, windowMs: number): number {
  return Math.floor((t * SUB_BUCKETS) / windowMs);
}

/**
 * The first ms of sub-bucket `q`: ceil(q × windowMs / SUB_BUCKETS).
 *
 * @example
 * ```ts
 * import { bucketStart } from "./_window.ts";
 * bucketStart(12, 1_000); // 1_200
 * ```
 */
export function bucketStart(q: number, windowMs: number): number {
  return Math.ceil((q * windowMs) / SUB_BUCKETS);
}

/**
 * The first ms at which the units of sub-bucket `q` are no longer counted:
 * the start of sub-bucket q + SUB_BUCKETS + 1.
 *
 * @example
 * ```ts
 * import { leavesAt } from "./_window.ts";
 * leavesAt(12, 1_000); // 2_300
 * ```
 */
export function leavesAt(q: number, windowMs: number): number {
  return bucketStart(q + SUB_BUCKETS + 1, windowMs);
}
