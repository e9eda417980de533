/**
 * Browser client for the safe-response envelope: the wire types and total
 * type guards, with no runtime dependencies and no imports outside this
 * folder. Every guard accepts any value, returns `false` (never throws) unless
 * the shape matches in full, and narrows its argument.
 *
 * Response bodies go to {@linkcode isSuccess}, {@linkcode isError} and
 * {@linkcode isProblemDetailsResponse}; the `meta` object (possibly
 * `undefined`) to {@linkcode isPaginated}, {@linkcode isDeprecated},
 * {@linkcode hasResponseTime}, {@linkcode hasSort}, {@linkcode hasFilters},
 * {@linkcode hasFieldSelection} and {@linkcode hasRateLimit}; a pagination
 * object to {@linkcode isOffsetPagination} and {@linkcode isCursorPagination}.
 *
 * @example
 * ```ts
 * import { isError, isOffsetPagination, isPaginated, isSuccess } from "@saferoute/api-kit/client";
 * const response = await fetch("/items?page=1");
 * const body: unknown = await response.json().catch(() => undefined); // no JSON: neither kind
 * if (isSuccess<string[]>(body)) {
 *   if (isPaginated(body.meta) && isOffsetPagination(body.meta.pagination)) {
 *     console.log(body.data.length, "of", body.meta.pagination.total);
 *   }
 * } else if (isError(body)) {
 *   console.error(body.error.code);
 * }
 * ```
 *
 * @module
 */
export { isError, isProblemDetailsResponse, isSuccess } from "./responses.ts";
export {
  hasFieldSelection,
  hasFilters,
  hasRateLimit,
  hasResponseTime,
  hasSort,
  isDeprecated,
  isPaginated,
} from "./meta.ts";
export { isCursorPagination, isOffsetPagination } from "./pagination.ts";
export type {
  CursorPaginationMeta,
  DeprecationMeta,
  ErrorMeta,
  PaginationLinks,
  PaginationMeta,
  RateLimitMeta,
  ResponseMeta,
  SafeAnyResponse,
  SafeErrorBody,
  SafeErrorResponse,
  SafeProblemDetailsResponse,
  SafeResponse,
  SafeSuccessResponse,
  SortInfo,
} from "./types.ts";
