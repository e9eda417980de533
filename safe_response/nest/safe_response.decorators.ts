/**
 * Every runtime decorator of the safe-response Nest binding, each with its
 * metadata key (prefixed `safe-response:`, not exported) and writer, and the
 * one typed reader, {@link readRouteOptions}, that turns them into the core's
 * `RouteOptions`. A new route feature is one key, one decorator here and one
 * plan field in the core. Decorators use `SetMetadata` (Nest 10.0 lacks
 * `Reflector.createDecorator`).
 *
 * The decorators that also document write `@nestjs/swagger`'s metadata by key
 * (`./_swagger_metadata.ts`), so this file imports nothing from swagger:
 * `Deprecated` flags the operation `deprecated`, `ProblemType` and
 * `SkipGlobalErrors` set their vendor extensions, and `SafeResponse`
 * documents the basic envelope with an inline schema (no component needed).
 *
 * Over 300 lines because every runtime decorator lives here with its key
 * (the file is the binding's whole route vocabulary), most of it the
 * decorators' documentation and examples.
 *
 * @module
 */
import { applyDecorators, SetMetadata } from "@nestjs/common";
import { type DeprecatedOptions, resolveDeprecation } from "../deprecation_headers.ts";
import type { FieldSelectionOptions } from "../field_selection.ts";
import { reasonPhrase } from "../http_status.ts";
import { type PaginationOptions, resolvePagination } from "../pagination.ts";
import { resolveFieldSelection } from "../field_selection.ts";
import type { RouteOptions } from "../responder.ts";
import { httpStatusOption, nonEmptyOption, problemTypeOption } from "../_route_checks.ts";
import { SAFE_RESPONSE_SCHEMAS } from "../openapi/_schemas.ts";
import {
  markDeprecatedOperation,
  markExtension,
  markResponse,
  NEST_METHOD_METADATA,
  PROBLEM_TYPE_EXTENSION,
  routeHandlersOf,
  SKIP_GLOBAL_ERRORS_EXTENSION,
} from "./_swagger_metadata.ts";

type Decorator = MethodDecorator & ClassDecorator;

const KEYS = {
  raw: "safe-response:raw",
  message: "safe-response:message",
  successCode: "safe-response:success-code",
  pagination: "safe-response:pagination",
  sort: "safe-response:sort",
  filter: "safe-response:filter",
  problemType: "safe-response:problem-type",
  deprecation: "safe-response:deprecated",
  fieldSelection: "safe-response:field-selection",
  problemDetails: "safe-response:endpoint-problem-details",
} as const;

/** Nest's `@HttpCode` metadata key (`HTTP_CODE_METADATA`, stable from Nest 10 to 12). */
const NEST_HTTP_CODE = "__httpCode__";

/** Nest's `RequestMethod.POST`. */
const POST = 1;

/**
 * The route options the decorators set on `handler` (over its `controller`),
 * and the status Nest sends by default (`@HttpCode`, else 201 for a POST, else
 * 200). Read once per route by the binding.
 *
 * @example
 * ```ts
 * import { readRouteOptions } from "./safe_response.decorators.ts";
 * class ItemsController {
 *   list() {}
 * }
 * readRouteOptions(ItemsController, ItemsController.prototype.list).statusCode; // 200
 * ```
 */
export function readRouteOptions(controller: object, handler: object): RouteOptions {
  const get = <T>(key: string): T | undefined =>
    Reflect.getMetadata(key, handler) ?? Reflect.getMetadata(key, controller);
  const method = Reflect.getMetadata(NEST_METHOD_METADATA, handler);
  return {
    route: `${(controller as { name?: string }).name}.${(handler as { name?: string }).name}`,
    raw: get<boolean>(KEYS.raw),
    statusCode: Reflect.getMetadata(NEST_HTTP_CODE, handler) ?? (method === POST ? 201 : 200),
    successCode: Reflect.getMetadata(KEYS.successCode, handler),
    message: get(KEYS.message),
    pagination: get(KEYS.pagination),
    sort: get(KEYS.sort),
    filter: get(KEYS.filter),
    problemType: get(KEYS.problemType),
    deprecation: get(KEYS.deprecation),
    fieldSelection: get<FieldSelectionOptions | false>(KEYS.fieldSelection),
    problemDetails: get(KEYS.problemDetails),
  };
}

/**
 * Sends the handler's result as is (no success envelope). Errors are still
 * wrapped by the exception filter. On a class, applies to every route;
 * `SafeResponse()` on a method turns wrapping back on.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { RawResponse } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("health")
 * class HealthController {
 *   @Get()
 *   @RawResponse()
 *   check() {
 *     return "ok";
 *   }
 * }
 * ```
 */
export function RawResponse(): MethodDecorator & ClassDecorator {
  return SetMetadata(KEYS.raw, true);
}

/**
 * Sets `meta.message` of the route's success envelopes. With `i18n` on, the
 * message is a translation key, translated in the request's language.
 *
 * @example
 * ```ts
 * import { Controller, Post } from "@nestjs/common";
 * import { ResponseMessage } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("users")
 * class UsersController {
 *   @Post()
 *   @ResponseMessage("User created")
 *   create() {
 *     return { id: "u1" };
 *   }
 * }
 * ```
 */
export function ResponseMessage(message: string): MethodDecorator & ClassDecorator {
  return SetMetadata(KEYS.message, nonEmptyOption(message, "ResponseMessage: `message`"));
}

/**
 * Sets the success envelope's `code` (method level only); wins over the
 * `successCodeMapper` option.
 *
 * @example
 * ```ts
 * import { Controller, Post } from "@nestjs/common";
 * import { SuccessCode } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("orders")
 * class OrdersController {
 *   @Post()
 *   @SuccessCode("ORDER_PLACED")
 *   place() {
 *     return { id: "o1" };
 *   }
 * }
 * ```
 */
export function SuccessCode(code: string): MethodDecorator {
  const setCode = SetMetadata(KEYS.successCode, nonEmptyOption(code, "SuccessCode: `code`"));
  return (target, key, descriptor) => {
    if (descriptor === undefined) throw new TypeError("SuccessCode applies to methods only");
    setCode(target, key, descriptor);
  };
}

/**
 * Offset pagination: the handler returns a `PaginatedResult`
 * (`{ data, total, page, limit }`); `data` becomes the envelope's `data` and
 * `meta.pagination` is computed. `maxLimit` clamps the reported `limit`
 * (handlers clamp their own queries); `links` (default `false`) adds relative
 * links.
 *
 * @example
 * ```ts
 * import { Controller, Get, Query } from "@nestjs/common";
 * import { Paginated } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("items")
 * class ItemsController {
 *   @Get()
 *   @Paginated({ maxLimit: 100, links: true })
 *   list(@Query("page") page = "1", @Query("limit") limit = "20") {
 *     const size = Math.min(Number(limit), 100);
 *     return { data: [], total: 0, page: Number(page), limit: size };
 *   }
 * }
 * ```
 */
export function Paginated(options: PaginationOptions = {}): MethodDecorator & ClassDecorator {
  return SetMetadata(KEYS.pagination, resolvePagination("offset", options, "Paginated"));
}

/**
 * Cursor pagination: the handler returns a `CursorPaginatedResult`
 * (`{ data, nextCursor, hasMore, limit }`, optional `previousCursor`,
 * `totalCount`). Links use the `cursor` query parameter.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { CursorPaginated } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("feed")
 * class FeedController {
 *   @Get()
 *   @CursorPaginated({ links: true })
 *   list() {
 *     return { data: ["a", "b"], nextCursor: "b", hasMore: true, limit: 2 };
 *   }
 * }
 * ```
 */
export function CursorPaginated(options: PaginationOptions = {}): MethodDecorator & ClassDecorator {
  return SetMetadata(KEYS.pagination, resolvePagination("cursor", options, "CursorPaginated"));
}

/**
 * Copies the result's `sort` (`{ field, order }`) into `meta.sort`. On a
 * paginated route `sort` sits next to `data`; on other routes the handler
 * returns `{ data, sort }` and `data` becomes the envelope's `data`. A
 * missing or malformed `sort` logs one warning per route.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { Paginated, SortMeta } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("items")
 * class ItemsController {
 *   @Get()
 *   @Paginated()
 *   @SortMeta()
 *   list() {
 *     return { data: [], total: 0, page: 1, limit: 10, sort: { field: "name", order: "asc" } };
 *   }
 * }
 * ```
 */
export function SortMeta(): MethodDecorator & ClassDecorator {
  return SetMetadata(KEYS.sort, true);
}

/**
 * Copies the result's `filters` (an object) into `meta.filters`, like
 * `SortMeta` does for `sort`.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { FilterMeta } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("items")
 * class ItemsController {
 *   @Get()
 *   @FilterMeta()
 *   list() {
 *     return { data: [], filters: { status: "active" } };
 *   }
 * }
 * ```
 */
export function FilterMeta(): MethodDecorator & ClassDecorator {
  return SetMetadata(KEYS.filter, true);
}

/**
 * Turns field selection on for a route or controller (`?fields=id,address.city`
 * keeps only those fields of `data`, of each item on paginated routes, and
 * lists them in `meta.fields`), or off with `false`. Wins over the module
 * option `fieldSelection`; options not given here come from the module
 * option, else the defaults (`queryParam` `fields`, `separator` `,`,
 * `maxDepth` 3).
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { FieldSelection } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("users")
 * class UsersController {
 *   @Get(":id")
 *   @FieldSelection({ maxDepth: 2 })
 *   get() {
 *     return { id: "u1", name: "Ada", address: { city: "London", zip: "N1" } };
 *   }
 *
 *   @Get(":id/raw")
 *   @FieldSelection(false)
 *   raw() {
 *     return { id: "u1" };
 *   }
 * }
 * ```
 */
export function FieldSelection(
  options: FieldSelectionOptions | false = {},
): MethodDecorator & ClassDecorator {
  if (options !== false) resolveFieldSelection(options, "FieldSelection options"); // fail early
  return SetMetadata(KEYS.fieldSelection, options === false ? false : { ...options });
}

/**
 * Sets the problem-details `type` of errors thrown by the route's handler
 * (not of errors thrown by guards). Used when `problemDetails` is on. The
 * OpenAPI operation carries it as `x-safe-problem-type`.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { ProblemType } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("payments")
 * class PaymentsController {
 *   @Get()
 *   @ProblemType("https://api.example.com/problems/payment")
 *   list() {
 *     return [];
 *   }
 * }
 * ```
 */
export function ProblemType(typeUri: string): MethodDecorator & ClassDecorator {
  problemTypeOption(typeUri, "ProblemType: `typeUri`");
  return applyDecorators(
    SetMetadata(KEYS.problemType, typeUri),
    markExtension(PROBLEM_TYPE_EXTENSION, typeUri),
  );
}

/**
 * Marks a route deprecated. Dates are validated when the decorator is applied
 * (a bad date fails at startup). Responses, including errors thrown by the
 * handler (not by guards), carry `Deprecation: @<unix seconds of since>`
 * (`@0` without `since`), `Sunset: <HTTP-date>` when `sunset` is given,
 * `Link: <link>; rel="deprecation"` when `link` is given, and
 * `meta.deprecation`. The OpenAPI operation (of the route, or of every route
 * of a controller) gets `deprecated: true`.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { Deprecated } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("v1/users")
 * class LegacyUsersController {
 *   @Get()
 *   @Deprecated({ since: "2026-01-01", sunset: "2027-01-01", link: "https://example.com/v2" })
 *   list() {
 *     return [];
 *   }
 * }
 * ```
 */
export function Deprecated(options: DeprecatedOptions = {}): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(KEYS.deprecation, resolveDeprecation(options)),
    markDeprecatedOperation(),
  );
}

/**
 * Marks a route (or controller) so the global error responses
 * (`swagger.globalErrors`) are not added to its OpenAPI operation by
 * `applyGlobalErrors`: the operation carries `x-safe-skip-global-errors: true`.
 * No effect on the response itself.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { SkipGlobalErrors } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("ping")
 * class PingController {
 *   @Get()
 *   @SkipGlobalErrors()
 *   ping() {
 *     return "pong";
 *   }
 * }
 * ```
 */
export function SkipGlobalErrors(): MethodDecorator & ClassDecorator {
  return markExtension(SKIP_GLOBAL_ERRORS_EXTENSION, true);
}

/**
 * Options of `SafeResponse`.
 *
 * @example
 * ```ts
 * import type { SafeResponseOptions } from "@saferoute/api-kit/safe-response/nest";
 * const options: SafeResponseOptions = { statusCode: 201, description: "Created user" };
 * ```
 */
export interface SafeResponseOptions {
  /** Response description (OpenAPI). */
  description?: string;
  /**
   * Success status, sent (`@HttpCode`) and documented. Default: the route's
   * own `@HttpCode`, else 200 (also for a `POST`).
   */
  statusCode?: number;
}

/** The basic success envelope, inline (`meta` as an open object). */
const BASIC_SCHEMA = Object.freeze({
  ...SAFE_RESPONSE_SCHEMAS.SafeSuccessResponse,
  properties: {
    ...SAFE_RESPONSE_SCHEMAS.SafeSuccessResponse.properties as object,
    meta: { type: "object", additionalProperties: true },
  },
});

/**
 * Wraps the route's result in the success envelope, also under a class-level
 * `RawResponse()`, and documents the basic success envelope (an inline
 * schema, `data` of any type). The status, sent and documented, is
 * `statusCode`, else the route's own `@HttpCode`, else 200, also for a `POST`
 * (Nest would send 201). On a controller it applies to every route the class
 * declares; a route's own `@HttpCode` wins there.
 *
 * @example
 * ```ts
 * import { Controller, Post } from "@nestjs/common";
 * import { SafeResponse } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("users")
 * class UsersController {
 *   @Post()
 *   @SafeResponse({ statusCode: 202, description: "Accepted for creation" })
 *   create() {
 *     return { id: "u1" };
 *   }
 * }
 * ```
 */
export function SafeResponse(options: SafeResponseOptions = {}): MethodDecorator & ClassDecorator {
  const given = options.statusCode === undefined
    ? undefined
    : httpStatusOption(options.statusCode, "SafeResponse");
  const apply = (handler: object, fallback: number) => {
    const status = Reflect.getMetadata(NEST_HTTP_CODE, handler) ?? fallback;
    Reflect.defineMetadata(NEST_HTTP_CODE, status, handler);
    Reflect.defineMetadata(KEYS.raw, false, handler);
    markResponse(handler, status, {
      description: options.description ?? reasonPhrase(status) ?? "Success",
      content: { "application/json": { schema: structuredClone(BASIC_SCHEMA) } },
    });
  };
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor !== undefined) {
      if (given !== undefined) Reflect.defineMetadata(NEST_HTTP_CODE, given, descriptor.value);
      apply(descriptor.value, 200);
      return;
    }
    for (const handler of routeHandlersOf(target)) apply(handler, given ?? 200);
  };
}

/**
 * The runtime half of a composite endpoint: wrapping, status (`statusCode`,
 * default 200), pagination, sort, filter, message, code, deprecation and the
 * `problemDetails` flag (checked against the module option). The composites
 * of `./safe-response/openapi` add the documentation of the same options.
 */
export function endpointDecorators(options: {
  statusCode: number;
  pagination?: PaginationOptions & { kind: "offset" | "cursor" };
  sort?: boolean;
  filter?: boolean;
  message?: string;
  code?: string;
  deprecated?: DeprecatedOptions;
  problemDetails?: boolean;
}): Decorator[] {
  const { pagination } = options;
  const decorators: Decorator[] = [
    SetMetadata(KEYS.raw, false),
    SetMetadata(KEYS.problemDetails, options.problemDetails ?? false),
    SetMetadata(NEST_HTTP_CODE, httpStatusOption(options.statusCode, "SafeEndpoint")),
  ];
  if (pagination !== undefined) {
    const paging = { maxLimit: pagination.maxLimit, links: pagination.links };
    decorators.push(pagination.kind === "offset" ? Paginated(paging) : CursorPaginated(paging));
  }
  if (options.sort === true) decorators.push(SortMeta());
  if (options.filter === true) decorators.push(FilterMeta());
  if (options.message !== undefined) decorators.push(ResponseMessage(options.message));
  if (options.code !== undefined) decorators.push(SuccessCode(options.code) as Decorator);
  if (options.deprecated !== undefined) decorators.push(Deprecated(options.deprecated));
  return decorators;
}
