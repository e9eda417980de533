/**
 * The brand of this library's errors.
 *
 * @module
 */

/**
 * Brand of this library's errors (on their prototypes): a `{ code, status }`
 * error passes its message to clients only with it. A registered symbol, so
 * every copy of the library (and the API-key errors) agree.
 *
 * @example
 * ```ts
 * import { LIBRARY_ERROR } from "./_library_error.ts";
 * const error = Object.assign(new Error("gone"), { [LIBRARY_ERROR]: true, code: "X", status: 410 });
 * ```
 */
export const LIBRARY_ERROR: unique symbol = Symbol.for("saferoute.api-kit.error");
