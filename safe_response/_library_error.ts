/**
 * The brand of this library's errors.
 *
 * @module
 */

/**
 * Brand of this library's errors (on their prototypes): only a branded
 * `{ code, status }` error shows its message to clients. Shared by every copy.
 */
export const LIBRARY_ERROR: unique symbol = Symbol.for("saferoute.api-kit.error");
