/**
 * Guards of the `meta` object of a response (success, error or problem
 * details), and the internal checks of whole `meta` objects.
 *
 * Each guard takes the `meta` object, possibly `undefined`, checks one field
 * completely, and narrows `meta` to its own type plus that field.
 *
 * @module
 */
import {
  countFrom,
  isDuration,
  isRecord,
  isString,
  isStringArray,
  oneOf,
  shape,
} from "./_check.ts";
import { isCursorPagination, isOffsetPagination } from "./pagination.ts";
import type {
  CursorPaginationMeta,
  DeprecationMeta,
  PaginationMeta,
  RateLimitMeta,
  SortInfo,
} from "./types.ts";

const isPagination = (value: unknown) => isOffsetPagination(value) || isCursorPagination(value);

/** Whether a value is a well-formed `SortInfo` (internal). */
export const isSortInfo = shape({ field: isString, order: oneOf("asc", "desc") });

const isDeprecationMeta = shape({ deprecated: oneOf(true) }, {
  since: isString,
  sunset: isString,
  message: isString,
  link: isString,
  sunsetLink: isString,
});

/** The server's rate-limit numbers: non-negative safe integers (seconds for `reset`, `retryAfter`). */
const isRateCount = countFrom(0);

const isRateLimitMeta = shape({ limit: isRateCount, remaining: isRateCount, reset: isRateCount }, {
  retryAfter: isRateCount,
});

const errorMetaFields = {
  deprecation: isDeprecationMeta,
  rateLimit: isRateLimitMeta,
  responseTime: isDuration,
  apiVersion: isString,
};

/** A `meta` object with one field well-formed, one check each guard below calls. */
const withPagination = shape({ pagination: isPagination });
const withDeprecation = shape({ deprecation: isDeprecationMeta });
const withResponseTime = shape({ responseTime: isDuration });
const withSort = shape({ sort: isSortInfo });
const withFilters = shape({ filters: isRecord });
const withFields = shape({ fields: isStringArray });
const withRateLimit = shape({ rateLimit: isRateLimitMeta });

/** Whether a value is a well-formed `ResponseMeta` (internal). */
export const isResponseMeta = shape({}, {
  ...errorMetaFields,
  pagination: isPagination,
  message: isString,
  sort: isSortInfo,
  filters: isRecord,
  fields: isStringArray,
});

/** Whether a value is a well-formed `ErrorMeta` (internal). */
export const isErrorMeta = shape({}, errorMetaFields);

/**
 * Whether `meta.pagination` is well-formed offset or cursor pagination.
 * Returns `false`, never throws, for any other value (including `undefined`).
 *
 * @param meta The `meta` object of a response, possibly `undefined`.
 * @returns `true` when `meta.pagination` is a {@linkcode PaginationMeta} or a
 * {@linkcode CursorPaginationMeta}.
 *
 * @example
 * ```ts
 * import { isPaginated, isSuccess } from "@saferoute/api-kit/client";
 * const response = await fetch("/items?page=2");
 * const body: unknown = await response.json().catch(() => undefined); // no JSON: neither kind
 * if (isSuccess(body) && isPaginated(body.meta)) {
 *   console.log(body.meta.pagination.limit);
 * }
 * ```
 */
export function isPaginated<M>(
  meta: M,
): meta is M & { pagination: PaginationMeta | CursorPaginationMeta } {
  return withPagination(meta);
}

/**
 * Whether `meta.deprecation` is well-formed deprecation metadata
 * (`deprecated: true`; `since`, `sunset`, `message`, `link` strings when
 * present). Returns `false`, never throws, for any other value.
 *
 * @param meta The `meta` object of a response, possibly `undefined`.
 * @returns `true` when the route that answered is deprecated.
 *
 * @example
 * ```ts
 * import { isDeprecated, isSuccess } from "@saferoute/api-kit/client";
 * const response = await fetch("/v1/items");
 * const body: unknown = await response.json().catch(() => undefined); // no JSON: neither kind
 * if (isSuccess(body) && isDeprecated(body.meta)) {
 *   console.warn(`deprecated; sunset ${body.meta.deprecation.sunset ?? "not set"}`);
 * }
 * ```
 */
export function isDeprecated<M>(meta: M): meta is M & { deprecation: DeprecationMeta } {
  return withDeprecation(meta);
}

/**
 * Whether `meta.responseTime` (milliseconds) is a finite number of at least
 * 0, as the server measures it. Returns `false`, never throws, for any other
 * value (a negative, `NaN` or infinite one included).
 *
 * @param meta The `meta` object of a response, possibly `undefined`.
 * @returns `true` when the server measured the response time.
 *
 * @example
 * ```ts
 * import { hasResponseTime, isSuccess } from "@saferoute/api-kit/client";
 * const response = await fetch("/items");
 * const body: unknown = await response.json().catch(() => undefined); // no JSON: neither kind
 * if (isSuccess(body) && hasResponseTime(body.meta)) {
 *   console.log(`${body.meta.responseTime.toFixed(1)} ms`);
 * }
 * ```
 */
export function hasResponseTime<M>(meta: M): meta is M & { responseTime: number } {
  return withResponseTime(meta);
}

/**
 * Whether `meta.sort` is well-formed sort metadata (`field` string, `order`
 * `"asc"` or `"desc"`). Returns `false`, never throws, for any other value.
 *
 * @param meta The `meta` object of a response, possibly `undefined`.
 * @returns `true` when `meta.sort` is a {@linkcode SortInfo}.
 *
 * @example
 * ```ts
 * import { hasSort, isSuccess } from "@saferoute/api-kit/client";
 * const response = await fetch("/items?sort=name");
 * const body: unknown = await response.json().catch(() => undefined); // no JSON: neither kind
 * if (isSuccess(body) && hasSort(body.meta)) {
 *   console.log(`sorted by ${body.meta.sort.field} ${body.meta.sort.order}`);
 * }
 * ```
 */
export function hasSort<M>(meta: M): meta is M & { sort: SortInfo } {
  return withSort(meta);
}

/**
 * Whether `meta.filters` is an object (not `null`, not an array). Returns
 * `false`, never throws, for any other value.
 *
 * @param meta The `meta` object of a response, possibly `undefined`.
 * @returns `true` when the server reported the filters it applied.
 *
 * @example
 * ```ts
 * import { hasFilters, isSuccess } from "@saferoute/api-kit/client";
 * const response = await fetch("/items?status=open");
 * const body: unknown = await response.json().catch(() => undefined); // no JSON: neither kind
 * if (isSuccess(body) && hasFilters(body.meta)) {
 *   console.log(Object.keys(body.meta.filters));
 * }
 * ```
 */
export function hasFilters<M>(meta: M): meta is M & { filters: Record<string, unknown> } {
  return withFilters(meta);
}

/**
 * Whether `meta.fields` (the fields kept by field selection) is an array of
 * strings. An empty array counts: it is a selection that kept no field.
 * Returns `false`, never throws, for any other value.
 *
 * @param meta The `meta` object of a response, possibly `undefined`.
 * @returns `true` when the server applied field selection.
 *
 * @example
 * ```ts
 * import { hasFieldSelection, isSuccess } from "@saferoute/api-kit/client";
 * const response = await fetch("/items?fields=id,name");
 * const body: unknown = await response.json().catch(() => undefined); // no JSON: neither kind
 * if (isSuccess(body) && hasFieldSelection(body.meta)) {
 *   console.log(body.meta.fields.join(", "));
 * }
 * ```
 */
export function hasFieldSelection<M>(meta: M): meta is M & { fields: string[] } {
  return withFields(meta);
}

/**
 * Whether `meta.rateLimit` is well-formed rate-limit metadata (`limit`,
 * `remaining`, `reset` and, when present, `retryAfter`: non-negative safe
 * integers, as the server sends them; a negative, fractional or infinite
 * value is refused). Works on the `meta` of success, error and
 * problem-details bodies. Returns `false`, never throws, for any other value.
 *
 * @param meta The `meta` object of a response, possibly `undefined`.
 * @returns `true` when `meta.rateLimit` is a {@linkcode RateLimitMeta}.
 *
 * @example
 * ```ts
 * import { hasRateLimit, isError } from "@saferoute/api-kit/client";
 * const response = await fetch("/items");
 * const body: unknown = await response.json().catch(() => undefined); // no JSON: neither kind
 * // Only a 429 is retried: a 404 behind a rate limit carries `meta.rateLimit` too.
 * if (isError(body) && body.statusCode === 429 && hasRateLimit(body.meta)) {
 *   console.log(`retry in ${body.meta.rateLimit.retryAfter ?? body.meta.rateLimit.reset} s`);
 * }
 * ```
 */
export function hasRateLimit<M>(meta: M): meta is M & { rateLimit: RateLimitMeta } {
  return withRateLimit(meta);
}
