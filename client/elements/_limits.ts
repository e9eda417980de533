/**
 * The admin routes' bounds on what the element sends, in one home: the
 * server imports them from here (`api_keys/types.ts`), the element's fields
 * stop typing at them. Imports nothing, so the server takes no browser code
 * with them.
 *
 * @module
 */

/**
 * Longest accepted key name, in code points (as the OpenAPI document's
 * `maxLength` counts them); also the longest search (`q`) `GET /keys` takes.
 * The element's fields stop at as many UTF-16 units (`maxlength`), never
 * past it.
 *
 * @example
 * ```ts
 * import { MAX_API_KEY_NAME_LENGTH } from "./_limits.ts";
 * const fits = (name: string) => [...name].length <= MAX_API_KEY_NAME_LENGTH;
 * ```
 */
export const MAX_API_KEY_NAME_LENGTH = 200;
