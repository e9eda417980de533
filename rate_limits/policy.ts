/**
 * Rate-limit policies: their shape and the one validator every entry point uses
 * (a direct `check`, later the API-key service's `create`/`rotate` and resolvers).
 *
 * @module
 */
import { assertBounded, assertCost, assertName, MAX_POLICY_LIMIT } from "./_checks.ts";
import { assertKnownFields } from "../telemetry/_known_fields.ts";

/** A named limit: at most `limit` units in any interval of `windowMs`. */
export interface RateLimitPolicy {
  /** Name: 1–64 characters, a lowercase letter or `*` first, then `a-z 0-9 _ - . *` (an IETF structured-field key). */
  readonly name: string;
  /** Units accepted per window (1–999,999,999,999,999). */
  readonly limit: number;
  /** Window length in ms (a safe integer, 1,000–10^14 or from 1 with `subSecond`). */
  readonly windowMs: number;
  /** Units one request counts when the check names no `cost` (0–10^15; default 1). */
  readonly cost?: number;
  /**
   * `true` accepts a `windowMs` under 1,000 ms. Without it such a window is
   * refused: it is almost always seconds given as ms (`windowMs: 10`).
   */
  readonly subSecond?: boolean;
}

/** A validated, frozen policy with its default cost filled in. */
export interface CompiledRateLimitPolicy extends RateLimitPolicy {
  /** Units per request. */
  readonly cost: number;
}

/** Most policies per list. */
export const MAX_RATE_LIMIT_POLICIES = 16;

/**
 * Longest `windowMs`: 10^14 ms (about 3,170 years), far inside what every
 * store computes exactly and can expire: PostgreSQL's timestamps end 9.2e15 ms
 * after 1970 (a counter expires about 1.1 windows from now), Redis's script
 * counts in doubles (exact below 2^53, about 9e15).
 */
const MAX_WINDOW_MS = 1e14;

/** The fields of a policy: any other is refused (a misspelt `cost` silently 1). */
const POLICY_FIELDS: readonly string[] = Object.keys(
  { name: true, limit: true, windowMs: true, cost: true, subSecond: true } satisfies Record<
    keyof RateLimitPolicy,
    true
  >,
);

/** Lists this module compiled (so compiling them again is free). */
const COMPILED = new WeakSet<object>();

/** The compiled list of each input list compiled before (an inline array passed on every call). */
const BY_INPUT = new WeakMap<object, readonly CompiledRateLimitPolicy[]>();

/** Whether `compiled` still matches `input` field by field (no field changed since). */
function unchanged(
  input: readonly RateLimitPolicy[],
  compiled: readonly CompiledRateLimitPolicy[],
): boolean {
  if (input.length !== compiled.length) return false;
  for (let i = 0; i < input.length; i++) {
    const a = input[i];
    const b = compiled[i];
    if (
      typeof a !== "object" || a === null || a.name !== b.name || a.limit !== b.limit ||
      a.windowMs !== b.windowMs ||
      (a.cost ?? 1) !== b.cost || (a.subSecond === true) !== (b.subSecond === true)
    ) return false;
  }
  return true;
}

/** Validates one policy; a `TypeError` names the policy and the field. */
function compileOne(input: unknown, index: number): CompiledRateLimitPolicy {
  if (typeof input !== "object" || input === null) {
    throw new TypeError(`rate-limit policy #${index} must be an object`);
  }
  const policy = input as Record<string, unknown>;
  const name = assertName(policy.name, `rate-limit policy #${index}: name`);
  const label = `rate-limit policy "${name}"`;
  assertKnownFields(policy, POLICY_FIELDS, label);
  const limit = assertBounded(policy.limit, 1, MAX_POLICY_LIMIT, `${label}: limit`);
  const windowMs = assertBounded(policy.windowMs, 1, MAX_WINDOW_MS, `${label}: windowMs`);
  const cost = policy.cost === undefined ? 1 : assertCost(policy.cost, `${label}: cost`);
  const { subSecond } = policy;
  if (subSecond !== undefined && typeof subSecond !== "boolean") {
    throw new TypeError(`${label}: subSecond must be a boolean`);
  }
  if (windowMs < 1_000 && subSecond !== true) {
    throw new TypeError(
      `${label}: windowMs ${windowMs} is under 1000 ms (seconds given as ms?); ` +
        "give subSecond: true to mean it",
    );
  }
  return Object.freeze(
    subSecond === true
      ? { name, limit, windowMs, cost, subSecond }
      : { name, limit, windowMs, cost },
  );
}

/**
 * Validates and freezes a list of policies (1–16, none missing, distinct names: one name
 * counts one window, so a name listed twice with two windows is refused with
 * that reason; a field other than `name`, `limit`, `windowMs`, `cost` and
 * `subSecond` is refused, naming it). Call it once
 * where policies are stored or configured; the limiter accepts its result as is.
 * A list compiled before is remembered by identity (and compiled again when a
 * field changed), so an array kept and passed on every call is validated once.
 * Throws a `TypeError` naming the first bad policy.
 *
 * @example
 * ```ts
 * import { compileRateLimitPolicies } from "./policy.ts";
 * const policies = compileRateLimitPolicies([
 *   { name: "burst", limit: 10, windowMs: 1_000 },
 *   { name: "hourly", limit: 1_000, windowMs: 3_600_000 },
 * ]);
 * ```
 */
export function compileRateLimitPolicies(
  input: readonly RateLimitPolicy[],
): readonly CompiledRateLimitPolicy[] {
  if (COMPILED.has(input)) return input as readonly CompiledRateLimitPolicy[];
  const known = typeof input === "object" && input !== null ? BY_INPUT.get(input) : undefined;
  if (known !== undefined && unchanged(input, known)) return known;
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_RATE_LIMIT_POLICIES) {
    throw new TypeError(`rate-limit policies must be a list of 1-${MAX_RATE_LIMIT_POLICIES}`);
  }
  const windows = new Map<string, number>();
  const list: CompiledRateLimitPolicy[] = [];
  // An index loop, not `map`: a hole (`[, policy]`) is refused, never compiled to nothing.
  for (let index = 0; index < input.length; index++) {
    if (!(index in input)) {
      throw new TypeError(`rate-limit policy #${index} is missing (a hole in the list)`);
    }
    const one = compileOne(input[index], index);
    const other = windows.get(one.name);
    if (other !== undefined && other !== one.windowMs) {
      throw new TypeError(
        `rate-limit policy "${one.name}" is listed twice, with windows of ${other} and ` +
          `${one.windowMs} ms: one name counts one window (rename one)`,
      );
    }
    if (other !== undefined) throw new TypeError(`rate-limit policy "${one.name}" is listed twice`);
    windows.set(one.name, one.windowMs);
    list.push(one);
  }
  const compiled = Object.freeze(list);
  COMPILED.add(compiled);
  BY_INPUT.set(input, compiled);
  return compiled;
}
