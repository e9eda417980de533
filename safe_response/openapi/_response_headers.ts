/**
 * The response headers the document describes, and the ones every response of a status carries:
 * the one table of `applyGlobalErrors` and `applyApiKeysAdminRoutes`.
 * @module
 */
import type { OpenApiSchema } from "../_openapi_schemas.ts";
import {
  RATE_LIMIT_FIELD,
  RATE_LIMIT_POLICY_FIELD,
} from "../../api_keys/metering/_rate_limit_fields.ts";

/** A string header described by `description`. */
export const text = (description: string): OpenApiSchema => ({
  description,
  schema: { type: "string" },
});

/** What each documented response header holds, and its schema. */
export const HEADERS: Readonly<Record<string, OpenApiSchema>> = {
  Deprecation: text(
    "RFC 9745: the route is deprecated (since `@<unix seconds>`); not on a guard's refusal",
  ),
  Sunset: text("RFC 8594: when the route goes away (an HTTP date); not on a guard's refusal"),
  Link: text("RFC 8288 links: pagination (`first`, `prev`, `next`, `last`), deprecation, sunset"),
  "WWW-Authenticate": text(
    'RFC 9110 challenge (an API key guard\'s: `Bearer`, or `Bearer error="invalid_token"` for a ' +
      "key refused)",
  ),
  Location: text(
    "RFC 9110: the redirect target (`@Redirect`'s URL, or the `url` the handler returns)",
  ),
  "Retry-After": text("RFC 9110: seconds (or an HTTP date) to wait before retrying"),
  [RATE_LIMIT_FIELD]: text(
    "IETF RateLimit field (a structured field): each policy's remaining units and reset seconds " +
      "(an API key guard's, on a key with rate limits)",
  ),
  [RATE_LIMIT_POLICY_FIELD]: text(
    "IETF RateLimit-Policy field (a structured field): each policy's quota and window seconds " +
      "(an API key guard's, on a key with rate limits)",
  ),
};

/**
 * The headers documented on every response of a status besides the others: its RFC 9110 fields,
 * and on a 429 the rate-limit fields an API key guard's denial carries.
 */
export const STATUS_HEADERS: Readonly<Record<string, readonly string[]>> = {
  401: ["WWW-Authenticate"],
  429: ["Retry-After", RATE_LIMIT_FIELD, RATE_LIMIT_POLICY_FIELD],
};

/** Adds each header of `names` (described in `headers`) to `response` (not a `$ref`) when missing. */
export function documentHeaders(
  response: unknown,
  names: readonly string[],
  headers: Readonly<Record<string, OpenApiSchema>> = HEADERS,
): void {
  if (names.length === 0 || typeof response !== "object" || response === null) return;
  if ("$ref" in response) return;
  const documented = ((response as { headers?: Record<string, unknown> }).headers ??= {});
  for (const name of names) {
    documented[name] ??= structuredClone(headers[name] ?? text("A header the route sets"));
  }
}
