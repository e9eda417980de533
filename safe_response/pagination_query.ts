/**
 * The pagination query of a request (`page` or `cursor`, and `limit`),
 * parsed, validated and clamped before a handler sees it. The parser is
 * total: any query gives a parsed query or a {@link PaginationQueryError}
 * (a 400 naming the parameter), in time linear in the query, with no
 * regular expression.
 *
 * @module
 */
import { decimalCount } from "./_decimal.ts";
import { LIBRARY_ERROR } from "./_library_error.ts";
import { clampLimit, type PaginationSetting, resolvePagination } from "./pagination.ts";

/**
 * Longest `cursor` accepted (characters); a longer one is a
 * {@link PaginationQueryError}.
 * @example
 * ```ts
 * import { MAX_CURSOR_LENGTH } from "@saferoute/api-kit/safe-response";
 * MAX_CURSOR_LENGTH; // 512
 * ```
 */
export const MAX_CURSOR_LENGTH = 512;

/**
 * Options of {@link parsePaginationQuery}: the kind of pagination (default
 * `offset`) and the route's limits. A `PaginationSetting` fits.
 * @example
 * ```ts
 * import type { PaginationQueryOptions } from "@saferoute/api-kit/safe-response";
 * const options: PaginationQueryOptions = { kind: "cursor", defaultLimit: 20, maxLimit: 100 };
 * ```
 */
export interface PaginationQueryOptions {
  /** `offset` (`page`, `limit`) or `cursor` (`cursor`, `limit`); default `offset`. */
  kind?: PaginationSetting["kind"];
  /** Page size when the request gives none (default `maxLimit`); at most `maxLimit`. */
  defaultLimit?: number;
  /** Largest page size: a larger `limit` is clamped to it. */
  maxLimit?: number;
}

/**
 * A parsed offset-pagination query.
 * @example
 * ```ts
 * import type { OffsetPaginationQuery } from "@saferoute/api-kit/safe-response";
 * const query: OffsetPaginationQuery = { kind: "offset", page: 2, limit: 20 };
 * const skip = (query.page - 1) * (query.limit ?? 20);
 * ```
 */
export interface OffsetPaginationQuery {
  /** Always `offset`. */
  readonly kind: "offset";
  /** Page, from 1 (default 1). */
  readonly page: number;
  /**
   * Page size: the request's, clamped to `maxLimit`, else `defaultLimit`,
   * else `maxLimit`; `undefined` only when the request gives none and the
   * route has neither limit.
   */
  readonly limit?: number;
}

/**
 * A parsed cursor-pagination query.
 * @example
 * ```ts
 * import type { CursorPaginationQuery } from "@saferoute/api-kit/safe-response";
 * const query: CursorPaginationQuery = { kind: "cursor", limit: 20 };
 * query.cursor; // undefined: the first page
 * ```
 */
export interface CursorPaginationQuery {
  /** Always `cursor`. */
  readonly kind: "cursor";
  /** The request's cursor; `undefined` (the first page) when absent or empty. */
  readonly cursor?: string;
  /** Page size, as in {@link OffsetPaginationQuery.limit}. */
  readonly limit?: number;
}

/**
 * A parsed pagination query of either kind.
 * @example
 * ```ts
 * import type { ParsedPaginationQuery } from "@saferoute/api-kit/safe-response";
 * const describe = (query: ParsedPaginationQuery) =>
 *   query.kind === "offset" ? `page ${query.page}` : `after ${query.cursor ?? "start"}`;
 * ```
 */
export type ParsedPaginationQuery = OffsetPaginationQuery | CursorPaginationQuery;

/**
 * A query parameter {@link PaginationQueryError} can name.
 * @example
 * ```ts
 * import type { PaginationQueryParameter } from "@saferoute/api-kit/safe-response";
 * const parameter: PaginationQueryParameter = "limit";
 * ```
 */
export type PaginationQueryParameter = "page" | "limit" | "cursor";

/**
 * A bad pagination query parameter: a 400 with code
 * `INVALID_PAGINATION_QUERY` whose message names the parameter. An error of
 * this library (branded), so every binding sends it in the configured format
 * (error envelope or problem details).
 * @example
 * ```ts
 * import { PaginationQueryError } from "@saferoute/api-kit/safe-response";
 * const error = new PaginationQueryError("limit", "must be an integer from 1 to 9007199254740991");
 * error.message; // "Query parameter `limit` must be an integer from 1 to 9007199254740991"
 * error.status; // 400
 * ```
 */
export class PaginationQueryError extends Error {
  /** Always `INVALID_PAGINATION_QUERY`. */
  readonly code = "INVALID_PAGINATION_QUERY";
  /** Always 400. */
  readonly status = 400;
  /** The parameter at fault. */
  readonly parameter: PaginationQueryParameter;

  /** The error of `parameter`, which `problem` describes. */
  constructor(parameter: PaginationQueryParameter, problem: string) {
    super(`Query parameter \`${parameter}\` ${problem}`);
    this.name = "PaginationQueryError";
    this.parameter = parameter;
  }
}

Object.defineProperty(PaginationQueryError.prototype, LIBRARY_ERROR, { value: true });

const NOT_A_COUNT = `must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}`;

/** The one value of `name` in `query`: `undefined` when absent; throws when repeated. */
function single(
  query: URLSearchParams | Readonly<Record<string, unknown>>,
  name: PaginationQueryParameter,
): unknown {
  if (query instanceof URLSearchParams) {
    const values = query.getAll(name);
    if (values.length > 1) throw new PaginationQueryError(name, "must be given once");
    return values[0];
  }
  const value = Object.hasOwn(query, name) ? query[name] : undefined;
  if (Array.isArray(value)) throw new PaginationQueryError(name, "must be given once");
  return value;
}

/** A positive safe integer written in ASCII digits, or `undefined` when absent. */
function count(value: unknown, name: PaginationQueryParameter): number | undefined {
  if (value === undefined) return undefined;
  const parsed = typeof value === "string" ? decimalCount(value) : undefined;
  if (parsed === undefined || parsed < 1) throw new PaginationQueryError(name, NOT_A_COUNT);
  return parsed;
}

function cursorOf(value: unknown): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") throw new PaginationQueryError("cursor", "must be a string");
  if (value.length > MAX_CURSOR_LENGTH) {
    throw new PaginationQueryError("cursor", `must be at most ${MAX_CURSOR_LENGTH} characters`);
  }
  return value;
}

/**
 * Parses the pagination parameters of `query` (`URLSearchParams`, or a
 * parsed query object such as Express's `req.query`): `page` (default 1) or
 * `cursor`, and `limit`. `limit` above `maxLimit` is clamped to it; without
 * `limit` the page size is `defaultLimit`, else `maxLimit`. `page` and
 * `limit` must be integers from 1 to `Number.MAX_SAFE_INTEGER` in decimal
 * digits, `cursor` at most {@link MAX_CURSOR_LENGTH} characters (empty is the
 * first page), each given once; anything else throws a
 * {@link PaginationQueryError} (a 400) naming the parameter. Other
 * parameters are ignored. With neither `defaultLimit` nor `maxLimit`,
 * nothing is defaulted or clamped (`limit` is `undefined` when absent).
 * Throws a `TypeError` when the options are invalid.
 * @example
 * ```ts
 * import { parsePaginationQuery } from "@saferoute/api-kit/safe-response";
 * const query = new URLSearchParams("page=3&limit=500");
 * parsePaginationQuery(query, { maxLimit: 100 }); // { kind: "offset", page: 3, limit: 100 }
 * parsePaginationQuery(new URLSearchParams("cursor=abc"), { kind: "cursor", defaultLimit: 20 });
 * // { kind: "cursor", cursor: "abc", limit: 20 }
 * try {
 *   parsePaginationQuery(new URLSearchParams("limit=0"), {});
 * } catch (error) {
 *   (error as Error).message; // "Query parameter `limit` must be an integer from 1 to 9007199254740991"
 * }
 * ```
 */
export function parsePaginationQuery(
  query: URLSearchParams | Readonly<Record<string, unknown>>,
  options: PaginationQueryOptions & { kind: "cursor" },
): CursorPaginationQuery;
/** Parses an offset-pagination query (`page`, `limit`); see the cursor overload. */
export function parsePaginationQuery(
  query: URLSearchParams | Readonly<Record<string, unknown>>,
  options?: PaginationQueryOptions & { kind?: "offset" },
): OffsetPaginationQuery;
/** Parses a pagination query of the options' kind; see the cursor overload. */
export function parsePaginationQuery(
  query: URLSearchParams | Readonly<Record<string, unknown>>,
  options?: PaginationQueryOptions,
): ParsedPaginationQuery;
export function parsePaginationQuery(
  query: URLSearchParams | Readonly<Record<string, unknown>>,
  options: PaginationQueryOptions = {},
): ParsedPaginationQuery {
  const { kind = "offset", maxLimit, defaultLimit } = options;
  resolvePagination(kind, { maxLimit, defaultLimit }, "parsePaginationQuery");
  const given = count(single(query, "limit"), "limit");
  const limit = given === undefined ? defaultLimit ?? maxLimit : clampLimit(given, maxLimit);
  if (kind === "cursor") {
    const cursor = cursorOf(single(query, "cursor"));
    return { kind, ...(cursor === undefined ? {} : { cursor }), ...limitField(limit) };
  }
  return { kind, page: count(single(query, "page"), "page") ?? 1, ...limitField(limit) };
}

const limitField = (limit: number | undefined) => limit === undefined ? {} : { limit };
