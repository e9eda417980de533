/**
 * The one reader of `Retry-After` (RFC 9110: delay-seconds or an HTTP-date),
 * for the server's `meta.rateLimit` and the settings element alike:
 * zero-dependency, bounded, never negative.
 *
 * @module
 */
import { decimalCount, isCount } from "./_decimal.ts";

/** Longest header value read as a count or an HTTP-date; a longer one is absent. */
const MAX_HEADER_VALUE_LENGTH = 64;

/** The first value of a header (a list's first line). */
const firstOf = (value: unknown): unknown => Array.isArray(value) ? value[0] : value;

/** A count header: a safe non-negative integer (a number, or its decimal digits), else `undefined`. */
export function headerCount(value: unknown): number | undefined {
  const first = firstOf(value);
  if (typeof first === "number") return isCount(first, 0) ? first : undefined;
  if (typeof first !== "string" || first.length > MAX_HEADER_VALUE_LENGTH) return undefined;
  return decimalCount(first.trim());
}

/**
 * Seconds to wait from a `Retry-After` value: delay-seconds, or the seconds
 * until an HTTP-date (which names its day and month: a value without a letter
 * is no date), 0 when it is past; `undefined` for none or an unreadable one.
 *
 * @example
 * ```ts
 * import { parseRetryAfter } from "./_retry_after.ts";
 * parseRetryAfter("120"); // 120
 * parseRetryAfter("Thu, 01 Jan 1970 00:00:30 GMT", 0); // 30
 * ```
 */
export function parseRetryAfter(value: unknown, now: number = Date.now()): number | undefined {
  const seconds = headerCount(value);
  if (seconds !== undefined) return seconds;
  const first = firstOf(value);
  if (typeof first !== "string" || first.length > MAX_HEADER_VALUE_LENGTH) return undefined;
  const at = /[a-z]/i.test(first) ? Date.parse(first) : NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
