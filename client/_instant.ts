/**
 * Instants read from text, strictly and the same way everywhere: ISO 8601
 * (RFC 3339) for the server's inputs (admin bodies and queries, imported
 * records, deprecation dates), and the UTC arithmetic the HTTP-date reader
 * (`_retry_after.ts`) shares. Zero-dependency.
 *
 * @module
 */

/**
 * The epoch ms of a UTC date and time given by its parts (`month` 1 to 12, years 0 to 9999 as
 * written), or `NaN` when a part is out of range: no February 30, no hour 24; a second of 60
 * only with `leapSecond` (an HTTP-date may carry one; it reads as the next second).
 *
 * @example
 * ```ts
 * import { utcMs } from "./_instant.ts";
 * utcMs(2031, 1, 1, 0, 0, 0); // Date.UTC(2031, 0, 1)
 * utcMs(2031, 2, 30, 0, 0, 0); // NaN
 * ```
 */
export function utcMs(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  ms = 0,
  leapSecond = false,
): number {
  const inRange = year >= 0 && year <= 9999 && month >= 1 && month <= 12 && day >= 1 &&
    hour <= 23 && minute <= 59 && second <= (leapSecond ? 60 : 59); // false for NaN
  if (!inRange) return NaN;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // years 0 to 99 as written, not 19xx
  if (date.getUTCDate() !== day) return NaN; // 31 November
  return date.getTime() + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
}

/**
 * `YYYY-MM-DD`, then `THH:MM[:SS[.fraction]]` (1 to 9 digits: a database's microseconds read to the
 * ms) and `Z` or `±HH:MM` (absent only for a date alone).
 */
const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):(\d{2})))?$/;

/**
 * The epoch ms of `value` read as an ISO 8601 (RFC 3339) instant, strictly,
 * or `NaN`: date, time and offset (`Z` or `±HH:MM`) all written, each part
 * within its range (no February 30), or, with `dateAlone`, a date alone
 * (`YYYY-MM-DD`, read as UTC midnight). Never a local time nor a guess; callers
 * bound the result.
 *
 * @example
 * ```ts
 * import { isoInstantMs } from "./_instant.ts";
 * isoInstantMs("2031-01-01T02:00:00+02:00", false); // Date.UTC(2031, 0, 1)
 * isoInstantMs("2031-06-01T00:00:00", false); // NaN: no offset
 * ```
 */
export function isoInstantMs(value: unknown, dateAlone: boolean): number {
  const parts = typeof value === "string" ? ISO_INSTANT.exec(value) : null;
  if (parts === null || (parts[4] === undefined && !dateAlone)) return NaN;
  const part = (i: number) => Number(parts[i] ?? 0);
  const ms = Number((parts[7] ?? "").padEnd(3, "0").slice(0, 3));
  const at = utcMs(part(1), part(2), part(3), part(4), part(5), part(6), ms);
  if (parts[9] === undefined) return at; // Z, or a date alone
  const [offsetHours, offsetMinutes] = [part(10), part(11)];
  if (offsetHours > 23 || offsetMinutes > 59) return NaN;
  return at - (parts[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
}
