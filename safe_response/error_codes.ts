/**
 * Default machine-readable error codes by HTTP status, and the fallback code
 * for statuses outside the map.
 *
 * @module
 */
import { reasonPhrase } from "./http_status.ts";

/**
 * The default error code of each mapped HTTP status (spec table). The
 * `errorCodes` option is merged over it.
 *
 * @example
 * ```ts
 * import { DEFAULT_ERROR_CODES } from "@saferoute/api-kit/safe-response";
 * DEFAULT_ERROR_CODES[404]; // "NOT_FOUND"
 * ```
 */
export const DEFAULT_ERROR_CODES: Readonly<Record<number, string>> = Object.freeze({
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  409: "CONFLICT",
  422: "UNPROCESSABLE_ENTITY",
  429: "TOO_MANY_REQUESTS",
  500: "INTERNAL_SERVER_ERROR",
  502: "BAD_GATEWAY",
  503: "SERVICE_UNAVAILABLE",
});

/**
 * The default error code of `status`, or `undefined` for an unmapped status.
 *
 * @example
 * ```ts
 * import { lookupErrorCode } from "@saferoute/api-kit/safe-response";
 * lookupErrorCode(429); // "TOO_MANY_REQUESTS"
 * lookupErrorCode(418); // undefined
 * ```
 */
export function lookupErrorCode(status: number): string | undefined {
  return Object.hasOwn(DEFAULT_ERROR_CODES, status) ? DEFAULT_ERROR_CODES[status] : undefined;
}

/**
 * The code used for a status outside every map: the upper-snake reason phrase
 * (410 → `GONE`, 418 → `I_AM_A_TEAPOT`), else `HTTP_<status>`.
 *
 * @example
 * ```ts
 * import { fallbackErrorCode } from "@saferoute/api-kit/safe-response";
 * fallbackErrorCode(418); // "I_AM_A_TEAPOT"
 * fallbackErrorCode(599); // "HTTP_599"
 * ```
 */
export function fallbackErrorCode(status: number): string {
  const phrase = reasonPhrase(status);
  if (phrase === undefined) return `HTTP_${status}`;
  return phrase.replace("'m", " am").replace(/[^A-Za-z0-9]+/g, "_").replace(/^_|_$/g, "")
    .toUpperCase();
}
