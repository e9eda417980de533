/**
 * The pagination query of a request, parsed, validated and clamped before a handler sees it (linear
 * time, no regular expression).
 * @module
 */
import { decimalCount } from "../client/_decimal.ts";
import { LIBRARY_ERROR } from "./_library_error.ts";
import { clampLimit, type PaginationSetting, resolvePagination } from "./pagination.ts";
import { MAX_CURSOR_LENGTH } from "./pagination_links.ts";

/** Options of {@link parsePaginationQuery}; a `PaginationSetting` fits. */
export interface PaginationQueryOptions {
  /** `offset` (`page`, `limit`) or `cursor` (`cursor`, `limit`); default `offset`. */
  kind?: PaginationSetting["kind"];
  /** Page size when the request gives none (default `maxLimit`); at most `maxLimit`. */
  defaultLimit?: number;
  /** Largest page size: a larger `limit` is clamped to it. */
  maxLimit?: number;
}

/** A parsed offset-pagination query. */
export interface OffsetPaginationQuery {
  /** Always `offset`. */
  readonly kind: "offset";
  /** Page, from 1 (default 1). */
  readonly page: number;
  /** Page size; `undefined` only when neither the request nor the route gives one. */
  readonly limit?: number;
}

/** A parsed cursor-pagination query. */
export interface CursorPaginationQuery {
  /** Always `cursor`. */
  readonly kind: "cursor";
  /** The request's cursor; `undefined` (the first page) when absent or empty. */
  readonly cursor?: string;
  /** Page size, as in {@link OffsetPaginationQuery.limit}. */
  readonly limit?: number;
}

/** A parsed pagination query of either kind. */
export type ParsedPaginationQuery = OffsetPaginationQuery | CursorPaginationQuery;

/**
 * A query parameter {@link PaginationQueryError} can name.
 */
export type PaginationQueryParameter = "page" | "limit" | "cursor";

/**
 * A bad pagination query parameter: a 400 `INVALID_PAGINATION_QUERY` naming the parameter.
 * @example
 * ```ts
 * import { PaginationQueryError } from "@saferoute/api-kit/safe-response";
 * new PaginationQueryError("limit", "must be given once").message; // "Query parameter `limit` must be given once"
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

/**
 * A positive safe integer written in ASCII digits (or a number already, as a
 * querystring schema's coercion gives), or `undefined` when absent.
 */
function count(value: unknown, name: PaginationQueryParameter): number | undefined {
  if (value === undefined) return undefined;
  const parsed = typeof value === "string"
    ? decimalCount(value)
    : Number.isSafeInteger(value)
    ? value as number
    : undefined;
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
 * Parses `page` (default 1) or `cursor`, and `limit` of `query` (`URLSearchParams` or a parsed
 * query object): `limit` is clamped to `maxLimit`, defaulted to `defaultLimit`, else `maxLimit`.
 * A bad or repeated value throws a {@link PaginationQueryError}; bad options a `TypeError`.
 * @example
 * ```ts
 * import { parsePaginationQuery } from "@saferoute/api-kit/safe-response";
 * parsePaginationQuery(new URLSearchParams("page=3&limit=500"), { maxLimit: 100 });
 * // { kind: "offset", page: 3, limit: 100 }
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
  const { kind = "offset", ...rest } = options;
  return readPaginationQuery(query, resolvePagination(kind, rest, "parsePaginationQuery"));
}

/** {@link parsePaginationQuery} under a route's resolved `setting` (not checked again). */
export function readPaginationQuery(
  query: URLSearchParams | Readonly<Record<string, unknown>>,
  { kind, maxLimit, defaultLimit }: PaginationSetting,
): ParsedPaginationQuery {
  const given = count(single(query, "limit"), "limit");
  const limit = given === undefined ? defaultLimit ?? maxLimit : clampLimit(given, maxLimit);
  if (kind === "cursor") {
    const cursor = cursorOf(single(query, "cursor"));
    return { kind, ...(cursor === undefined ? {} : { cursor }), ...limitField(limit) };
  }
  return { kind, page: count(single(query, "page"), "page") ?? 1, ...limitField(limit) };
}

const limitField = (limit: number | undefined) => limit === undefined ? {} : { limit };
