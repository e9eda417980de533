/**
 * Safe response for NestJS: `SafeResponseModule` (response interceptor,
 * global exception filter, request-id middleware) and the route decorators.
 * Works on the Express and Fastify adapters. OpenAPI (`@nestjs/swagger`):
 * `ApiSafeResponse` and its paginated variants, `ApiSafeErrorResponse(s)`,
 * `ApiSafeProblemResponse`, the composites, and `applyGlobalErrors` for the
 * `swagger.globalErrors` option. The `SafeResponse` type of the
 * wire format lives in `./safe-response` and `./client`; here `SafeResponse`
 * is the decorator.
 *
 * @example
 * ```ts
 * import { Controller, Get, Module } from "@nestjs/common";
 * import { Paginated, SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("items")
 * class ItemsController {
 *   @Get()
 *   @Paginated({ links: true })
 *   list() {
 *     return { data: ["a"], total: 1, page: 1, limit: 10 };
 *   }
 * }
 *
 * @Module({ imports: [SafeResponseModule.register({ requestId: true })], controllers: [ItemsController] })
 * class AppModule {}
 * ```
 *
 * @module
 */
export {
  ApiSafeCatalogErrors,
  type ApiSafeCatalogErrorsOptions,
} from "./api-safe-catalog-errors.decorator.ts";
export {
  ApiSafeErrorResponse,
  ApiSafeErrorResponses,
  ApiSafeProblemResponse,
} from "./api-safe-error-response.decorator.ts";
export {
  ApiCursorPaginatedSafeResponse,
  ApiPaginatedSafeResponse,
  type ApiPaginatedSafeResponseOptions,
  ApiSafeResponse,
  type ApiSafeResponseOptions,
  type SafeModel,
} from "./api-safe-response.decorator.ts";
export { applyGlobalErrors, type OpenApiDocumentLike } from "./apply-global-errors.ts";
export { Deprecated } from "./deprecated.decorator.ts";
export { PROBLEM_TYPE_EXTENSION, SKIP_GLOBAL_ERRORS_EXTENSION } from "./openapi/operation-marks.ts";
export {
  type OpenApiSchema,
  SAFE_RESPONSE_SCHEMAS,
  type SafeResponseSchemaName,
} from "./openapi/schemas.ts";
export { FieldSelection } from "./field-selection.decorator.ts";
export { FilterMeta } from "./filter-meta.decorator.ts";
export { CursorPaginated, Paginated, type PaginationSetting } from "./paginated.decorator.ts";
export { ProblemType } from "./problem-type.decorator.ts";
export { RawResponse } from "./raw-response.decorator.ts";
export { ResponseMessage } from "./response-message.decorator.ts";
export {
  endpointRuntimeDecorators,
  SafeCursorPaginatedEndpoint,
  type SafeCursorPaginatedEndpointOptions,
  SafeEndpoint,
  type SafeEndpointCommonOptions,
  type SafeEndpointOptions,
  SafePaginatedEndpoint,
  type SafePaginatedEndpointOptions,
} from "./safe-endpoint.decorator.ts";
export type {
  ApiVersionContext,
  SafeResponseModuleAsyncOptions,
  SafeResponseModuleOptions,
} from "./safe-response-options.interface.ts";
export {
  DEPRECATED_METADATA,
  ENDPOINT_PROBLEM_DETAILS_METADATA,
  FIELD_SELECTION_METADATA,
  FILTER_META_METADATA,
  PAGINATION_METADATA,
  PROBLEM_TYPE_METADATA,
  RAW_RESPONSE_METADATA,
  RESPONSE_MESSAGE_METADATA,
  SAFE_RESPONSE_SETTINGS,
  SKIP_GLOBAL_ERRORS_METADATA,
  SORT_META_METADATA,
  SUCCESS_CODE_METADATA,
} from "./safe-response.constants.ts";
export { SafeResponse, type SafeResponseOptions } from "./safe-response.decorator.ts";
export { SafeResponseModule } from "./safe-response.module.ts";
export { SkipGlobalErrors } from "./skip-global-errors.decorator.ts";
export { SortMeta } from "./sort-meta.decorator.ts";
export { SuccessCode } from "./success-code.decorator.ts";
