/**
 * The admin routes' bounds on what the element sends, in one home: the
 * server imports them from here (`api_keys/types.ts`, `api_keys/_key_name.ts`),
 * the element's fields check them. Imports nothing, so the server takes no
 * browser code with them.
 *
 * @module
 */

/**
 * Longest accepted key name, in code points (as the OpenAPI document's
 * `maxLength` counts them: `fitsCodePoints`); also the longest search (`q`)
 * `GET /keys` takes. The name fields check it in code points; the search sends
 * its first code points only (`firstCodePoints`).
 *
 * @example
 * ```ts
 * import { fitsCodePoints, MAX_API_KEY_NAME_LENGTH } from "./_limits.ts";
 * const fits = (name: string) => fitsCodePoints(name, MAX_API_KEY_NAME_LENGTH);
 * ```
 */
export const MAX_API_KEY_NAME_LENGTH = 200;

/**
 * Whether `text` holds at most `max` code points, as JSON Schema's `maxLength` counts them (the
 * OpenAPI document's): the bound of key names and of the admin routes' `q`.
 */
export function fitsCodePoints(text: string, max: number): boolean {
  if (text.length <= max) return true; // never more code points than UTF-16 units
  let count = 0;
  for (const _ of text) if (++count > max) return false;
  return true;
}

/** The first `max` code points of `text` (never half of a surrogate pair): a search cut to `q`'s bound. */
export function firstCodePoints(text: string, max: number): string {
  if (fitsCodePoints(text, max)) return text;
  let end = 0;
  let count = 0;
  for (const point of text) {
    if (++count > max) break;
    end += point.length;
  }
  return text.slice(0, end);
}
