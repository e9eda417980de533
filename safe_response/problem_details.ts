/**
 * RFC 9457 problem-details bodies.
 *
 * @module
 */
import type { ErrorMeta, SafeProblemDetailsResponse } from "../client/types.ts";
import { problemTitle } from "./http_status.ts";

/**
 * Media type of a problem-details body.
 * @example
 * ```ts
 * import { PROBLEM_JSON_CONTENT_TYPE } from "@saferoute/api-kit/safe-response";
 * PROBLEM_JSON_CONTENT_TYPE; // "application/problem+json"
 * ```
 */
export const PROBLEM_JSON_CONTENT_TYPE = "application/problem+json";

/**
 * Fields of a problem-details body.
 * @example
 * ```ts
 * import type { ProblemDetailsInput } from "@saferoute/api-kit/safe-response";
 * const input: ProblemDetailsInput = {
 *   status: 404, code: "NOT_FOUND", detail: "No such item", instance: "/items/9",
 * };
 * ```
 */
export interface ProblemDetailsInput {
  /** HTTP status. */
  status: number;
  /** Machine-readable code. */
  code: string;
  /** Explanation of this occurrence (the error message). */
  detail: string;
  /** Request path. */
  instance: string;
  /** Problem type URI; default `about:blank`. */
  type?: string;
  /** Title; default {@link problemTitle} of the status. */
  title?: string;
  /** Request id. */
  requestId?: string;
  /** Validation details. */
  details?: unknown;
  /** Metadata. */
  meta?: ErrorMeta;
}

/**
 * Builds a problem-details body.
 * @example
 * ```ts
 * import { buildProblemDetails } from "@saferoute/api-kit/safe-response";
 * const body = buildProblemDetails({
 *   status: 404, code: "NOT_FOUND", detail: "No such item", instance: "/items/9",
 * });
 * body.type; // "about:blank"
 * body.title; // "Not Found"
 * ```
 */
export function buildProblemDetails(input: ProblemDetailsInput): SafeProblemDetailsResponse {
  const body: SafeProblemDetailsResponse = {
    type: input.type ?? "about:blank",
    title: input.title ?? problemTitle(input.status),
    status: input.status,
    detail: input.detail,
    instance: input.instance,
    code: input.code,
  };
  if (input.requestId !== undefined) body.requestId = input.requestId;
  if (input.details !== undefined) body.details = input.details;
  if (input.meta !== undefined) body.meta = input.meta;
  return body;
}

/**
 * Problem type URI derived from a base URL and a code: the base without a
 * trailing slash, then `/`, then the code in lower case with `_` as `-`.
 * @example
 * ```ts
 * import { problemTypeUri } from "@saferoute/api-kit/safe-response";
 * problemTypeUri("https://api.example.com/problems/", "NOT_FOUND");
 * // "https://api.example.com/problems/not-found"
 * ```
 */
export function problemTypeUri(baseUrl: string, code: string): string {
  const slug = encodeURIComponent(code.toLowerCase().replaceAll("_", "-"));
  return `${baseUrl.replace(/\/+$/, "")}/${slug}`;
}
