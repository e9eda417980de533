/**
 * Input checks of the rate-limits core, internal: a count, a cost, credits, a
 * policy or balance name, a counter subject. Each throws a
 * `TypeError` naming what is wrong.
 *
 * @module
 */
import { hasLoneSurrogate } from "../telemetry/_text.ts";
import { MAX_SUBJECT_LENGTH } from "./store.ts";

const NAME = /^[a-z*][a-z0-9_\-.*]{0,63}$/;

/**
 * Throws a `TypeError` naming `what` unless `name` is a policy name: 1–64
 * characters of `a-z 0-9 _ - . *`, a letter or `*` first.
 *
 * @example
 * ```ts
 * import { assertName } from "./_checks.ts";
 * assertName("burst", "policy name"); // "burst"
 * ```
 */
export function assertName(name: unknown, what: string): string {
  if (typeof name !== "string" || name.length > 64 || !NAME.test(name)) {
    throw new TypeError(
      `${what} must be 1-64 characters of a-z 0-9 _ - . * starting with a-z or *`,
    );
  }
  return name;
}

/**
 * Why `subject` cannot be a counter subject (or a slot), or `undefined` when
 * it can: 1–512 characters without control characters or `{` `}` (the Redis
 * store's keys hold it beside `:` separators and inside a `{…}` hash tag: a
 * brace would make two counters one key), and no lone surrogate (the remote
 * stores would count it as U+FFFD, with every other one in its place).
 *
 * @example
 * ```ts
 * import { subjectFault } from "./_checks.ts";
 * subjectFault("key:0190"); // undefined
 * ```
 */
export function subjectFault(subject: unknown): string | undefined {
  if (
    typeof subject !== "string" || subject.length === 0 || subject.length > MAX_SUBJECT_LENGTH
  ) {
    return `rate-limit subject must be a string of 1-${MAX_SUBJECT_LENGTH} characters`;
  }
  for (let i = 0; i < subject.length; i++) {
    const code = subject.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) {
      return "rate-limit subject must not contain control characters";
    }
    if (code === 0x7b || code === 0x7d) return "rate-limit subject must not contain { or }";
  }
  if (hasLoneSurrogate(subject)) {
    return "rate-limit subject must not contain a lone surrogate (UTF-8 sends it as U+FFFD)";
  }
  return undefined;
}

/**
 * Throws a `TypeError` unless `subject` is a counter subject (or a slot): see
 * `subjectFault`.
 *
 * @example
 * ```ts
 * import { assertSubject } from "./_checks.ts";
 * assertSubject("key:0190"); // "key:0190"
 * ```
 */
export function assertSubject(subject: unknown): string {
  const fault = subjectFault(subject);
  if (fault !== undefined) throw new TypeError(fault);
  return subject as string;
}

/** Most credits in a balance, refill, cost or change (exact in every store). */
export const MAX_CREDITS = 1e15;

/**
 * Largest policy `limit`: 15 digits, the most an sf-Integer holds (RFC 9651), which
 * RateLimit-Policy's `q` and RateLimit's `r` are.
 */
export const MAX_POLICY_LIMIT = 999_999_999_999_999;

/** Throws a `TypeError` unless `value` is a safe integer of at least `min`. */
export function assertCount(value: unknown, min: number, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new TypeError(`${what} must be a safe integer >= ${min}`);
  }
  return value;
}

/** Most units of a cost (exact in every store, as `MAX_CREDITS`). */
const MAX_COST = 1e15;

/**
 * Throws a `TypeError` naming `what` unless `value` is a cost: a safe integer
 * of 0–10^15 (a route's, a policy's or a check's).
 *
 * @example
 * ```ts
 * import { assertCost } from "./_checks.ts";
 * assertCost(5, "route cost"); // 5
 * ```
 */
export function assertCost(value: unknown, what: string): number {
  assertCount(value, 0, what);
  if ((value as number) > MAX_COST) throw new TypeError(`${what} must be at most ${MAX_COST}`);
  return value as number;
}

/** Throws a `TypeError` naming `what` unless `value` is a safe integer in `min`–`max`. */
export function assertBounded(value: unknown, min: number, max: number, what: string): number {
  assertCount(value, min, what);
  if ((value as number) > max) throw new TypeError(`${what} must be at most ${max}`);
  return value as number;
}

/**
 * Latest time counted, in ms since the epoch (year 30,489): a window's
 * sub-bucket arithmetic (`10 × t`) stays a safe integer, so exact (a `Date`
 * holds up to 8.64e15, where a sub-bucket would land a millisecond off).
 */
export const MAX_EPOCH_MS = 9e14;

/**
 * Throws a `TypeError` naming `what` unless `value` is a time in ms since the
 * epoch: a safe integer of 0–9e14 (`MAX_EPOCH_MS`).
 *
 * @example
 * ```ts
 * import { assertEpochMs } from "./_checks.ts";
 * assertEpochMs(Date.UTC(2026, 0, 1), "nowMs"); // 1767225600000
 * ```
 */
export function assertEpochMs(value: unknown, what: string): number {
  return assertBounded(value, 0, MAX_EPOCH_MS, what);
}

/** Throws a `TypeError` naming `what` unless `value` is 0–`MAX_CREDITS` credits. */
export function assertCredits(value: unknown, what: string): number {
  return assertBounded(value, 0, MAX_CREDITS, what);
}
