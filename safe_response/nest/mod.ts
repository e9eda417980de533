/**
 * Safe response for NestJS: `SafeResponseModule` (response interceptor,
 * global exception filter, request-id middleware) and the runtime route
 * decorators, a thin layer over the core's `Responder`
 * (`./safe-response`), and `safeValidationExceptionFactory` for
 * `ValidationPipe` (per-field validation details). Works on the Express and
 * Fastify adapters and never imports `@nestjs/swagger` (an optional peer):
 * the decorators that also document (`Deprecated`, `ProblemType`,
 * `SkipGlobalErrors`, `SafeResponse`) write swagger's metadata by key, read
 * only when the app builds a document.
 * The OpenAPI decorators and `applyGlobalErrors` live in
 * `./safe-response/openapi`. The `SafeResponse` type of the wire format lives
 * in `./safe-response` and `./client`; here `SafeResponse` is the decorator.
 * `SafeException` here is the core's catalog exception as a Nest
 * `HttpException` (the filter treats both alike).
 * @example
 * ```ts
 * import { Controller, Get, Module } from "@nestjs/common";
 * import { Paginated, SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("items")
 * class ItemsController {
 *   @Get()
 *   @Paginated({ links: true })
 *   list() { return { data: ["a"], total: 1, page: 1, limit: 10 }; }
 * }
 * @Module({ imports: [SafeResponseModule.register({ requestId: true })], controllers: [ItemsController] })
 * class AppModule {}
 * ```
 *
 * @module
 */
export type { PaginationSetting } from "../pagination.ts";
export type { ValidationErrorLike } from "../validation_details.ts";
export {
  CursorPaginated,
  Deprecated,
  FieldSelection,
  FilterMeta,
  Paginated,
  type PaginatedOptions,
  PaginationQuery,
  ProblemType,
  RawResponse,
  ResponseMessage,
  SafeResponse,
  type SafeResponseOptions,
  SkipGlobalErrors,
  SortMeta,
  SuccessCode,
} from "./safe_response.decorators.ts";
export { SafeExceptionFilter } from "./deprecated_names.ts";
export {
  type CatalogSafeException,
  createSafeException,
  SafeException,
} from "./safe_response.exception.ts";
export { safeValidationExceptionFactory } from "./safe_validation.factory.ts";
export {
  type ApiVersionContext,
  SafeResponseModule,
  type SafeResponseModuleAsyncOptions,
  type SafeResponseModuleOptions,
} from "./safe_response.module.ts";
