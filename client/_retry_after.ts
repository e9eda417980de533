/**
 * The one reader of `Retry-After` (RFC 9110: delay-seconds or an HTTP-date),
 * for the server's `meta.rateLimit` and the settings element alike:
 * zero-dependency, bounded, never negative.
 *
 * @module
 */
import { decimalCount, isCount } from "./_decimal.ts";
import { utcMs } from "./_instant.ts";

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

const LONG_DAY_NAMES = [
  "Sunday",
  "Monday",
  "Tuesday",
  "Wednesday",
  "Thursday",
  "Friday",
  "Saturday",
];
const DAY_NAMES = LONG_DAY_NAMES.map((name) => name.slice(0, 3));
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** The number the `length` ASCII digits of `text` at `at` write, or `NaN`. */
function digitsAt(text: string, at: number, length: number): number {
  return decimalCount(text.slice(at, at + length)) ?? NaN;
}

/** The instant of a date (`month` 0 to 11) and the `HH:MM:SS` at `time` in `text`; `NaN` when malformed. */
function instant(year: number, month: number, day: number, text: string, time: number): number {
  if (text[time + 2] !== ":" || text[time + 5] !== ":") return NaN;
  const at = (offset: number) => digitsAt(text, time + offset, 2);
  return utcMs(year, month + 1, day, at(0), at(3), at(6), 0, true);
}

/**
 * The instant of an HTTP-date (RFC 9110 section 5.6.7, case-sensitive, GMT): IMF-fixdate
 * (`Sun, 06 Nov 1994 08:49:37 GMT`), or the obsolete rfc850 (`Sunday, 06-Nov-94 08:49:37 GMT`:
 * a two-digit year that would put the date more than 50 years after `now` is the past century's)
 * and asctime (`Sun Nov  6 08:49:37 1994`) forms; `NaN` for any other text. Fixed positions:
 * linear, no regular expression.
 *
 * @example
 * ```ts
 * import { httpDateMs } from "./_retry_after.ts";
 * httpDateMs("Thu, 01 Jan 1970 00:00:30 GMT", 0); // 30000
 * ```
 */
export function httpDateMs(text: string, now: number): number {
  const comma = text.indexOf(",");
  const dayName = comma < 0 ? "" : text.slice(0, comma); // asctime has no comma
  if (comma === 3 && DAY_NAMES.includes(dayName) && text.length === 29) {
    if (text[4] !== " " || text[7] !== " " || text[11] !== " " || text[16] !== " ") return NaN;
    if (!text.endsWith(" GMT")) return NaN;
    const month = MONTHS.indexOf(text.slice(8, 11));
    return instant(digitsAt(text, 12, 4), month, digitsAt(text, 5, 2), text, 17);
  }
  if (LONG_DAY_NAMES.includes(dayName)) {
    const date = text.slice(comma + 1); // " 06-Nov-94 08:49:37 GMT"
    if (date.length !== 23 || date[0] !== " " || date[3] !== "-" || date[7] !== "-") return NaN;
    if (date[10] !== " " || !date.endsWith(" GMT")) return NaN;
    // The year of those two digits from 49 years back to 50 ahead, then a century back if that
    // instant is more than 50 years after `now` (RFC 9110: the most recent past year then).
    const nowYear = new Date(now).getUTCFullYear();
    const base = nowYear - 49;
    const year = base + (((digitsAt(date, 8, 2) - base) % 100) + 100) % 100;
    const at = (candidate: number) =>
      instant(candidate, MONTHS.indexOf(date.slice(4, 7)), digitsAt(date, 1, 2), date, 11);
    const ahead = at(year);
    return ahead > new Date(now).setUTCFullYear(nowYear + 50) ? at(year - 100) : ahead;
  }
  if (text.length !== 24 || !DAY_NAMES.includes(text.slice(0, 3))) return NaN;
  if (text[3] !== " " || text[7] !== " " || text[10] !== " " || text[19] !== " ") return NaN;
  const day = text[8] === " " ? digitsAt(text, 9, 1) : digitsAt(text, 8, 2);
  return instant(digitsAt(text, 20, 4), MONTHS.indexOf(text.slice(4, 7)), day, text, 11);
}

/**
 * Seconds to wait from a `Retry-After` value: delay-seconds, or the seconds
 * until an HTTP-date (RFC 9110's three forms, nothing else), 0 when it is
 * past; `undefined` for none or an unreadable one.
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
  const at = httpDateMs(first.trim(), now);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
