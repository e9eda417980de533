/**
 * Handler return shapes of paginated routes and the pagination metadata
 * computed from them.
 *
 * @module
 */
import type { CursorPaginationMeta, PaginationMeta, SortInfo } from "../client/types.ts";
import { cursorPaginationLinks, offsetPaginationLinks } from "./pagination_links.ts";

/**
 * What an offset-paginated handler returns.
 *
 * @example
 * ```ts
 * import type { PaginatedResult } from "@saferoute/api-kit/safe-response";
 * const result: PaginatedResult<string> = { data: ["a"], total: 1, page: 1, limit: 10 };
 * ```
 */
export interface PaginatedResult<T = unknown> {
  /** Items of the page. */
  data: T[];
  /** Total number of items. */
  total: number;
  /** Current page, starting at 1. */
  page: number;
  /** Requested page size. */
  limit: number;
  /** Sort applied (with `SortMeta`). */
  sort?: SortInfo;
  /** Filters applied (with `FilterMeta`). */
  filters?: Record<string, unknown>;
}

/**
 * What a cursor-paginated handler returns.
 *
 * @example
 * ```ts
 * import type { CursorPaginatedResult } from "@saferoute/api-kit/safe-response";
 * const result: CursorPaginatedResult<string> = {
 *   data: ["a"], nextCursor: "b", hasMore: true, limit: 1,
 * };
 * ```
 */
export interface CursorPaginatedResult<T = unknown> {
  /** Items of the page. */
  data: T[];
  /** Cursor of the next page, or `null` at the end. */
  nextCursor: string | null;
  /** Cursor of the previous page. */
  previousCursor?: string | null;
  /** Whether more items follow. */
  hasMore: boolean;
  /** Requested page size. */
  limit: number;
  /** Total number of items, when known. */
  totalCount?: number;
  /** Sort applied (with `SortMeta`). */
  sort?: SortInfo;
  /** Filters applied (with `FilterMeta`). */
  filters?: Record<string, unknown>;
}

/**
 * Options of the pagination decorators and meta builders.
 *
 * @example
 * ```ts
 * import type { PaginationOptions } from "@saferoute/api-kit/safe-response";
 * const options: PaginationOptions = { maxLimit: 100, links: true };
 * ```
 */
export interface PaginationOptions {
  /** Upper bound of the page size reported in the meta. */
  maxLimit?: number;
  /** Add navigation links (default `false`). */
  links?: boolean;
}

/**
 * The validated pagination setting of a route (what `Paginated` and
 * `CursorPaginated` store, and what a route plan carries).
 *
 * @example
 * ```ts
 * import type { PaginationSetting } from "@saferoute/api-kit/safe-response";
 * const setting: PaginationSetting = { kind: "offset", maxLimit: 100, links: true };
 * ```
 */
export interface PaginationSetting {
  /** Offset or cursor pagination. */
  kind: "offset" | "cursor";
  /** Clamp of the reported page size. */
  maxLimit?: number;
  /** Whether links are added. */
  links: boolean;
}

/**
 * Validates pagination options into a {@link PaginationSetting}; throws a
 * `TypeError` naming `name` (the decorator or option) on a bad value.
 *
 * @example
 * ```ts
 * import { resolvePagination } from "@saferoute/api-kit/safe-response";
 * resolvePagination("cursor", { links: true }, "CursorPaginated"); // { kind: "cursor", links: true }
 * ```
 */
export function resolvePagination(
  kind: PaginationSetting["kind"],
  options: PaginationOptions,
  name: string,
): PaginationSetting {
  const { maxLimit, links = false } = options ?? {};
  if (maxLimit !== undefined && (!Number.isSafeInteger(maxLimit) || maxLimit < 1)) {
    throw new TypeError(`${name}: \`maxLimit\` must be a positive integer`);
  }
  if (typeof links !== "boolean") throw new TypeError(`${name}: \`links\` must be a boolean`);
  const result: PaginationSetting = { kind, links };
  if (maxLimit !== undefined) result.maxLimit = maxLimit;
  return result;
}

/**
 * Input of the meta builders: the clamp and, for links, the request target
 * (path and query).
 *
 * @example
 * ```ts
 * import type { PaginationMetaInput } from "@saferoute/api-kit/safe-response";
 * const input: PaginationMetaInput = { maxLimit: 50, requestTarget: "/items?page=1" };
 * ```
 */
export interface PaginationMetaInput {
  /** Upper bound of the page size. */
  maxLimit?: number;
  /** Request path and query; links are added when given. */
  requestTarget?: string;
}

type Bag = Record<string, unknown>;

const isCount = (value: unknown, min: number): value is number =>
  Number.isSafeInteger(value) && (value as number) >= min;

const isCursor = (value: unknown): value is string | null =>
  value === null || typeof value === "string";

/**
 * Whether `value` has the {@link PaginatedResult} shape (integers; `page` and
 * `limit` at least 1, `total` at least 0).
 *
 * @example
 * ```ts
 * import { isPaginatedResult } from "@saferoute/api-kit/safe-response";
 * isPaginatedResult({ data: [], total: 0, page: 1, limit: 10 }); // true
 * isPaginatedResult([1, 2]); // false
 * ```
 */
export function isPaginatedResult(value: unknown): value is PaginatedResult {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Bag;
  return Array.isArray(v.data) && isCount(v.total, 0) && isCount(v.page, 1) && isCount(v.limit, 1);
}

/**
 * Whether `value` has the {@link CursorPaginatedResult} shape.
 *
 * @example
 * ```ts
 * import { isCursorPaginatedResult } from "@saferoute/api-kit/safe-response";
 * isCursorPaginatedResult({ data: [], nextCursor: null, hasMore: false, limit: 10 }); // true
 * ```
 */
export function isCursorPaginatedResult(value: unknown): value is CursorPaginatedResult {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Bag;
  return Array.isArray(v.data) && isCursor(v.nextCursor) &&
    (v.previousCursor === undefined || isCursor(v.previousCursor)) &&
    typeof v.hasMore === "boolean" && isCount(v.limit, 1) &&
    (v.totalCount === undefined || isCount(v.totalCount, 0));
}

/**
 * The page size reported: `limit`, clamped to `maxLimit` when given.
 *
 * @example
 * ```ts
 * import { clampLimit } from "@saferoute/api-kit/safe-response";
 * clampLimit(500, 100); // 100
 * clampLimit(20); // 20
 * ```
 */
export function clampLimit(limit: number, maxLimit?: number): number {
  return maxLimit !== undefined && limit > maxLimit ? maxLimit : limit;
}

/**
 * Offset pagination meta: `totalPages = ceil(total / limit)`,
 * `hasNext = page < totalPages`, `hasPrev = page > 1`, with the clamped limit.
 *
 * @example
 * ```ts
 * import { buildPaginationMeta } from "@saferoute/api-kit/safe-response";
 * const meta = buildPaginationMeta({ data: [], total: 42, page: 2, limit: 10 });
 * // { type: "offset", page: 2, limit: 10, total: 42, totalPages: 5, hasNext: true, hasPrev: true }
 * ```
 */
export function buildPaginationMeta(
  result: PaginatedResult,
  input: PaginationMetaInput = {},
): PaginationMeta {
  const limit = clampLimit(result.limit, input.maxLimit);
  const totalPages = Math.ceil(result.total / limit);
  const meta: PaginationMeta = {
    type: "offset",
    page: result.page,
    limit,
    total: result.total,
    totalPages,
    hasNext: result.page < totalPages,
    hasPrev: result.page > 1,
  };
  if (input.requestTarget !== undefined) {
    meta.links = offsetPaginationLinks(input.requestTarget, result.page, limit, totalPages);
  }
  return meta;
}

/**
 * Cursor pagination meta, with the clamped limit.
 *
 * @example
 * ```ts
 * import { buildCursorPaginationMeta } from "@saferoute/api-kit/safe-response";
 * const meta = buildCursorPaginationMeta(
 *   { data: [], nextCursor: "n", hasMore: true, limit: 20 },
 *   { requestTarget: "/feed" },
 * );
 * meta.links?.next; // "/feed?cursor=n&limit=20"
 * ```
 */
export function buildCursorPaginationMeta(
  result: CursorPaginatedResult,
  input: PaginationMetaInput = {},
): CursorPaginationMeta {
  const limit = clampLimit(result.limit, input.maxLimit);
  const previousCursor = result.previousCursor ?? null;
  const meta: CursorPaginationMeta = {
    type: "cursor",
    nextCursor: result.nextCursor,
    previousCursor,
    hasMore: result.hasMore,
    limit,
  };
  if (result.totalCount !== undefined) meta.totalCount = result.totalCount;
  if (input.requestTarget !== undefined) {
    meta.links = cursorPaginationLinks(
      input.requestTarget,
      limit,
      result.nextCursor,
      previousCursor,
    );
  }
  return meta;
}
