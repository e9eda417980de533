/**
 * Problem-details titles by HTTP status.
 *
 * @module
 */
import { reasonPhrase } from "./http_status.ts";

/**
 * The default problem title of each mapped HTTP status (spec table).
 *
 * @example
 * ```ts
 * import { DEFAULT_PROBLEM_TITLES } from "@saferoute/api-kit/safe-response";
 * DEFAULT_PROBLEM_TITLES[422]; // "Unprocessable Entity"
 * ```
 */
export const DEFAULT_PROBLEM_TITLES: Readonly<Record<number, string>> = Object.freeze({
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
});

/**
 * The default problem title of `status`, or `undefined` for an unmapped status.
 *
 * @example
 * ```ts
 * import { lookupProblemTitle } from "@saferoute/api-kit/safe-response";
 * lookupProblemTitle(404); // "Not Found"
 * lookupProblemTitle(410); // undefined
 * ```
 */
export function lookupProblemTitle(status: number): string | undefined {
  return Object.hasOwn(DEFAULT_PROBLEM_TITLES, status) ? DEFAULT_PROBLEM_TITLES[status] : undefined;
}

/**
 * The title used in responses: the mapped title, else the status's reason
 * phrase, else `HTTP <status>`.
 *
 * @example
 * ```ts
 * import { problemTitle } from "@saferoute/api-kit/safe-response";
 * problemTitle(410); // "Gone"
 * problemTitle(599); // "HTTP 599"
 * ```
 */
export function problemTitle(status: number): string {
  return lookupProblemTitle(status) ?? reasonPhrase(status) ?? `HTTP ${status}`;
}
