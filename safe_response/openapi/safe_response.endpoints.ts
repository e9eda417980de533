/**
 * Composite decorators: the runtime route decorators and the OpenAPI documentation of one options object.
 * @module
 */
import { applyDecorators } from "@nestjs/common";
import type { DeprecatedOptions } from "../deprecation_headers.ts";
import type { FieldSelectionOptions } from "../field_selection.ts";
import type { LinkHeaderOption } from "../_link_header.ts";
import { endpointDecorators } from "../_route_decorators.ts";
import type { ErrorFormat, SafeErrorResponseConfig } from "../options.ts";
import { errorFormatOption } from "../_route_checks.ts";
import { optionNames, refuseUnknownOptions } from "../_options.ts";
import { documentErrors } from "./safe_response.errors.ts";
import { documentSuccess, type SafeModel } from "./safe_response.responses.ts";

/** Options shared by the three composites. */
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
  /** Errors as error envelopes (`safe`, default) or problem details; must match `problemDetails`. */
  errorFormat?: ErrorFormat;
  /** Alias of `errorFormat: "problem"` (`true`) or `"safe"` (`false`). */
  problemDetails?: boolean;
  /** Field selection for the route over the module option; `false` turns it off. */
  fieldSelection?: boolean | FieldSelectionOptions;
}

/** Options of `SafeEndpoint`. */
export interface SafeEndpointOptions extends SafeEndpointCommonOptions {
  /** Success status (default 200), applied with `@HttpCode`. */
  statusCode?: number;
  /** `data` is an array of `model` (OpenAPI; default `false`). */
  isArray?: boolean;
}

/** Options of `SafePaginatedEndpoint`. */
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

/** Options of `SafeCursorPaginatedEndpoint`. */
export interface SafeCursorPaginatedEndpointOptions extends SafePaginatedEndpointOptions {}

const COMMON_OPTIONS = {
  description: true,
  sort: true,
  filter: true,
  message: true,
  code: true,
  errors: true,
  deprecated: true,
  errorFormat: true,
  problemDetails: true,
  fieldSelection: true,
} as const satisfies Record<keyof SafeEndpointCommonOptions, true>;
const ENDPOINT_OPTIONS = optionNames<SafeEndpointOptions>({
  ...COMMON_OPTIONS,
  statusCode: true,
  isArray: true,
});
const PAGINATED_ENDPOINT_OPTIONS = optionNames<SafePaginatedEndpointOptions>({
  ...COMMON_OPTIONS,
  maxLimit: true,
  defaultLimit: true,
  links: true,
  linkHeader: true,
});

/**
 * A composite: the runtime half and the OpenAPI half from the same options; an unknown option
 * throws a `TypeError` naming `decorator`.
 */
function safeEndpoint(
  model: SafeModel,
  options: SafeEndpointOptions & SafePaginatedEndpointOptions,
  pagination: "offset" | "cursor" | undefined,
  decorator: string,
): MethodDecorator {
  const known = pagination === undefined ? ENDPOINT_OPTIONS : PAGINATED_ENDPOINT_OPTIONS;
  refuseUnknownOptions(options, known, decorator);
  const shape = {
    isArray: pagination === undefined && options.isArray === true,
    pagination,
    sort: options.sort,
    filter: options.filter,
    code: options.code,
    message: options.message,
    deprecated: options.deprecated !== undefined,
  };
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
 * Composite for a plain endpoint: envelope, status, meta and errors, applied and documented. A bad
 * or unknown option throws a `TypeError`.
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
 * Composite for an offset-paginated endpoint (`Paginated` plus the common options; status 200). A
 * bad or unknown option throws a `TypeError`.
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
 * Composite for a cursor-paginated endpoint (`CursorPaginated` plus the common options; status
 * 200). A bad or unknown option throws a `TypeError`.
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
