/**
 * Composite decorators `SafeEndpoint`, `SafePaginatedEndpoint` and
 * `SafeCursorPaginatedEndpoint`. Each applies the runtime decorators of
 * `./safe-response/nest` and the OpenAPI documentation of the same options
 * (success envelope of `model`, `errors`, `deprecated`).
 *
 * @module
 */
import { applyDecorators } from "@nestjs/common";
import type { DeprecatedOptions } from "../deprecation_headers.ts";
import type { FieldSelectionOptions } from "../field_selection.ts";
import type { LinkHeaderOption } from "../_link_header.ts";
import { endpointDecorators } from "../_route_decorators.ts";
import type { ErrorFormat, SafeErrorResponseConfig } from "../options.ts";
import { errorFormatOption } from "../_route_checks.ts";
import { documentErrors } from "./safe_response.errors.ts";
import { documentSuccess, type SafeModel } from "./safe_response.responses.ts";

/**
 * Options shared by the three composites.
 * @example
 * ```ts
 * import type { SafeEndpointCommonOptions } from "@saferoute/api-kit/safe-response/openapi";
 * const options: SafeEndpointCommonOptions = { message: "Listed", sort: true };
 * ```
 */
export interface SafeEndpointCommonOptions {
  /** Response description (OpenAPI). */
  description?: string;
  /** Include `meta.sort` (default `false`). */
  sort?: boolean;
  /** Include `meta.filters` (default `false`). */
  filter?: boolean;
  /** `meta.message`. */
  message?: string;
  /** Success `code`. */
  code?: string;
  /** Documented error responses (OpenAPI), as in `ApiSafeErrorResponses`. */
  errors?: SafeErrorResponseConfig[];
  /** Marks the route deprecated. */
  deprecated?: DeprecatedOptions;
  /**
   * Errors as error envelopes (`safe`, the default) or problem details
   * (`problem`), documented so; must match the module option `problemDetails`.
   */
  errorFormat?: ErrorFormat;
  /** Alias of `errorFormat: "problem"` (`true`) or `"safe"` (`false`). */
  problemDetails?: boolean;
  /**
   * Field selection for the route (`?fields=`), over the module option;
   * `false` turns it off even when the module enables it. Documented as a
   * query parameter.
   */
  fieldSelection?: boolean | FieldSelectionOptions;
}

/**
 * Options of `SafeEndpoint`.
 * @example
 * ```ts
 * import type { SafeEndpointOptions } from "@saferoute/api-kit/safe-response/openapi";
 * const options: SafeEndpointOptions = { statusCode: 201, code: "CREATED" };
 * ```
 */
export interface SafeEndpointOptions extends SafeEndpointCommonOptions {
  /** Success status (default 200), applied with `@HttpCode`. */
  statusCode?: number;
  /** `data` is an array of `model` (OpenAPI; default `false`). */
  isArray?: boolean;
}

/**
 * Options of `SafePaginatedEndpoint`.
 * @example
 * ```ts
 * import type { SafePaginatedEndpointOptions } from "@saferoute/api-kit/safe-response/openapi";
 * const options: SafePaginatedEndpointOptions = { maxLimit: 100, defaultLimit: 20, links: true };
 * ```
 */
export interface SafePaginatedEndpointOptions extends SafeEndpointCommonOptions {
  /** Largest page size: a larger requested `limit` is clamped to it (as in `Paginated`). */
  maxLimit?: number;
  /** Page size when the request gives none (as in `Paginated`). */
  defaultLimit?: number;
  /** Add pagination links (default `false`). */
  links?: boolean;
  /** Pagination links in a `Link` header: `true`, `"only"` (no body links), as `Paginated`. */
  linkHeader?: LinkHeaderOption;
}

/**
 * Options of `SafeCursorPaginatedEndpoint`.
 * @example
 * ```ts
 * import type { SafeCursorPaginatedEndpointOptions } from "@saferoute/api-kit/safe-response/openapi";
 * const options: SafeCursorPaginatedEndpointOptions = { links: true };
 * ```
 */
export interface SafeCursorPaginatedEndpointOptions extends SafePaginatedEndpointOptions {}

/** A composite: the runtime half and the OpenAPI half from the same options. */
function safeEndpoint(
  model: SafeModel,
  options: SafeEndpointOptions & SafePaginatedEndpointOptions,
  pagination: "offset" | "cursor" | undefined,
  decorator: string,
): MethodDecorator {
  const shape = {
    isArray: pagination === undefined && options.isArray === true,
    pagination,
    sort: options.sort,
    filter: options.filter,
    code: options.code,
    message: options.message,
    deprecated: options.deprecated !== undefined,
  };
  // The paginated variants always answer 200.
  const status = pagination === undefined ? options.statusCode ?? 200 : 200;
  const problem = errorFormatOption(options.errorFormat, options.problemDetails, decorator);
  const decorators = [
    ...endpointDecorators({
      ...options,
      problemDetails: problem,
      statusCode: status,
      pagination: pagination === undefined ? undefined : {
        kind: pagination,
        maxLimit: options.maxLimit,
        defaultLimit: options.defaultLimit,
        links: options.links,
        linkHeader: options.linkHeader,
      },
    }),
    documentSuccess(model, status, options.description, shape, decorator),
  ];
  if (options.errors !== undefined) {
    decorators.push(documentErrors(options.errors, problem === true, decorator));
  }
  return applyDecorators(...decorators);
}

/**
 * Composite for a plain endpoint: envelope, status (default 200), sort,
 * filter, message, code, deprecation and field selection in one decorator,
 * documented in OpenAPI (success envelope of `model` at `statusCode`,
 * `errors` as error envelopes, or problem details with
 * `errorFormat: "problem"`, the `fields` query parameter with
 * `fieldSelection`).
 * @example
 * ```ts
 * import { Controller, Post } from "@nestjs/common";
 * import { SafeEndpoint } from "@saferoute/api-kit/safe-response/openapi";
 * class UserDto { id!: string; }
 * @Controller("users")
 * class UsersController {
 *   @Post()
 *   @SafeEndpoint(UserDto, { statusCode: 201, code: "USER_CREATED", message: "User created" })
 *   create(): UserDto { return { id: "u1" }; }
 * }
 * ```
 */
export function SafeEndpoint(
  model: SafeModel,
  options: SafeEndpointOptions = {},
): MethodDecorator {
  return safeEndpoint(model, options, undefined, "SafeEndpoint");
}

/**
 * Composite for an offset-paginated endpoint (`Paginated` plus the common
 * options; status 200), documented like `ApiPaginatedSafeResponse` plus the
 * sort, filter, message and code it adds; the `page` and `limit` query
 * parameters are documented with minimum 1, maximum `maxLimit` and default
 * `defaultLimit`, and parsed so (read them with `PaginationQuery()`).
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { SafePaginatedEndpoint } from "@saferoute/api-kit/safe-response/openapi";
 * class ItemDto { id!: string; }
 * @Controller("items")
 * class ItemsController {
 *   @Get()
 *   @SafePaginatedEndpoint(ItemDto, { maxLimit: 100, links: true })
 *   list() { return { data: [] as ItemDto[], total: 0, page: 1, limit: 20 }; }
 * }
 * ```
 */
export function SafePaginatedEndpoint(
  model: SafeModel,
  options: SafePaginatedEndpointOptions = {},
): MethodDecorator {
  return safeEndpoint(model, options, "offset", "SafePaginatedEndpoint");
}

/**
 * Composite for a cursor-paginated endpoint (`CursorPaginated` plus the
 * common options; status 200), documented like
 * `ApiCursorPaginatedSafeResponse` plus the sort, filter, message and code it
 * adds, with the `cursor` and `limit` query parameters.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { SafeCursorPaginatedEndpoint } from "@saferoute/api-kit/safe-response/openapi";
 * class EventDto { id!: string; }
 * @Controller("events")
 * class EventsController {
 *   @Get()
 *   @SafeCursorPaginatedEndpoint(EventDto, { links: true })
 *   list() { return { data: [] as EventDto[], nextCursor: null, hasMore: false, limit: 20 }; }
 * }
 * ```
 */
export function SafeCursorPaginatedEndpoint(
  model: SafeModel,
  options: SafeCursorPaginatedEndpointOptions = {},
): MethodDecorator {
  return safeEndpoint(model, options, "cursor", "SafeCursorPaginatedEndpoint");
}
