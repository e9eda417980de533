/**
 * Handler return shapes of paginated routes and the pagination meta computed from them.
 * @module
 */
import type { CursorPaginationMeta, PaginationMeta, SortInfo } from "../client/types.ts";
import { isCount } from "../client/_decimal.ts";
import { cursorPaginationLinks, offsetPaginationLinks } from "./pagination_links.ts";
import { requestPath } from "./_request_target.ts";
import { optionNames, refuseUnknownOptions } from "./_options.ts";

/** What an offset-paginated handler returns. */
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

/** What a cursor-paginated handler returns. */
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
 * Options of the pagination decorators. With `maxLimit` or `defaultLimit` (or the module's), the
 * query is parsed and clamped before the handler runs; with neither, it is left to the handler.
 */
export interface PaginationOptions {
  /**
   * Largest page size: a larger requested `limit` is clamped to it. Default, with a
   * `defaultLimit` (the route's or the module's): 100, or that `defaultLimit` when larger.
   */
  maxLimit?: number;
  /** Page size when the request gives no `limit` (default: the module's, else `maxLimit`). */
  defaultLimit?: number;
  /** Add navigation links (default `false`). */
  links?: boolean;
}

/** The validated pagination setting of a route. */
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

const OPTION_NAMES = optionNames<PaginationOptions>({
  maxLimit: true,
  defaultLimit: true,
  links: true,
});

/**
 * Validates pagination options; throws a `TypeError` naming `name` on a bad value or an unknown
 * option (`also`: further names the caller reads itself, such as `linkHeader`).
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
  also: readonly string[] = [],
): PaginationSetting {
  if (kind !== "offset" && kind !== "cursor") {
    throw new TypeError(`${name}: \`kind\` must be "offset" or "cursor"`);
  }
  refuseUnknownOptions(options ?? {}, [...OPTION_NAMES, ...also], name);
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
  else if (defaultLimit !== undefined) result.maxLimit = impliedMaxLimit(defaultLimit);
  if (defaultLimit !== undefined) result.defaultLimit = defaultLimit;
  return result;
}

/**
 * The largest page size of a route given a default page size (`defaultLimit`, the route's or the
 * module's) but no `maxLimit`: 100, or that default when larger. A default never leaves the size
 * a request asks for unbounded (a `limit` of 2^53 − 1 handed to a database query).
 */
export function impliedMaxLimit(defaultLimit: number): number {
  return Math.max(100, defaultLimit);
}

/** Input of the meta builders. */
export interface PaginationMetaInput {
  /** The page size the handler was given; the result's `limit` wins. */
  limit?: number;
  /** Request path and query; links are added when given. */
  requestTarget?: string;
}

type Bag = Record<string, unknown>;

const isCursor = (value: unknown): value is string | null =>
  value === null || typeof value === "string";

/** What {@link paginatedResultFault} finds wrong: `shape`, or the number field out of range. */
export type PaginatedResultFault = "shape" | "page" | "limit" | "total" | "totalCount";

/**
 * What is wrong with `value` as a handler result of `kind` pagination, or `undefined`.
 * @example
 * ```ts
 * import { paginatedResultFault } from "@saferoute/api-kit/safe-response";
 * paginatedResultFault("offset", [1, 2]); // "shape"
 * paginatedResultFault("offset", { data: [], total: 0, page: 0, limit: 10 }); // "page"
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
 * Longest request path (UTF-16 units, as sent) links are built of: each of the links, in the body
 * and in `Link`, echoes it, so a longer one gets none.
 */
const MAX_LINKED_PATH = 2_048;

/** Whether links are built for `requestTarget` (given, its path at most `MAX_LINKED_PATH`). */
function linkable(requestTarget: string | undefined): requestTarget is string {
  return requestTarget !== undefined && requestPath(requestTarget).length <= MAX_LINKED_PATH;
}

/**
 * Offset pagination meta of the handler's page (the result's `limit`, else `input.limit`). Throws a
 * `TypeError` when neither gives a limit.
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
  if (linkable(input.requestTarget)) {
    meta.links = offsetPaginationLinks(input.requestTarget, result.page, limit, totalPages);
  }
  return meta;
}

/** Cursor pagination meta of the handler's page; throws a `TypeError` without a limit. */
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
  if (linkable(input.requestTarget)) {
    meta.links = cursorPaginationLinks(
      input.requestTarget,
      limit,
      result.nextCursor,
      previousCursor,
    );
  }
  return meta;
}
