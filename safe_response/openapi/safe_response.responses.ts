/**
 * OpenAPI documentation of success envelopes around a model.
 * @module
 */
import { applyDecorators } from "@nestjs/common";
import { ApiExtraModels, ApiResponse, getSchemaPath } from "@nestjs/swagger";
import { reasonPhrase } from "../http_status.ts";
import { isNullBodyStatus } from "../_null_body.ts";
import { httpStatusOption } from "../_route_checks.ts";
import { ApiSafeComponents } from "./_components.ts";
import { type OpenApiSchema, schemaRef } from "../_openapi_schemas.ts";

/** A model class documented as `data`: a DTO, or `String`, `Number`, `Boolean`. */
export type SafeModel = abstract new (...args: never[]) => unknown;

/** What a documented success envelope holds besides `data`. */
export interface SuccessShape {
  /** `data` is an array of the model. */
  isArray?: boolean;
  /** `meta.pagination` of this kind (`data` is then an array). */
  pagination?: "offset" | "cursor";
  /** `meta.sort` is present. */
  sort?: boolean;
  /** `meta.filters` is present. */
  filter?: boolean;
  /** The fixed success `code`. */
  code?: string;
  /** `meta.message`. */
  message?: string;
  /** `meta.deprecation` is present. */
  deprecated?: boolean;
}

const BUILT_IN = new Map<unknown, string>([
  [String, "string"],
  [Number, "number"],
  [Boolean, "boolean"],
]);

function metaSchema(shape: SuccessShape): OpenApiSchema | undefined {
  const properties: Record<string, OpenApiSchema> = {};
  if (shape.pagination !== undefined) {
    properties.pagination = schemaRef(
      shape.pagination === "offset" ? "SafePaginationMeta" : "SafeCursorPaginationMeta",
    );
  }
  if (shape.sort === true) properties.sort = schemaRef("SafeSortInfo");
  if (shape.filter === true) properties.filters = { type: "object", additionalProperties: true };
  if (shape.message !== undefined) properties.message = { type: "string", example: shape.message };
  if (shape.deprecated === true) properties.deprecation = schemaRef("SafeDeprecationMeta");
  const required = Object.keys(properties);
  if (required.length === 0) return undefined;
  return { allOf: [schemaRef("SafeResponseMeta"), { type: "object", required, properties }] };
}

function successSchema(model: SafeModel, shape: SuccessShape): OpenApiSchema {
  const builtIn = BUILT_IN.get(model);
  const item = builtIn === undefined ? { $ref: getSchemaPath(model) } : { type: builtIn };
  const many = shape.isArray === true || shape.pagination !== undefined;
  const properties: Record<string, OpenApiSchema> = {
    data: many ? { type: "array", items: item } : item,
  };
  if (shape.code !== undefined) properties.code = { type: "string", example: shape.code };
  const meta = metaSchema(shape);
  if (meta !== undefined) properties.meta = meta;
  return {
    allOf: [
      schemaRef("SafeSuccessResponse"),
      { type: "object", required: Object.keys(properties), properties },
    ],
  };
}

/**
 * Documents the success envelope at `status`, registering the components and the model; a status
 * without content (204, 205, 304) is documented without a body.
 */
export function documentSuccess(
  model: SafeModel,
  status: number,
  description: string | undefined,
  shape: SuccessShape,
  decorator: string,
): MethodDecorator & ClassDecorator {
  if (typeof model !== "function") throw new TypeError(`${decorator}: \`model\` must be a class`);
  if (isNullBodyStatus(httpStatusOption(status, decorator))) { // no envelope is ever sent
    return ApiResponse({ status, description: description ?? reasonPhrase(status) ?? "Success" });
  }
  const decorators = [ApiSafeComponents()];
  if (!BUILT_IN.has(model)) decorators.push(ApiExtraModels(model));
  decorators.push(ApiResponse({
    status: httpStatusOption(status, decorator),
    description: description ?? reasonPhrase(status) ?? "Success",
    content: { "application/json": { schema: successSchema(model, shape) } },
  }));
  return applyDecorators(...decorators);
}

/** Options of `ApiSafeResponse`. */
export interface ApiSafeResponseOptions {
  /** Response description (default: the status's reason phrase). */
  description?: string;
  /** `data` is an array of the model (default `false`). */
  isArray?: boolean;
  /** Documented status (default 200); the runtime status is `@HttpCode`'s. */
  statusCode?: number;
}

/**
 * Documents the route's success envelope with `data` of type `model` (or an array of it).
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { ApiProperty } from "@nestjs/swagger";
 * import { ApiSafeResponse } from "@saferoute/api-kit/safe-response/openapi";
 * class UserDto { @ApiProperty() id!: string; }
 * @Controller("users")
 * class Routes { @Get() @ApiSafeResponse(UserDto, { isArray: true }) list(): UserDto[] { return []; } }
 * ```
 */
export function ApiSafeResponse(
  model: SafeModel,
  options: ApiSafeResponseOptions = {},
): MethodDecorator & ClassDecorator {
  return documentSuccess(
    model,
    options.statusCode ?? 200,
    options.description,
    { isArray: options.isArray === true },
    "ApiSafeResponse",
  );
}

/** Options of `ApiPaginatedSafeResponse` and `ApiCursorPaginatedSafeResponse`. */
export interface ApiPaginatedSafeResponseOptions {
  /** Response description (default `OK`). */
  description?: string;
}

/**
 * Documents an offset-paginated success of `model`; pair it with `Paginated` (which documents the
 * query parameters), or use `SafePaginatedEndpoint`.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { Paginated } from "@saferoute/api-kit/safe-response/nest";
 * import { ApiPaginatedSafeResponse } from "@saferoute/api-kit/safe-response/openapi";
 * class UserDto { id!: string; }
 * @Controller("users")
 * class Routes {
 *   @Get() @Paginated() @ApiPaginatedSafeResponse(UserDto)
 *   list() { return { data: [] as UserDto[], total: 0, page: 1, limit: 20 }; }
 * }
 * ```
 */
export function ApiPaginatedSafeResponse(
  model: SafeModel,
  options: ApiPaginatedSafeResponseOptions = {},
): MethodDecorator & ClassDecorator {
  return documentSuccess(
    model,
    200,
    options.description,
    { pagination: "offset" },
    "ApiPaginatedSafeResponse",
  );
}

/**
 * Documents a cursor-paginated success of `model`; pair it with `CursorPaginated`, or use
 * `SafeCursorPaginatedEndpoint`.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { CursorPaginated } from "@saferoute/api-kit/safe-response/nest";
 * import { ApiCursorPaginatedSafeResponse } from "@saferoute/api-kit/safe-response/openapi";
 * class EventDto { id!: string; }
 * @Controller("events")
 * class Routes {
 *   @Get() @CursorPaginated() @ApiCursorPaginatedSafeResponse(EventDto)
 *   list() { return { data: [] as EventDto[], nextCursor: null, hasMore: false, limit: 20 }; }
 * }
 * ```
 */
export function ApiCursorPaginatedSafeResponse(
  model: SafeModel,
  options: ApiPaginatedSafeResponseOptions = {},
): MethodDecorator & ClassDecorator {
  return documentSuccess(
    model,
    200,
    options.description,
    { pagination: "cursor" },
    "ApiCursorPaginatedSafeResponse",
  );
}
