/**
 * Guards of the pagination shapes (`meta.pagination`).
 *
 * @module
 */
import { countFrom, isBoolean, isStringOrNull, oneOf, shape } from "./_check.ts";
import { mayLeaveOrigin } from "./_origin.ts";
import type { CursorPaginationMeta, PaginationMeta } from "./types.ts";

/**
 * A link the server builds: a path and query, `/` first, nothing a URL parser reads as another
 * host (`mayLeaveOrigin`), so a link of a spoofed answer never leads an app to another origin.
 */
const isPath = (value: unknown): boolean =>
  typeof value === "string" && value[0] === "/" && !mayLeaveOrigin(value);
const isPathOrNull = (value: unknown): boolean => value === null || isPath(value);

const isPaginationLinks = shape({
  self: isPath,
  first: isPath,
  prev: isPathOrNull,
  next: isPathOrNull,
  last: isPathOrNull,
});

const isOffset = shape({
  page: countFrom(1),
  limit: countFrom(1),
  total: countFrom(0),
  totalPages: countFrom(0),
  hasNext: isBoolean,
  hasPrev: isBoolean,
}, { type: oneOf("offset"), links: isPaginationLinks });

const isCursor = shape({
  type: oneOf("cursor"),
  nextCursor: isStringOrNull,
  previousCursor: isStringOrNull,
  hasMore: isBoolean,
  limit: countFrom(1),
}, { totalCount: countFrom(0), links: isPaginationLinks });

/**
 * Whether a pagination object is offset pagination (`page`, `limit`, `total`,
 * `totalPages`, `hasNext`, `hasPrev`; `type` absent or `"offset"`). Every
 * field is checked, `links` included when present (each a path, `/` first,
 * never `//` or `/\\`); `page` and `limit` are
 * safe integers from 1, `total` and `totalPages` from 0. Returns `false`,
 * never throws, for any other value.
 *
 * @param pagination A pagination object, usually `meta.pagination`.
 * @returns `true` when `pagination` is a well-formed {@linkcode PaginationMeta}.
 *
 * @example
 * ```ts
 * import { isOffsetPagination, isPaginated } from "@saferoute/api-kit/client";
 * import type { ResponseMeta } from "@saferoute/api-kit/client";
 * declare const meta: ResponseMeta | undefined;
 * if (isPaginated(meta) && isOffsetPagination(meta.pagination)) {
 *   console.log(`page ${meta.pagination.page} of ${meta.pagination.totalPages}`);
 * }
 * ```
 */
export function isOffsetPagination(pagination: unknown): pagination is PaginationMeta {
  return isOffset(pagination);
}

/**
 * Whether a pagination object is cursor pagination (`type: "cursor"`,
 * `nextCursor`, `previousCursor`, `hasMore`, `limit`). Every field is
 * checked, `totalCount` and `links` included when present (links as
 * `isOffsetPagination` reads them); `limit` is a safe
 * integer from 1, `totalCount` from 0. Returns `false`, never throws, for any
 * other value.
 *
 * @param pagination A pagination object, usually `meta.pagination`.
 * @returns `true` when `pagination` is a well-formed {@linkcode CursorPaginationMeta}.
 *
 * @example
 * ```ts
 * import { isCursorPagination, isPaginated } from "@saferoute/api-kit/client";
 * import type { ResponseMeta } from "@saferoute/api-kit/client";
 * declare const meta: ResponseMeta | undefined;
 * if (isPaginated(meta) && isCursorPagination(meta.pagination) && meta.pagination.hasMore) {
 *   const { nextCursor } = meta.pagination;
 *   if (nextCursor !== null) console.log(`next: ?cursor=${encodeURIComponent(nextCursor)}`);
 * }
 * ```
 */
export function isCursorPagination(pagination: unknown): pagination is CursorPaginationMeta {
  return isCursor(pagination);
}
