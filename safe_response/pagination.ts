/**
 * Handler return shapes of paginated routes and the pagination metadata
 * computed from them.
 *
 * @module
 */
import type { CursorPaginationMeta, PaginationMeta, SortInfo } from "../client/types.ts";
import { isCount } from "./_decimal.ts";
import { cursorPaginationLinks, offsetPaginationLinks } from "./pagination_links.ts";

/**
 * What an offset-paginated handler returns.
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
  /** Page size of this page (default: the one the handler was given). */
  limit?: number;
  /** Sort applied (with `SortMeta`). */
  sort?: SortInfo;
  /** Filters applied (with `FilterMeta`). */
  filters?: Record<string, unknown>;
}

/**
 * What a cursor-paginated handler returns.
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
  /** Page size of this page (default: the one the handler was given). */
  limit?: number;
  /** Total number of items, when known. */
  totalCount?: number;
  /** Sort applied (with `SortMeta`). */
  sort?: SortInfo;
  /** Filters applied (with `FilterMeta`). */
  filters?: Record<string, unknown>;
}

/**
 * Options of the pagination decorators. With `maxLimit` or `defaultLimit`
 * (here or, for `defaultLimit`, the module option), the request's `page` or
 * `cursor` and `limit` are parsed, validated and clamped before the handler
 * runs (`parsePaginationQuery`); with neither, the query is left to the
 * handler. The meta describes the page the handler produced: the result's
 * `limit`, else the page size the handler was given.
 * @example
 * ```ts
 * import type { PaginationOptions } from "@saferoute/api-kit/safe-response";
 * const options: PaginationOptions = { maxLimit: 100, defaultLimit: 20, links: true };
 * ```
 */
export interface PaginationOptions {
  /** Largest page size: a larger requested `limit` is clamped to it. */
  maxLimit?: number;
  /** Page size when the request gives no `limit` (default: the module's, else `maxLimit`). */
  defaultLimit?: number;
  /** Add navigation links (default `false`). */
  links?: boolean;
}

/**
 * The validated pagination setting of a route (what `Paginated` and
 * `CursorPaginated` store, and what a route plan carries, with the module's
 * `defaultLimit` when the route has none).
 * @example
 * ```ts
 * import type { PaginationSetting } from "@saferoute/api-kit/safe-response";
 * const setting: PaginationSetting = { kind: "offset", maxLimit: 100, links: true };
 * ```
 */
export interface PaginationSetting {
  /** Offset or cursor pagination. */
  kind: "offset" | "cursor";
  /** Largest page size. */
  maxLimit?: number;
  /** Page size when the request gives none. */
  defaultLimit?: number;
  /** Whether links are added. */
  links: boolean;
}

/**
 * Validates pagination options into a {@link PaginationSetting}; throws a
 * `TypeError` naming `name` (the decorator or option) on a bad value, or a
 * `defaultLimit` above `maxLimit`.
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
  const { maxLimit, defaultLimit, links = false } = options ?? {};
  for (const [option, value] of [["maxLimit", maxLimit], ["defaultLimit", defaultLimit]]) {
    if (value !== undefined && !isCount(value, 1)) {
      throw new TypeError(`${name}: \`${option}\` must be a positive integer`);
    }
  }
  if (defaultLimit !== undefined && maxLimit !== undefined && defaultLimit > maxLimit) {
    throw new TypeError(`${name}: \`defaultLimit\` must be at most \`maxLimit\``);
  }
  if (typeof links !== "boolean") throw new TypeError(`${name}: \`links\` must be a boolean`);
  const result: PaginationSetting = { kind, links };
  if (maxLimit !== undefined) result.maxLimit = maxLimit;
  if (defaultLimit !== undefined) result.defaultLimit = defaultLimit;
  return result;
}

/**
 * Input of the meta builders: the page size the handler was given (used when
 * the result states no `limit`) and, for links, the request target (path and
 * query).
 * @example
 * ```ts
 * import type { PaginationMetaInput } from "@saferoute/api-kit/safe-response";
 * const input: PaginationMetaInput = { limit: 50, requestTarget: "/items?page=1" };
 * ```
 */
export interface PaginationMetaInput {
  /** The page size the handler was given; the result's `limit` wins. */
  limit?: number;
  /** Request path and query; links are added when given. */
  requestTarget?: string;
}

type Bag = Record<string, unknown>;

const isCursor = (value: unknown): value is string | null =>
  value === null || typeof value === "string";

/**
 * What {@link paginatedResultFault} finds wrong: `shape` (not that result
 * shape: a field missing or of another type), or the number field that is
 * not a safe integer in range (`page` and `limit` at least 1, `total` and
 * `totalCount` at least 0).
 * @example
 * ```ts
 * import type { PaginatedResultFault } from "@saferoute/api-kit/safe-response";
 * const fault: PaginatedResultFault = "page";
 * ```
 */
export type PaginatedResultFault = "shape" | "page" | "limit" | "total" | "totalCount";

/**
 * What is wrong with `value` as a handler result of `kind` pagination
 * ({@link PaginatedResult} or {@link CursorPaginatedResult}), or `undefined`
 * when it is one. A `shape` fault is a result of another shape; a number
 * fault is a paginated result with a number out of range (a server bug).
 * @example
 * ```ts
 * import { paginatedResultFault } from "@saferoute/api-kit/safe-response";
 * paginatedResultFault("offset", { data: [], total: 0, page: 1, limit: 10 }); // undefined
 * paginatedResultFault("offset", [1, 2]); // "shape"
 * paginatedResultFault("offset", { data: [], total: 0, page: 2 ** 53 + 2, limit: 10 }); // "page"
 * ```
 */
export function paginatedResultFault(
  kind: PaginationSetting["kind"],
  value: unknown,
): PaginatedResultFault | undefined {
  if (typeof value !== "object" || value === null) return "shape";
  const v = value as Bag;
  if (!Array.isArray(v.data) || !["number", "undefined"].includes(typeof v.limit)) return "shape";
  if (kind === "offset") {
    if (typeof v.total !== "number" || typeof v.page !== "number") return "shape";
    if (!isCount(v.page, 1)) return "page";
  } else {
    const shaped = isCursor(v.nextCursor) &&
      (v.previousCursor === undefined || isCursor(v.previousCursor)) &&
      typeof v.hasMore === "boolean" &&
      (v.totalCount === undefined || typeof v.totalCount === "number");
    if (!shaped) return "shape";
    if (v.totalCount !== undefined && !isCount(v.totalCount, 0)) return "totalCount";
  }
  if (v.limit !== undefined && !isCount(v.limit, 1)) return "limit";
  if (kind === "offset" && !isCount(v.total, 0)) return "total";
  return undefined;
}

/** `limit`, clamped to `maxLimit` when given. */
export function clampLimit(limit: number, maxLimit?: number): number {
  return maxLimit !== undefined && limit > maxLimit ? maxLimit : limit;
}

/** The page size of `result`: its own `limit`, else `given`; throws when neither is known. */
function pageSize(result: { limit?: number }, given: number | undefined): number {
  const limit = result.limit ?? given;
  if (limit === undefined) throw new TypeError("a paginated result without `limit`, none given");
  return limit;
}

/**
 * Offset pagination meta of the page the handler produced:
 * `totalPages = ceil(total / limit)`, `hasNext = page < totalPages`,
 * `hasPrev = page > 1`, with the result's `limit` (else `input.limit`).
 * Throws a `TypeError` when neither gives a limit.
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
  const limit = pageSize(result, input.limit);
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
 * Cursor pagination meta of the page the handler produced, with the
 * result's `limit` (else `input.limit`). Throws a `TypeError` when neither
 * gives a limit.
 */
export function buildCursorPaginationMeta(
  result: CursorPaginatedResult,
  input: PaginationMetaInput = {},
): CursorPaginationMeta {
  const limit = pageSize(result, input.limit);
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
