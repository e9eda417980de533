/**
 * JSON media types, one rule for every binding: which `Content-Type` a JSON body is sent with, and
 * which a route's own `Content-Type` leaves its result to be wrapped in.
 * @module
 */

/** The media type of JSON (`Content-Type`'s essence). */
export const JSON_CONTENT_TYPE = "application/json";

/**
 * The `Content-Type` of a JSON body a binding types itself (an envelope, a plain value), as Nest on
 * Express and Fastify send it: the same header on every binding.
 */
export const JSON_HEADER = `${JSON_CONTENT_TYPE}; charset=utf-8`;

/**
 * Whether the `Content-Type` `value` is JSON: `application/json` or a `+json` structured syntax
 * suffix (RFC 6839, e.g. `application/problem+json`), whatever its parameters and case.
 */
export function isJsonMediaType(value: string): boolean {
  const essence = value.split(";", 1)[0].trim().toLowerCase();
  return essence === JSON_CONTENT_TYPE || (essence.includes("/") && essence.endsWith("+json"));
}
