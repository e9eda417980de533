/**
 * The one reader of decimal counts in untrusted text (query parameters,
 * response headers): ASCII digits only, at most as many as
 * `Number.MAX_SAFE_INTEGER` has, and a safe integer. No regular expression.
 *
 * @module
 */

/** Digits of `Number.MAX_SAFE_INTEGER`: a longer run is refused before it is read. */
const MAX_DIGITS = String(Number.MAX_SAFE_INTEGER).length;

/**
 * The non-negative safe integer `text` writes in decimal digits, or
 * `undefined` (empty, another character, too many digits, unsafe).
 */
export function decimalCount(text: string): number | undefined {
  if (text.length === 0 || text.length > MAX_DIGITS) return undefined;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 48 || code > 57) return undefined;
  }
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * Whether `value` is a safe integer of at least `min`: the one check of the
 * counts of pagination and rate-limit meta, and of the element's usage buckets.
 */
export const isCount = (value: unknown, min: number): value is number =>
  Number.isSafeInteger(value) && (value as number) >= min;
