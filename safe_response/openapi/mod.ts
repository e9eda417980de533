/**
 * Safe response OpenAPI documentation for NestJS (`@nestjs/swagger`, an
 * optional peer imported only by this entry point): `ApiSafeResponse` and
 * its paginated variants, `ApiSafeErrorResponse(s)`, `ApiSafeProblemResponse`,
 * `ApiSafeCatalogErrors`, the `Safe*Endpoint` composites (runtime decorators
 * and documentation from one set of options), `applyGlobalErrors` for the
 * `swagger.globalErrors` option, the component schemas, and
 * `applySchemaNames` (`schemaNames: "dto"` names them as
 * `@nestarc/safe-response` did) and `applyRouteShapes` (`shapes: "0.14"`:
 * its route schema shapes). Error examples
 * are built by the same body builders as the runtime's responses.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { SafePaginatedEndpoint } from "@saferoute/api-kit/safe-response/openapi";
 * class ItemDto { id!: string; }
 * @Controller("items")
 * class ItemsController {
 *   @Get()
 *   @SafePaginatedEndpoint(ItemDto, { links: true, errors: [401] })
 *   list() { return { data: [] as ItemDto[], total: 0, page: 1, limit: 20 }; }
 * }
 * ```
 *
 * @module
 */
export { SKIP_GLOBAL_ERRORS_EXTENSION } from "../_route_metadata.ts";
export {
  type OpenApiSchema,
  SAFE_RESPONSE_SCHEMAS,
  type SafeResponseSchemaName,
} from "../_openapi_schemas.ts";
export { type ApiKeysAdminRoutesDocsOptions, applyApiKeysAdminRoutes } from "./admin_routes.ts";
export {
  applyGlobalErrors,
  applyRouteShapes,
  applySchemaNames,
  type OpenApiDocumentLike,
  type RouteShapesOptions,
  type SchemaNamesOptions,
} from "./safe_response.document.ts";
export {
  SafeCursorPaginatedEndpoint,
  type SafeCursorPaginatedEndpointOptions,
  SafeEndpoint,
  type SafeEndpointCommonOptions,
  type SafeEndpointOptions,
  SafePaginatedEndpoint,
  type SafePaginatedEndpointOptions,
} from "./safe_response.endpoints.ts";
export {
  ApiSafeCatalogError,
  ApiSafeCatalogErrors,
  type ApiSafeCatalogErrorsOptions,
  ApiSafeErrorResponse,
  ApiSafeErrorResponses,
  ApiSafeProblemResponse,
} from "./safe_response.errors.ts";
export {
  ApiCursorPaginatedSafeResponse,
  ApiPaginatedSafeResponse,
  type ApiPaginatedSafeResponseOptions,
  ApiSafeResponse,
  type ApiSafeResponseOptions,
  type SafeModel,
} from "./safe_response.responses.ts";
