/**
 * Wire types of the safe-response envelope: the single definition shared by
 * the server (`./safe-response`) and browsers (`./client`). This file imports
 * nothing.
 *
 * Over 300 lines because it is the single definition of the wire format, and
 * each type carries its documentation and example, the one place JSR renders
 * them from.
 *
 * @module
 */

/**
 * Links of a paginated response: relative URLs (path and query, `/` first, never `//`; the
 * pagination guards refuse any other).
 *
 * @example
 * ```ts
 * import type { PaginationLinks } from "./types.ts";
 * const links: PaginationLinks = {
 *   self: "/items?page=2&limit=10",
 *   first: "/items?page=1&limit=10",
 *   prev: "/items?page=1&limit=10",
 *   next: "/items?page=3&limit=10",
 *   last: "/items?page=5&limit=10",
 * };
 * ```
 */
export interface PaginationLinks {
  /** The current page. */
  self: string;
  /** The first page. */
  first: string;
  /** The previous page, or `null` on the first page. */
  prev: string | null;
  /** The next page, or `null` on the last page. */
  next: string | null;
  /** The last page, or `null` when it is unknown (cursor pagination). */
  last: string | null;
}

/**
 * Offset pagination metadata (`meta.pagination` of an offset-paginated route).
 *
 * @example
 * ```ts
 * import type { PaginationMeta } from "./types.ts";
 * const page: PaginationMeta = {
 *   type: "offset", page: 1, limit: 10, total: 42, totalPages: 5,
 *   hasNext: true, hasPrev: false,
 * };
 * ```
 */
export interface PaginationMeta {
  /** Discriminator; optional for compatibility with older servers. */
  type?: "offset";
  /** Current page, starting at 1. */
  page: number;
  /** Page size used for this response. */
  limit: number;
  /** Total number of items. */
  total: number;
  /** `ceil(total / limit)`. */
  totalPages: number;
  /** Whether a later page exists. */
  hasNext: boolean;
  /** Whether an earlier page exists. */
  hasPrev: boolean;
  /** Navigation links, when enabled on the route. */
  links?: PaginationLinks;
}

/**
 * Cursor pagination metadata (`meta.pagination` of a cursor-paginated route).
 *
 * @example
 * ```ts
 * import type { CursorPaginationMeta } from "./types.ts";
 * const feed: CursorPaginationMeta = {
 *   type: "cursor", nextCursor: "abc", previousCursor: null, hasMore: true, limit: 20,
 * };
 * ```
 */
export interface CursorPaginationMeta {
  /** Discriminator. */
  type: "cursor";
  /** Cursor of the next page, or `null` at the end. */
  nextCursor: string | null;
  /** Cursor of the previous page, or `null` at the start. */
  previousCursor: string | null;
  /** Whether more items follow. */
  hasMore: boolean;
  /** Page size used for this response. */
  limit: number;
  /** Total number of items, when the server knows it. */
  totalCount?: number;
  /** Navigation links, when enabled on the route. */
  links?: PaginationLinks;
}

/**
 * Sort metadata (`meta.sort`).
 *
 * @example
 * ```ts
 * import type { SortInfo } from "./types.ts";
 * const sort: SortInfo = { field: "createdAt", order: "desc" };
 * ```
 */
export interface SortInfo {
  /** Field the items are sorted by. */
  field: string;
  /** Sort direction. */
  order: "asc" | "desc";
}

/**
 * Deprecation metadata (`meta.deprecation`) of a deprecated route.
 *
 * @example
 * ```ts
 * import type { DeprecationMeta } from "./types.ts";
 * const deprecation: DeprecationMeta = {
 *   deprecated: true, sunset: "2027-01-01T00:00:00.000Z", link: "https://example.com/migrate",
 * };
 * ```
 */
export interface DeprecationMeta {
  /** Always `true`. */
  deprecated: true;
  /** When the route was deprecated (ISO 8601, whole seconds; absent: the header says `@0`). */
  since?: string;
  /** When the route stops working (ISO 8601, whole seconds). */
  sunset?: string;
  /** Human-readable note. */
  message?: string;
  /** URL of migration documentation. */
  link?: string;
  /** URL of the sunset policy (the `rel="sunset"` link). */
  sunsetLink?: string;
}

/**
 * Rate-limit metadata (`meta.rateLimit`), mirrored from response headers.
 *
 * @example
 * ```ts
 * import type { RateLimitMeta } from "./types.ts";
 * const rateLimit: RateLimitMeta = { limit: 100, remaining: 99, reset: 60 };
 * ```
 */
export interface RateLimitMeta {
  /** Requests allowed in the window. */
  limit: number;
  /** Requests left in the window. */
  remaining: number;
  /** Value of the `{prefix}-Reset` header (seconds until the window resets with `@nestjs/throttler`). */
  reset: number;
  /** Seconds to wait before retrying (from `Retry-After`), on a 429. */
  retryAfter?: number;
}

/**
 * Metadata of a success envelope. Extra string-keyed fields (for example a
 * trace id injected from a request-context store) are allowed.
 *
 * @example
 * ```ts
 * import type { ResponseMeta } from "./types.ts";
 * const meta: ResponseMeta = { message: "Created", responseTime: 3, traceId: "t-1" };
 * ```
 */
export interface ResponseMeta {
  /** Offset or cursor pagination. */
  pagination?: PaginationMeta | CursorPaginationMeta;
  /** A human-readable message (`ResponseMessage`). */
  message?: string;
  /** Time spent handling the request, in milliseconds. */
  responseTime?: number;
  /** Sort applied to the items. */
  sort?: SortInfo;
  /** Filters applied to the items. */
  filters?: Record<string, unknown>;
  /** Present when the route is deprecated. */
  deprecation?: DeprecationMeta;
  /** Mirrored rate-limit headers. */
  rateLimit?: RateLimitMeta;
  /** API version that served the request. */
  apiVersion?: string;
  /** Fields kept by field selection. */
  fields?: string[];
  /** Extra context fields. */
  [key: string]: unknown;
}

/**
 * Metadata of an error envelope or problem-details body.
 *
 * @example
 * ```ts
 * import type { ErrorMeta } from "./types.ts";
 * const meta: ErrorMeta = { responseTime: 2, apiVersion: "1" };
 * ```
 */
export interface ErrorMeta {
  /** Present when the route is deprecated. */
  deprecation?: DeprecationMeta;
  /** Mirrored rate-limit headers. */
  rateLimit?: RateLimitMeta;
  /** Time spent handling the request, in milliseconds. */
  responseTime?: number;
  /** API version that served the request. */
  apiVersion?: string;
  /** Extra context fields. */
  [key: string]: unknown;
}

/**
 * A success envelope.
 *
 * @example
 * ```ts
 * import type { SafeSuccessResponse } from "./types.ts";
 * const body: SafeSuccessResponse<{ id: string }> = {
 *   success: true, statusCode: 200, data: { id: "1" },
 * };
 * ```
 */
export interface SafeSuccessResponse<T = unknown> {
  /** Always `true`. */
  success: true;
  /** HTTP status of the response. */
  statusCode: number;
  /** Optional machine-readable success code. */
  code?: string;
  /** Request id, when request tracking is on. */
  requestId?: string;
  /** The handler's result. */
  data: T;
  /** Response metadata. */
  meta?: ResponseMeta;
  /** When the response was produced. */
  timestamp?: string;
  /** Request path. */
  path?: string;
}

/**
 * The `error` member of an error envelope.
 *
 * @example
 * ```ts
 * import type { SafeErrorBody } from "./types.ts";
 * const error: SafeErrorBody = { code: "NOT_FOUND", message: "Not Found" };
 * ```
 */
export interface SafeErrorBody {
  /** Machine-readable code. */
  code: string;
  /** Human-readable message. */
  message: string;
  /** Extra details (validation messages, for example). */
  details?: unknown;
}

/**
 * An error envelope.
 *
 * @example
 * ```ts
 * import type { SafeErrorResponse } from "./types.ts";
 * const body: SafeErrorResponse = {
 *   success: false, statusCode: 404, error: { code: "NOT_FOUND", message: "Not Found" },
 * };
 * ```
 */
export interface SafeErrorResponse {
  /** Always `false`. */
  success: false;
  /** HTTP status of the response. */
  statusCode: number;
  /** Request id, when request tracking is on. */
  requestId?: string;
  /** The error. */
  error: SafeErrorBody;
  /** Error metadata. */
  meta?: ErrorMeta;
  /** When the response was produced. */
  timestamp?: string;
  /** Request path. */
  path?: string;
}

/**
 * An RFC 9457 problem-details body (`application/problem+json`).
 *
 * @example
 * ```ts
 * import type { SafeProblemDetailsResponse } from "./types.ts";
 * const body: SafeProblemDetailsResponse = {
 *   type: "about:blank", title: "Not Found", status: 404,
 *   detail: "No such item", instance: "/items/9", code: "NOT_FOUND",
 * };
 * ```
 */
export interface SafeProblemDetailsResponse {
  /** Problem type URI. */
  type: string;
  /** Short summary of the problem type. */
  title: string;
  /** HTTP status. */
  status: number;
  /** Explanation of this occurrence. */
  detail: string;
  /** Request path of this occurrence. */
  instance: string;
  /** Machine-readable code (extension). */
  code?: string;
  /** Request id (extension). */
  requestId?: string;
  /** Validation details (extension). */
  details?: unknown;
  /** Error metadata (extension). */
  meta?: ErrorMeta;
}

/**
 * A success or error envelope.
 *
 * @example
 * ```ts
 * import type { SafeResponse } from "./types.ts";
 * function describe(body: SafeResponse<string>): string {
 *   return body.success ? body.data : body.error.message;
 * }
 * ```
 */
export type SafeResponse<T = unknown> = SafeSuccessResponse<T> | SafeErrorResponse;

/**
 * A success envelope, an error envelope or a problem-details body.
 *
 * @example
 * ```ts
 * import type { SafeAnyResponse } from "./types.ts";
 * const body: SafeAnyResponse = { success: true, statusCode: 200, data: null };
 * ```
 */
export type SafeAnyResponse<T = unknown> =
  | SafeSuccessResponse<T>
  | SafeErrorResponse
  | SafeProblemDetailsResponse;
