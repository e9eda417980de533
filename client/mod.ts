/**
 * Browser client for the safe-response envelope: the wire types and type
 * guards, with no runtime dependencies and no imports outside this folder.
 *
 * @example
 * ```ts
 * import type { SafeResponse } from "@saferoute/api-kit/client";
 * const body: SafeResponse<number> = { success: true, statusCode: 200, data: 1 };
 * ```
 *
 * @module
 */
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
