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
 * `GET /keys` takes. The name fields check it in code points; the search field
 * stops at as many UTF-16 units (`maxlength`), never past it.
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
