/**
 * Well-formed sample values of every shape the client guards check, shared by
 * the unit and property tests. Tests derive broken variants from them.
 *
 * @module
 */
import type {
  CursorPaginationMeta,
  PaginationLinks,
  PaginationMeta,
  ResponseMeta,
  SafeErrorResponse,
  SafeProblemDetailsResponse,
  SafeSuccessResponse,
} from "../../client/mod.ts";

export const links: PaginationLinks = {
  self: "/items?page=2&limit=10",
  first: "/items?page=1&limit=10",
  prev: "/items?page=1&limit=10",
  next: null,
  last: "/items?page=2&limit=10",
};

export const offset: PaginationMeta = {
  type: "offset",
  page: 2,
  limit: 10,
  total: 12,
  totalPages: 2,
  hasNext: false,
  hasPrev: true,
  links,
};

export const cursor: CursorPaginationMeta = {
  type: "cursor",
  nextCursor: "c2",
  previousCursor: null,
  hasMore: true,
  limit: 20,
  totalCount: 41,
  links: { ...links, last: null },
};

export const fullMeta: ResponseMeta = {
  pagination: offset,
  message: "Listed",
  responseTime: 1.5,
  sort: { field: "name", order: "asc" },
  filters: { status: "open" },
  deprecation: { deprecated: true, since: "2026-01-01", sunset: "2027-01-01", link: "/docs" },
  rateLimit: { limit: 100, remaining: 99, reset: 60, retryAfter: 1 },
  apiVersion: "2",
  fields: ["id", "name"],
  traceId: "t-1",
};

export const success: SafeSuccessResponse<string[]> = {
  success: true,
  statusCode: 200,
  code: "OK",
  requestId: "r-1",
  data: ["a"],
  meta: fullMeta,
  timestamp: "2026-05-01T00:00:00.000Z",
  path: "/items",
};

export const failure: SafeErrorResponse = {
  success: false,
  statusCode: 404,
  requestId: "r-2",
  error: { code: "NOT_FOUND", message: "Not Found", details: ["id"] },
  meta: { responseTime: 2, apiVersion: "2", rateLimit: { limit: 1, remaining: 0, reset: 5 } },
  timestamp: "2026-05-01T00:00:00.000Z",
  path: "/items/9",
};

export const problem: SafeProblemDetailsResponse = {
  type: "about:blank",
  title: "Not Found",
  status: 404,
  detail: "No such item",
  instance: "/items/9",
  code: "NOT_FOUND",
  requestId: "r-3",
  details: { id: "9" },
  meta: { deprecation: { deprecated: true }, responseTime: 3 },
};

/** Values of every JSON kind that are no envelope, meta or pagination object. */
export const nonObjects: unknown[] = [null, undefined, 0, 1, -1.5, "", "x", true, false, [], [1], [
  {},
]];

/** A copy of `value` with `key` set to `replacement` (or removed when it is `undefined`). */
export function withField(value: object, key: string, replacement: unknown): unknown {
  const copy: Record<string, unknown> = { ...value };
  if (replacement === undefined) delete copy[key];
  else copy[key] = replacement;
  return copy;
}
