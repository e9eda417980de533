/**
 * Guards of response bodies: success envelope, error envelope and RFC 9457
 * problem details.
 *
 * @module
 */
import { isHttpStatus, isString, oneOf, shape } from "./_check.ts";
import { isErrorMeta, isResponseMeta } from "./meta.ts";
import type {
  SafeErrorResponse,
  SafeProblemDetailsResponse,
  SafeSuccessResponse,
} from "./types.ts";

const common = { requestId: isString, timestamp: isString, path: isString };

const isSuccessBody = shape(
  { success: oneOf(true), statusCode: isHttpStatus, data: (value) => value !== undefined },
  { ...common, code: isString, meta: isResponseMeta },
);

const isErrorBody = shape(
  {
    success: oneOf(false),
    statusCode: isHttpStatus,
    error: shape({ code: isString, message: isString }),
  },
  { ...common, meta: isErrorMeta },
);

const isProblemBody = shape(
  { type: isString, title: isString, status: isHttpStatus, detail: isString, instance: isString },
  { code: isString, requestId: isString, meta: isErrorMeta },
);

/**
 * Whether a response body is a success envelope: `success: true`, a
 * `statusCode` (an integer from 100 to 599), a `data` member, and well-formed
 * optional fields (`meta` checked in full: pagination, sort, filters,
 * deprecation, rate limit, response time, fields). Returns `false`, never
 * throws, for any other value.
 *
 * `T` is not checked at runtime: it only types `data` for callers that know it.
 * On a typed `SafeResponse<T>` or `SafeAnyResponse<T>`, narrowing keeps `T`.
 *
 * @param body A parsed response body.
 * @returns `true` when `body` is a {@linkcode SafeSuccessResponse}.
 *
 * @example
 * ```ts
 * import { isSuccess } from "@saferoute/api-kit/client";
 * const response = await fetch("/items/1");
 * const body: unknown = await response.json().catch(() => undefined); // no JSON: neither kind
 * if (isSuccess<{ id: string }>(body)) {
 *   console.log(body.data.id, body.meta?.message);
 * }
 * ```
 */
export function isSuccess<T = unknown>(body: unknown): body is SafeSuccessResponse<T> {
  return isSuccessBody(body);
}

/**
 * Whether a response body is an error envelope: `success: false`, a
 * `statusCode` (an integer from 100 to 599), `error.code` and `error.message`
 * strings, and well-formed optional fields. Returns `false`, never throws, for
 * any other value
 * (problem-details bodies included: see {@linkcode isProblemDetailsResponse}).
 *
 * @param body A parsed response body.
 * @returns `true` when `body` is a {@linkcode SafeErrorResponse}.
 *
 * @example
 * ```ts
 * import { isError } from "@saferoute/api-kit/client";
 * const response = await fetch("/items/404");
 * const body: unknown = await response.json().catch(() => undefined); // no JSON: neither kind
 * if (isError(body)) {
 *   console.error(body.statusCode, body.error.code, body.error.message);
 * }
 * ```
 */
export function isError(body: unknown): body is SafeErrorResponse {
  return isErrorBody(body);
}

/**
 * Whether a response body is an RFC 9457 problem-details body: `type`,
 * `title`, `detail`, `instance` strings, a `status` (an integer from 100 to
 * 599), and well-formed optional extensions (`code`, `requestId`, `meta`).
 * Returns `false`, never throws, for any other value.
 *
 * @param body A parsed response body (`application/problem+json`).
 * @returns `true` when `body` is a {@linkcode SafeProblemDetailsResponse}.
 *
 * @example
 * ```ts
 * import { isProblemDetailsResponse } from "@saferoute/api-kit/client";
 * const response = await fetch("/items/404");
 * const body: unknown = await response.json().catch(() => undefined); // no JSON: neither kind
 * if (isProblemDetailsResponse(body)) {
 *   console.error(body.status, body.title, body.detail, body.code);
 * }
 * ```
 */
export function isProblemDetailsResponse(body: unknown): body is SafeProblemDetailsResponse {
  return isProblemBody(body);
}
