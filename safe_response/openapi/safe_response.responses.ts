/**
 * `ApiSafeResponse`, `ApiPaginatedSafeResponse` and
 * `ApiCursorPaginatedSafeResponse`: OpenAPI documentation of success
 * envelopes around a model.
 *
 * @module
 */
import { applyDecorators } from "@nestjs/common";
import { ApiExtraModels, ApiResponse, getSchemaPath } from "@nestjs/swagger";
import { reasonPhrase } from "../http_status.ts";
import { httpStatusOption } from "../_route_checks.ts";
import { ApiSafeComponents } from "./_components.ts";
import { type OpenApiSchema, schemaRef } from "../_openapi_schemas.ts";

/**
 * A model class documented as `data`: a DTO (registered as a component), or
 * `String`, `Number`, `Boolean`.
 * @example
 * ```ts
 * import type { SafeModel } from "@saferoute/api-kit/safe-response/openapi";
 * class UserDto { id!: string; }
 * const model: SafeModel = UserDto;
 * ```
 */
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
 * Documents the success envelope at `status` (`application/json`), with the
 * component schemas and the model registered. Used by the decorators of this
 * file and the composites.
 */
export function documentSuccess(
  model: SafeModel,
  status: number,
  description: string | undefined,
  shape: SuccessShape,
  decorator: string,
): MethodDecorator & ClassDecorator {
  if (typeof model !== "function") throw new TypeError(`${decorator}: \`model\` must be a class`);
  const decorators = [ApiSafeComponents()];
  if (!BUILT_IN.has(model)) decorators.push(ApiExtraModels(model));
  decorators.push(ApiResponse({
    status: httpStatusOption(status, decorator),
    description: description ?? reasonPhrase(status) ?? "Success",
    content: { "application/json": { schema: successSchema(model, shape) } },
  }));
  return applyDecorators(...decorators);
}

/**
 * Options of `ApiSafeResponse`.
 * @example
 * ```ts
 * import type { ApiSafeResponseOptions } from "@saferoute/api-kit/safe-response/openapi";
 * const options: ApiSafeResponseOptions = { statusCode: 201, description: "Created user" };
 * ```
 */
export interface ApiSafeResponseOptions {
  /** Response description (default: the status's reason phrase). */
  description?: string;
  /** `data` is an array of the model (default `false`). */
  isArray?: boolean;
  /** Documented status (default 200). Documentation only: set the runtime status with `@HttpCode`. */
  statusCode?: number;
}

/**
 * Documents the route's success envelope with `data` of type `model` (or an
 * array of it). Registers the envelope components (`SafeSuccessResponse`,
 * `SafeResponseMeta`, ...) and the model.
 * @example
 * ```ts
 * import { Controller, Get, Param } from "@nestjs/common";
 * import { ApiProperty } from "@nestjs/swagger";
 * import { ApiSafeResponse } from "@saferoute/api-kit/safe-response/openapi";
 * class UserDto { @ApiProperty() id!: string; }
 * @Controller("users")
 * class UsersController {
 *   @Get(":id")
 *   @ApiSafeResponse(UserDto, { description: "The user" })
 *   find(@Param("id") id: string): UserDto { return { id }; }
 * }
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

/**
 * Options of `ApiPaginatedSafeResponse` and `ApiCursorPaginatedSafeResponse`.
 * @example
 * ```ts
 * import type { ApiPaginatedSafeResponseOptions } from "@saferoute/api-kit/safe-response/openapi";
 * const options: ApiPaginatedSafeResponseOptions = { description: "One page of users" };
 * ```
 */
export interface ApiPaginatedSafeResponseOptions {
  /** Response description (default `OK`). */
  description?: string;
}

/**
 * Documents an offset-paginated success (status 200): `data` is an array of
 * `model` and `meta.pagination` a `SafePaginationMeta`. Pair it with
 * `Paginated` (or use `SafePaginatedEndpoint`), which documents the `page`
 * and `limit` query parameters (minimum 1, maximum `maxLimit`, default
 * `defaultLimit`) from the same options the runtime parses them with.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { ApiProperty } from "@nestjs/swagger";
 * import { Paginated } from "@saferoute/api-kit/safe-response/nest";
 * import { ApiPaginatedSafeResponse } from "@saferoute/api-kit/safe-response/openapi";
 * class UserDto { @ApiProperty() id!: string; }
 * @Controller("users")
 * class UsersController {
 *   @Get()
 *   @Paginated()
 *   @ApiPaginatedSafeResponse(UserDto)
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
 * Documents a cursor-paginated success (status 200): `data` is an array of
 * `model` and `meta.pagination` a `SafeCursorPaginationMeta`. Pair it with
 * `CursorPaginated` (or use `SafeCursorPaginatedEndpoint`), which documents
 * the `cursor` (at most 512 characters) and `limit` query parameters.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { ApiProperty } from "@nestjs/swagger";
 * import { CursorPaginated } from "@saferoute/api-kit/safe-response/nest";
 * import { ApiCursorPaginatedSafeResponse } from "@saferoute/api-kit/safe-response/openapi";
 * class EventDto { @ApiProperty() id!: string; }
 * @Controller("events")
 * class EventsController {
 *   @Get()
 *   @CursorPaginated()
 *   @ApiCursorPaginatedSafeResponse(EventDto)
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
