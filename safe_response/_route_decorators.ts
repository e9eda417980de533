/**
 * The runtime route decorators as plain `Reflect` metadata writers, used by `./safe-response/nest`
 * (which exports them) and the composites of `./safe-response/openapi`.
 * @module
 */
import { type DeprecatedOptions, resolveDeprecation } from "./deprecation_headers.ts";
import {
  type FieldSelectionOptions,
  type FieldSelectionSettings,
  resolveFieldSelection,
} from "./field_selection.ts";
import { reasonPhrase } from "./http_status.ts";
import { type PaginationOptions, type PaginationSetting, resolvePagination } from "./pagination.ts";
import { MAX_CURSOR_LENGTH } from "./pagination_links.ts";
import { type LinkHeaderOption, resolveLinkHeader } from "./_link_header.ts";
import { httpStatusOption, nonEmptyOption, problemTypeOption } from "./_route_checks.ts";
import { optionNames, refuseUnknownOptions } from "./_options.ts";
import { BASIC_SUCCESS_SCHEMA } from "./_openapi_schemas.ts";
import {
  combine,
  FIELD_SELECTION_EXTENSION,
  markDeprecatedOperation,
  markExtension,
  markQueryParameters,
  markResponse,
  NEST_HTTP_CODE,
  onRoutes,
  ownSuccessMediaType,
  PAGINATED_EXTENSION,
  PROBLEM_TYPE_EXTENSION,
  type QueryParameter,
  redirectStatusOf,
  RESPONSE_HEADERS_EXTENSION,
  ROUTE_KEYS,
  type RouteDecorator,
  routeHandlersOf,
  routeOption,
  sendsOwnResponse,
  setExtension,
  setMetadata,
  SKIP_GLOBAL_ERRORS_EXTENSION,
  SUCCESS_STATUS_EXTENSION,
} from "./_route_metadata.ts";

/**
 * Sends the handler's result as is (errors are still wrapped); on a class, every route's.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { RawResponse } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("health")
 * class Routes { @Get() @RawResponse() check() { return "ok"; } }
 * ```
 */
export function RawResponse(): MethodDecorator & ClassDecorator {
  return setMetadata(ROUTE_KEYS.raw, true);
}

/**
 * Sets `meta.message` of the route's success envelopes (a translation key with `i18n`).
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { ResponseMessage } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("users")
 * class Routes { @Get() @ResponseMessage("Users listed") list() { return []; } }
 * ```
 */
export function ResponseMessage(message: string): MethodDecorator & ClassDecorator {
  return setMetadata(ROUTE_KEYS.message, nonEmptyOption(message, "ResponseMessage: `message`"));
}

/**
 * Sets the success envelope's `code`, over `successCodeMapper`. Throws a `TypeError` on a class.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { SuccessCode } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("orders")
 * class Routes { @Get() @SuccessCode("ORDERS_LISTED") list() { return []; } }
 * ```
 */
export function SuccessCode(code: string): MethodDecorator {
  const setCode = setMetadata(ROUTE_KEYS.successCode, nonEmptyOption(code, "SuccessCode: `code`"));
  return (target, key, descriptor) => {
    if (descriptor === undefined) throw new TypeError("SuccessCode applies to methods only");
    setCode(target, key, descriptor);
  };
}

/** Options of `Paginated` and `CursorPaginated`. */
export interface PaginatedOptions extends PaginationOptions {
  /** Pagination links in a `Link` header too (`true`) or only (`"only"`); default: the module's. */
  linkHeader?: LinkHeaderOption;
}

function linkHeaderOf(options: PaginatedOptions, name: string): LinkHeaderOption | undefined {
  return options?.linkHeader === undefined
    ? undefined
    : resolveLinkHeader(options.linkHeader, `${name}: \`linkHeader\``);
}

/**
 * Offset pagination: the handler returns `{ data, total, page, limit }` and `meta.pagination` is
 * computed. With a `maxLimit` or `defaultLimit`, `?page=` and `?limit=` are parsed before the
 * handler (a bad value is a 400 `INVALID_PAGINATION_QUERY`). Throws a `TypeError` on a bad or
 * unknown option.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import type { OffsetPaginationQuery } from "@saferoute/api-kit/safe-response";
 * import { Paginated, PaginationQuery } from "@saferoute/api-kit/safe-response/nest";
 * const ITEMS = Array.from({ length: 95 }, (_, i) => `item-${i + 1}`);
 * @Controller("items")
 * class ItemsController {
 *   @Get()
 *   @Paginated({ maxLimit: 100, defaultLimit: 20, links: true })
 *   list(@PaginationQuery() { page, limit = 20 }: OffsetPaginationQuery) {
 *     const data = ITEMS.slice((page - 1) * limit, page * limit);
 *     return { data, total: ITEMS.length, page, limit };
 *   }
 * }
 * ```
 */
export function Paginated(options: PaginatedOptions = {}): MethodDecorator & ClassDecorator {
  return paginated(
    resolvePagination("offset", options, "Paginated", ["linkHeader"]),
    linkHeaderOf(options, "Paginated"),
  );
}

/**
 * Cursor pagination: the handler returns `{ data, nextCursor, hasMore, limit }` (optional
 * `previousCursor`, `totalCount`). Options as for `Paginated`.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { CursorPaginated } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("feed")
 * class Routes {
 *   @Get() @CursorPaginated() list() { return { data: ["a"], nextCursor: "a", hasMore: true, limit: 1 }; }
 * }
 * ```
 */
export function CursorPaginated(
  options: PaginatedOptions = {},
): MethodDecorator & ClassDecorator {
  return paginated(
    resolvePagination("cursor", options, "CursorPaginated", ["linkHeader"]),
    linkHeaderOf(options, "CursorPaginated"),
  );
}

/** The documented query parameters of `setting`: what `parsePaginationQuery` accepts. */
function paginationParameters({ kind, maxLimit, defaultLimit }: PaginationSetting) {
  const max = Number.MAX_SAFE_INTEGER;
  const clamp = maxLimit === undefined ? "" : ` Larger values are clamped to ${maxLimit}.`;
  const fallback = defaultLimit !== undefined
    ? ` Default ${defaultLimit}.`
    : maxLimit === undefined
    ? " Default: the module's `defaultLimit` when set (then at most the larger of it and 100), " +
      "else the handler's."
    : ` Default: the module's \`defaultLimit\` (at most ${maxLimit}), else ${maxLimit}.`;
  const limit = {
    name: "limit",
    required: false,
    description: `Page size.${clamp}${fallback}`,
    schema: {
      type: "integer",
      minimum: 1,
      maximum: maxLimit ?? max,
      ...(defaultLimit === undefined ? {} : { default: defaultLimit }),
    },
  };
  const position = kind === "offset"
    ? {
      name: "page",
      required: false,
      description: "Page, from 1.",
      schema: { type: "integer", minimum: 1, maximum: max, default: 1 },
    }
    : {
      name: "cursor",
      required: false,
      description: "`nextCursor` or `previousCursor` of a page; none for the first page.",
      schema: { type: "string", maxLength: MAX_CURSOR_LENGTH },
    };
  return [position, limit];
}

/**
 * The `x-safe-paginated` mark of `handler` with pagination `setting` and `linkHeader`: `limits`
 * when the pipeline parses its query, `query` when the handler does (`PaginationQuery()`, a
 * parameter decorator: applied before the route's and its controller's decorators).
 */
function paginatedMark(
  handler: object,
  setting: PaginationSetting,
  linkHeader: LinkHeaderOption | undefined,
) {
  const limits = setting.maxLimit !== undefined || setting.defaultLimit !== undefined;
  const query = Reflect.getOwnMetadata(ROUTE_KEYS.paginationQuery, handler) === true;
  return {
    kind: setting.kind,
    limits,
    ...(query ? { query } : {}),
    ...(linkHeader === undefined ? {} : { linkHeader }),
  };
}

/**
 * Stores `setting` and documents its query parameters on the route, or a controller's routes. The
 * `x-safe-paginated` mark holds the options the server reads (`routeOption`: the method's, else the
 * controller's); a controller's decorator, applied after its methods', marks each route again.
 */
function paginated(
  setting: PaginationSetting,
  linkHeader: LinkHeaderOption | undefined,
): MethodDecorator & ClassDecorator {
  const parameters = paginationParameters(setting);
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const holder = descriptor === undefined ? target : descriptor.value;
    if (linkHeader !== undefined) Reflect.defineMetadata(ROUTE_KEYS.linkHeader, linkHeader, holder);
    if (descriptor !== undefined) {
      Reflect.defineMetadata(ROUTE_KEYS.pagination, setting, descriptor.value);
      markQueryParameters(descriptor.value, parameters);
      setExtension(
        descriptor.value,
        PAGINATED_EXTENSION,
        paginatedMark(descriptor.value, setting, linkHeader),
        false,
      );
      return;
    }
    Reflect.defineMetadata(ROUTE_KEYS.pagination, setting, target);
    for (const handler of routeHandlersOf(target)) {
      const own = Reflect.hasOwnMetadata(ROUTE_KEYS.pagination, handler);
      if (!own) markQueryParameters(handler, parameters);
      const mark = paginatedMark(
        handler,
        routeOption<PaginationSetting>(target, handler, ROUTE_KEYS.pagination)!,
        routeOption<LinkHeaderOption>(target, handler, ROUTE_KEYS.linkHeader),
      );
      setExtension(handler, PAGINATED_EXTENSION, mark, own); // a method's own mark: read again
    }
  };
}

/**
 * Copies the result's `sort` (`{ field, order }`, next to `data`) into `meta.sort`; a missing or
 * malformed one logs one warning per route.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { SortMeta } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("items")
 * class Routes { @Get() @SortMeta() list() { return { data: [], sort: { field: "name", order: "asc" } }; } }
 * ```
 */
export function SortMeta(): MethodDecorator & ClassDecorator {
  return setMetadata(ROUTE_KEYS.sort, true);
}

/**
 * Copies the result's `filters` (an object) into `meta.filters`, like `SortMeta`.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { FilterMeta } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("items")
 * class Routes { @Get() @FilterMeta() list() { return { data: [], filters: { status: "active" } }; } }
 * ```
 */
export function FilterMeta(): MethodDecorator & ClassDecorator {
  return setMetadata(ROUTE_KEYS.filter, true);
}

/**
 * Field selection on a route or controller (`?fields=id,address.city`), or off with `false`; the
 * module option fills the options not given. Throws a `TypeError` on bad options.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { FieldSelection } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("users")
 * class Routes { @Get() @FieldSelection({ maxDepth: 2 }) get() { return { id: "u1", city: "London" }; } }
 * ```
 */
export function FieldSelection(
  options: FieldSelectionOptions | false = {},
): MethodDecorator & ClassDecorator {
  if (options === false) {
    return combine(
      setMetadata(ROUTE_KEYS.fieldSelection, false),
      markExtension(FIELD_SELECTION_EXTENSION, false, ROUTE_KEYS.fieldSelection),
    );
  }
  const checked = resolveFieldSelection(options, "FieldSelection options")!; // fail early
  const parameter = fieldSelectionParameter(checked);
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const holder = descriptor === undefined ? target : descriptor.value;
    Reflect.defineMetadata(ROUTE_KEYS.fieldSelection, { ...options }, holder);
    const handlers = descriptor === undefined
      ? routeHandlersOf(target).filter((handler) =>
        !Reflect.hasOwnMetadata(ROUTE_KEYS.fieldSelection, handler) // the route's own wins
      )
      : [descriptor.value];
    for (const handler of handlers) {
      markQueryParameters(handler, [parameter]);
      setExtension(handler, FIELD_SELECTION_EXTENSION, true, descriptor === undefined);
    }
  };
}

/** The documented query parameter of field selection with `settings`. */
export function fieldSelectionParameter(settings: FieldSelectionSettings): QueryParameter {
  return {
    name: settings.queryParam,
    required: false,
    description: `Fields of \`data\` to keep, separated by \`${settings.separator}\` ` +
      `(dotted paths; at most ${settings.maxFields}, each at most ${settings.maxFieldLength} ` +
      "characters).",
    schema: { type: "string" },
  };
}

/**
 * Sets the problem-details `type` of the errors the route's handler throws (not guards').
 * Throws a `TypeError` on a bad URI.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { ProblemType } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("payments")
 * class Routes { @Get() @ProblemType("https://api.example.com/problems/payment") list() { return []; } }
 * ```
 */
export function ProblemType(typeUri: string): MethodDecorator & ClassDecorator {
  problemTypeOption(typeUri, "ProblemType: `typeUri`");
  return combine(
    setMetadata(ROUTE_KEYS.problemType, typeUri),
    markExtension(PROBLEM_TYPE_EXTENSION, typeUri, ROUTE_KEYS.problemType),
  );
}

/**
 * Marks a route deprecated: its responses carry `Deprecation`, `Sunset`, `Link` and
 * `meta.deprecation`. Throws a `TypeError` on a bad date or an unknown option.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { Deprecated } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("v1/users")
 * class Routes { @Get() @Deprecated({ sunset: "2027-01-01", link: "https://example.com/v2" }) list() { return []; } }
 * ```
 */
export function Deprecated(options: DeprecatedOptions = {}): MethodDecorator & ClassDecorator {
  const plan = resolveDeprecation(options);
  return combine(
    setMetadata(ROUTE_KEYS.deprecation, plan),
    markDeprecatedOperation(),
    markExtension(
      RESPONSE_HEADERS_EXTENSION,
      [...new Set(plan.headers.map(([name]) => name))],
      ROUTE_KEYS.deprecation,
    ),
  );
}

/**
 * Keeps `applyGlobalErrors` from adding `swagger.globalErrors` to the route's operations.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { SkipGlobalErrors } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("ping")
 * class Routes { @Get() @SkipGlobalErrors() ping() { return "pong"; } }
 * ```
 */
export function SkipGlobalErrors(): MethodDecorator & ClassDecorator {
  return markExtension(SKIP_GLOBAL_ERRORS_EXTENSION, true);
}

/** Options of `SafeResponse`. */
export interface SafeResponseOptions {
  /** Response description (OpenAPI). */
  description?: string;
  /** Success status, sent and documented; default: the route's `@HttpCode`, else 200. */
  statusCode?: number;
}

const SAFE_RESPONSE_OPTIONS = optionNames<SafeResponseOptions>({
  description: true,
  statusCode: true,
});

/**
 * Wraps the route's result in the success envelope (also under a class-level `RawResponse()`) and
 * documents it, unless the route sets a non-JSON `Content-Type` (`@Header`) or is `@Sse`: its result
 * is then sent, and documented, as it is. On a class, every route but those with their own
 * `RawResponse()` or `SafeResponse()`. Throws a `TypeError` on a bad or unknown option.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { SafeResponse } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("users")
 * class Routes { @Get() @SafeResponse({ description: "The users" }) list() { return []; } }
 * ```
 */
export function SafeResponse(options: SafeResponseOptions = {}): MethodDecorator & ClassDecorator {
  refuseUnknownOptions(options, SAFE_RESPONSE_OPTIONS, "SafeResponse");
  const given = options.statusCode === undefined
    ? undefined
    : httpStatusOption(options.statusCode, "SafeResponse");
  const apply = (handler: object, controller: object, fallback: number) => {
    const status = Reflect.getMetadata(NEST_HTTP_CODE, handler) ?? fallback;
    Reflect.defineMetadata(NEST_HTTP_CODE, status, handler);
    Reflect.defineMetadata(ROUTE_KEYS.raw, false, handler);
    markResponse(handler, status, {
      description: options.description ?? reasonPhrase(status) ?? "Success",
      content: { "application/json": { schema: structuredClone(BASIC_SUCCESS_SCHEMA) } },
    });
    markSuccess(handler, controller, status, options.description !== undefined);
  };
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor !== undefined) {
      if (given !== undefined) Reflect.defineMetadata(NEST_HTTP_CODE, given, descriptor.value);
      apply(descriptor.value, target.constructor, 200);
      return;
    }
    for (const handler of routeHandlersOf(target)) {
      // A method's own `RawResponse()` or `SafeResponse()` (applied before the class's) wins.
      if (!Reflect.hasOwnMetadata(ROUTE_KEYS.raw, handler)) apply(handler, target, given ?? 200);
    }
  };
}

/**
 * Sets `handler`'s `SUCCESS_STATUS_EXTENSION` mark: its success documented at `documented`, moved
 * when the document is built to the status and media type Nest sends (an `@HttpCode`, `@Header` or
 * `@Sse` above the decorator applies after it).
 */
function markSuccess(
  handler: object,
  controller: object,
  documented: number,
  described: boolean,
): void {
  const mark = {
    documented,
    described,
    /** Whether the handler sends its own body (`@Res()` without passthrough): none documented. */
    get own(): boolean {
      return sendsOwnResponse(controller, handler);
    },
    get status(): number {
      return redirectStatusOf(handler) ?? Reflect.getMetadata(NEST_HTTP_CODE, handler) ??
        documented;
    },
    get media(): string | null {
      return ownSuccessMediaType(handler);
    },
    get redirect(): boolean {
      return redirectStatusOf(handler) !== undefined;
    },
  };
  setExtension(handler, SUCCESS_STATUS_EXTENSION, mark, true);
}

/** The runtime half of a composite endpoint of `./safe-response/openapi`. */
export function endpointDecorators(options: {
  statusCode: number;
  description?: string;
  pagination?: PaginatedOptions & { kind: "offset" | "cursor" };
  sort?: boolean;
  filter?: boolean;
  message?: string;
  code?: string;
  deprecated?: DeprecatedOptions;
  problemDetails?: boolean;
  fieldSelection?: FieldSelectionOptions | boolean;
}): RouteDecorator[] {
  const { pagination } = options;
  const decorators: RouteDecorator[] = [
    setMetadata(ROUTE_KEYS.raw, false),
    setMetadata(ROUTE_KEYS.problemDetails, options.problemDetails ?? false),
    setMetadata(NEST_HTTP_CODE, httpStatusOption(options.statusCode, "SafeEndpoint")),
    onRoutes((handler, controller) =>
      markSuccess(handler, controller, options.statusCode, options.description !== undefined)
    ),
  ];
  if (pagination !== undefined) {
    const { maxLimit, defaultLimit, links, linkHeader } = pagination;
    const paging = { maxLimit, defaultLimit, links, linkHeader };
    decorators.push(pagination.kind === "offset" ? Paginated(paging) : CursorPaginated(paging));
  }
  if (options.sort === true) decorators.push(SortMeta());
  if (options.filter === true) decorators.push(FilterMeta());
  if (options.message !== undefined) decorators.push(ResponseMessage(options.message));
  if (options.code !== undefined) decorators.push(SuccessCode(options.code) as RouteDecorator);
  if (options.deprecated !== undefined) decorators.push(Deprecated(options.deprecated));
  const { fieldSelection } = options;
  if (fieldSelection !== undefined) {
    decorators.push(FieldSelection(fieldSelection === true ? {} : fieldSelection));
  }
  return decorators;
}
