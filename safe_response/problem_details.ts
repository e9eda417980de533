/**
 * RFC 9457 problem-details bodies.
 * @module
 */
import type { ErrorMeta, SafeProblemDetailsResponse } from "../client/types.ts";
import { problemTitle } from "./http_status.ts";

/** Media type of a problem-details body. */
export const PROBLEM_JSON_CONTENT_TYPE = "application/problem+json";

/** Fields of a problem-details body. */
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
 * buildProblemDetails({ status: 404, code: "NOT_FOUND", detail: "No such item", instance: "/items/9" }).title;
 * // "Not Found"
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
 * Problem type URI derived from a base URL and a code (`NOT_FOUND` → `<base>/not-found`).
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
