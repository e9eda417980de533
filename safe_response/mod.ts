/**
 * Safe response, framework-free core: the response pipeline (`Responder`), the envelope and
 * problem-details builders, error resolution, pagination, header helpers, option and wire types.
 * Usable from any framework; `./safe-response/nest` and `./safe-response/fetch` are thin bindings.
 * @example
 * ```ts
 * import { buildErrorBody, buildSuccessBody, resolveError } from "@saferoute/api-kit/safe-response";
 * Deno.serve((request) => {
 *   try {
 *     const body = buildSuccessBody({ statusCode: 200, data: { hello: "world" } });
 *     return Response.json(body);
 *   } catch (thrown) {
 *     const error = resolveError(thrown);
 *     const body = buildErrorBody({ ...error, path: new URL(request.url).pathname });
 *     return Response.json(body, { status: error.statusCode });
 *   }
 * });
 * ```
 * @module
 */
export type * from "../client/types.ts";
export * from "./deprecated_names.ts";
export {
  type DeprecatedOptions,
  deprecationHeaderValue,
  type DeprecationPlan,
  resolveDeprecation,
  sunsetHeaderValue,
} from "./deprecation_headers.ts";
export * from "./envelope.ts";
export * from "./error_catalog.ts";
export {
  type ErrorCodeMapper,
  type ErrorResolutionOptions,
  type ResolvedError,
  resolveError,
} from "./error_resolution.ts";
export * from "./field_selection.ts";
export * from "./http_status.ts";
export * from "./i18n_adapter.ts";
export type * from "./options.ts";
export {
  buildPaginationMeta,
  type CursorPaginatedResult,
  type PaginatedResult,
  type PaginatedResultFault,
  paginatedResultFault,
  type PaginationMetaInput,
  type PaginationOptions,
  type PaginationSetting,
  resolvePagination,
} from "./pagination.ts";
export type { LinkHeaderOption } from "./_link_header.ts";
export {
  MAX_CURSOR_LENGTH,
  offsetPaginationLinks,
  paginationLinkHeader,
} from "./pagination_links.ts";
export {
  type CursorPaginationQuery,
  type OffsetPaginationQuery,
  PaginationQueryError,
  type PaginationQueryOptions,
  type PaginationQueryParameter,
  type ParsedPaginationQuery,
  parsePaginationQuery,
} from "./pagination_query.ts";
export * from "./problem_details.ts";
export {
  DEFAULT_RATE_LIMIT_HEADER_PREFIX,
  type HeaderReader,
  parseRateLimitHeaders,
  parseStandardRateLimitHeaders,
  readRateLimitHeaders,
} from "./rate_limit.ts";
export * from "./responder.ts";
export * from "./settings.ts";
export { isSortInfo } from "./sort_filter.ts";
export {
  attachValidationFields,
  describeValidationErrors,
  MAX_VALIDATION_DETAILS,
  type ValidationDetailsMode,
  type ValidationErrorLike,
  type ValidationFieldDetail,
} from "./validation_details.ts";
