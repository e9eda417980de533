/**
 * `createSafeFetch`: the core's `Responder` over Web `Request`/`Response`.
 * @module
 */
import { type DeprecatedOptions, resolveDeprecation } from "../deprecation_headers.ts";
import { type FieldSelectionOptions, resolveFieldSelection } from "../field_selection.ts";
import type { ErrorFormat, SafeResponseModuleOptions } from "../options.ts";
import { type PaginationOptions, resolvePagination } from "../pagination.ts";
import type { LinkHeaderOption } from "../_link_header.ts";
import { resolveLinkHeader } from "../_link_header.ts";
import {
  beginPagination,
  paginationQueryOf,
  type Reply,
  type RequestPhase,
  Responder,
  type ResponderLogger,
  type RouteOptions,
  type RoutePlan,
} from "../responder.ts";
import {
  errorFormatOption,
  httpStatusOption,
  nonEmptyOption,
  problemTypeOption,
} from "../_route_checks.ts";
import { resolveSettings } from "../settings.ts";
import { optionNames, refuseUnknownOptions } from "../_options.ts";
import { callAppFunction } from "../_app_functions.ts";
import { callDetached } from "../../telemetry/_detached.ts";
import {
  copyHeaders,
  discardBody,
  FetchExchange,
  LOWEST_STATUS,
  RequestContext,
  type SafeContext,
  toResponse,
} from "./_exchange.ts";

/** Options of {@link createSafeFetch}: the Nest module's options, a logger and the context store. */
export interface SafeFetchOptions extends SafeResponseModuleOptions<Request> {
  /**
   * Where warnings and errors are logged (default: the console); its failures, a throw or a
   * rejected promise, are ignored.
   */
  logger?: ResponderLogger;
  /** Reads the request-context store of the `context` option (required with it). */
  contextStore?: () => unknown;
  /**
   * Headers every response of a request carries, read before `meta` is built (synchronous; a throw
   * is logged and ignored): `getRateLimitHeaders` of `./api-keys/fetch` fills `meta.rateLimit`.
   */
  responseHeaders?: (request: Request) => ConstructorParameters<typeof Headers>[0] | undefined;
}

/**
 * A route's settings, one key per decorator of `./safe-response/nest`; a bad value or an unknown
 * option (here or in a nested options object) throws a `TypeError` when the route is wrapped.
 */
export interface SafeRouteOptions {
  /** Name of the route in warnings (default: the handler's name). */
  route?: string;
  /** The success status (default 200, also for a `POST`). */
  statusCode?: number;
  /** Send the handler's result as is (`RawResponse`); errors are still wrapped. */
  rawResponse?: boolean;
  /** `meta.message` (a translation key with an `i18n` adapter). */
  responseMessage?: string;
  /** Fixed success `code`; wins over `successCodeMapper`. */
  successCode?: string;
  /** Offset pagination (`Paginated`); the parsed query reaches the handler as `context.pagination`. */
  paginated?: (PaginationOptions & { linkHeader?: LinkHeaderOption }) | boolean;
  /** Cursor pagination (`CursorPaginated`). */
  cursorPaginated?: (PaginationOptions & { linkHeader?: LinkHeaderOption }) | boolean;
  /** Copy the result's `sort` into `meta.sort`. */
  sortMeta?: boolean;
  /** Copy the result's `filters` into `meta.filters`. */
  filterMeta?: boolean;
  /** Field selection over the `fieldSelection` option, or `false` for off. */
  fieldSelection?: FieldSelectionOptions | boolean;
  /** The error format the route expects; warned once when it differs from `problemDetails`. */
  errorFormat?: ErrorFormat;
  /** Problem type URI of the handler's errors (with `problemDetails`). */
  problemType?: string;
  /** Deprecation and sunset headers and `meta.deprecation`. */
  deprecated?: DeprecatedOptions;
  /** The route's API version (`meta.apiVersion`; default: a string `version` option). */
  apiVersion?: string;
}

/**
 * A handler `route` wraps: the request, its {@link SafeContext} and the caller's further arguments;
 * returns the result to wrap (a `Response` is sent as it is).
 */
export type SafeHandler<Args extends unknown[] = unknown[]> = (
  request: Request,
  context: SafeContext,
  ...args: Args
) => unknown;

/** The safe-response pipeline of one application, built by {@link createSafeFetch}. */
export interface SafeFetch {
  /** The core pipeline (its resolved `settings` included). */
  readonly responder: Responder;
  /**
   * Wraps `handler`: its result becomes the success envelope, what it throws the error envelope or
   * problem details. Throws a `TypeError` on a bad or unknown route option.
   */
  route<Args extends unknown[]>(
    options: SafeRouteOptions,
    handler: SafeHandler<Args>,
  ): (request: Request, ...args: [...Args, ...unknown[]]) => Promise<Response>;
  /**
   * The error response of `error` raised outside a route's handler (a key check, a "not found");
   * fits the `onError` option of `createApiKeyAuthorizer`.
   */
  errorResponse(error: unknown, request: Request): Response;
}

const ROUTE_OPTIONS = optionNames<SafeRouteOptions>({
  route: true,
  statusCode: true,
  rawResponse: true,
  responseMessage: true,
  successCode: true,
  paginated: true,
  cursorPaginated: true,
  sortMeta: true,
  filterMeta: true,
  fieldSelection: true,
  errorFormat: true,
  problemType: true,
  deprecated: true,
  apiVersion: true,
});

/** Checks `options` for `who` and maps them to the core's route options. */
function routeOptionsOf(options: SafeRouteOptions, handler: object): RouteOptions {
  const who = "createSafeFetch route";
  refuseUnknownOptions(options, ROUTE_OPTIONS, who);
  const flag = (value: unknown, name: string): boolean | undefined => {
    if (value === undefined || typeof value === "boolean") return value;
    throw new TypeError(`${who}: \`${name}\` must be a boolean`);
  };
  const paging = (value: PaginationOptions | boolean | undefined, kind: "offset" | "cursor") => {
    if (value === undefined || value === false) return undefined;
    const name = kind === "offset" ? "paginated" : "cursorPaginated";
    return resolvePagination(kind, value === true ? {} : value, `${who}: \`${name}\``, [
      "linkHeader",
    ]);
  };
  const offset = paging(options.paginated, "offset");
  const cursor = paging(options.cursorPaginated, "cursor");
  const paged = offset !== undefined ? options.paginated : options.cursorPaginated;
  const linkHeader = typeof paged === "object" && paged?.linkHeader !== undefined
    ? resolveLinkHeader(paged.linkHeader, `${who}: \`linkHeader\``)
    : undefined;
  if (offset !== undefined && cursor !== undefined) {
    throw new TypeError(`${who}: \`paginated\` and \`cursorPaginated\` exclude each other`);
  }
  const selection = options.fieldSelection;
  let fieldSelection: FieldSelectionOptions | false | undefined;
  if (selection === false) fieldSelection = false;
  else if (selection !== undefined) {
    fieldSelection = selection === true ? {} : { ...selection };
    resolveFieldSelection(fieldSelection, `${who}: \`fieldSelection\``); // fail early
  }
  const name = (handler as { name?: unknown }).name;
  const text = (value: unknown, option: string, check = nonEmptyOption) =>
    value === undefined ? undefined : check(value, `${who}: \`${option}\``);
  return {
    route: text(options.route, "route") ??
      (typeof name === "string" && name !== "" ? name : "route"),
    raw: flag(options.rawResponse, "rawResponse"),
    statusCode: options.statusCode === undefined
      ? undefined
      : httpStatusOption(options.statusCode, who, LOWEST_STATUS),
    successCode: text(options.successCode, "successCode"),
    message: text(options.responseMessage, "responseMessage"),
    pagination: offset ?? cursor,
    linkHeader,
    sort: flag(options.sortMeta, "sortMeta"),
    filter: flag(options.filterMeta, "filterMeta"),
    problemType: text(options.problemType, "problemType", problemTypeOption),
    deprecation: options.deprecated === undefined
      ? undefined
      : resolveDeprecation(options.deprecated),
    fieldSelection,
    problemDetails: errorFormatOption(options.errorFormat, undefined, who),
    apiVersion: text(options.apiVersion, "apiVersion"),
  };
}

/** Splits the binding's own options from the module options. */
function splitOptions(options: SafeFetchOptions) {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("createSafeFetch: options must be an object");
  }
  const { logger, contextStore, responseHeaders, ...module } = options;
  if (
    logger !== undefined &&
    (typeof logger?.warn !== "function" || typeof logger?.error !== "function")
  ) {
    throw new TypeError("createSafeFetch: option `logger` must have warn() and error()");
  }
  if (contextStore !== undefined && typeof contextStore !== "function") {
    throw new TypeError("createSafeFetch: option `contextStore` must be a function");
  }
  if (responseHeaders !== undefined && typeof responseHeaders !== "function") {
    throw new TypeError("createSafeFetch: option `responseHeaders` must be a function");
  }
  if (module.i18n === true) {
    throw new TypeError(
      "createSafeFetch: option `i18n: true` finds nestjs-i18n in a Nest app; give an I18nAdapter",
    );
  }
  if (module.context !== undefined && contextStore === undefined) {
    throw new TypeError("createSafeFetch: option `context` needs `contextStore`");
  }
  return {
    logger: logger === undefined ? undefined : contained(logger),
    contextStore,
    responseHeaders,
    module,
  };
}

/**
 * `logger` whose failures, a throw or a rejected promise, are ignored: logging
 * must never fail a response.
 */
function contained(logger: ResponderLogger): ResponderLogger {
  const ignore = () => {}; // nothing left to report it to
  return {
    warn: (message) => callDetached(() => logger.warn(message), [], ignore),
    error: (message, stack) => callDetached(() => logger.error(message, stack), [], ignore),
  };
}

/** The 400 of a request whose Host is no `host[:port]` (RFC 9112 §3.2; an HTTP exception's shape). */
const MALFORMED_HOST = {
  getStatus: () => 400,
  getResponse: () => ({ message: "The Host header is not a host and port" }),
};

/**
 * Builds the safe-response pipeline for a Fetch server (`Deno.serve`, Hono) from the Nest module's
 * options. A bad or unknown option throws a `TypeError` naming it.
 * @example
 * ```ts
 * import { createSafeFetch } from "@saferoute/api-kit/safe-response/fetch";
 * import { SafeException, defineErrors } from "@saferoute/api-kit/safe-response";
 * const Errors = defineErrors({ ITEM_NOT_FOUND: { status: 404, message: "No such item" } });
 * const safe = createSafeFetch({ requestId: true, responseTime: true, errorCatalog: Errors });
 * const listItems = safe.route({ paginated: { maxLimit: 100, links: true } }, (request) => {
 *   const page = Number(new URL(request.url).searchParams.get("page") ?? "1");
 *   return { data: [{ id: "a" }], total: 1, page, limit: 20 };
 * });
 * const getItem = safe.route({ responseMessage: "Item found" }, (request) => {
 *   const id = new URL(request.url).pathname.split("/")[2];
 *   if (id !== "a") throw new SafeException("ITEM_NOT_FOUND", { details: { id } });
 *   return { id };
 * });
 * Deno.serve((request) =>
 *   new URL(request.url).pathname === "/items" ? listItems(request) : getItem(request)
 * );
 * ```
 */
export function createSafeFetch(options: SafeFetchOptions = {}): SafeFetch {
  const { logger, contextStore, responseHeaders, module } = splitOptions(options);
  const responder = new Responder(resolveSettings(module, "createSafeFetch"), {
    logger,
    store: contextStore,
  });

  /**
   * The response of `reply`, counted (the telemetry bridge's) as written: once, with its status; a
   * body that cannot be serialised is a logged 500, the one counted.
   */
  const send = (
    reply: Reply,
    context: RequestContext | undefined,
    request: Request,
    phase?: RequestPhase,
  ): Response => {
    let response: Response;
    try {
      response = toResponse(reply, context);
    } catch (failure) {
      const exchange = new FetchExchange(request, context);
      response = toResponse(responder.error(failure, exchange, phase), context);
    }
    responder.written?.(response.status);
    return response;
  };

  /** A request's context holding the `responseHeaders` of `request`. */
  const contextOf = (request: Request): RequestContext => {
    const context = new RequestContext();
    if (responseHeaders === undefined) return context;
    const outcome = callAppFunction("option `responseHeaders`", () => {
      const given = responseHeaders(request);
      return given === undefined ? undefined : new Headers(given);
    });
    if (!outcome.ok) (logger ?? console).error(responder.settings.redactApiKeys(outcome.failure));
    else if (outcome.value !== undefined) copyHeaders(context.headers, outcome.value);
    return context;
  };

  const errorResponse = (error: unknown, request: Request): Response => {
    const phase: RequestPhase = { apiVersion: responder.versionOf(request) };
    const context = responseHeaders === undefined ? undefined : contextOf(request);
    return send(
      responder.error(error, new FetchExchange(request, context), phase),
      context,
      request,
    );
  };

  const route = <Args extends unknown[]>(
    routeOptions: SafeRouteOptions,
    handler: SafeHandler<Args>,
  ) => {
    if (typeof handler !== "function") {
      throw new TypeError("createSafeFetch route: `handler` must be a function");
    }
    const plan: RoutePlan = responder.plan(routeOptionsOf(routeOptions, handler));
    return async (request: Request, ...args: [...Args, ...unknown[]]): Promise<Response> => {
      const context = contextOf(request);
      const exchange = new FetchExchange(request, context);
      exchange.readAhead(responder.requestHeaders);
      const phase = { plan, start: responder.start(), apiVersion: responder.versionOf(request) };
      context.bindPagination(() => paginationQueryOf(exchange, phase));
      let reply: Reply;
      let result: unknown;
      try {
        if (exchange.hostMalformed) throw MALFORMED_HOST; // RFC 9112 §3.2: no route reads its target
        beginPagination(exchange, phase); // a bad page, limit or cursor is a 400 before the handler
        result = await handler(request, context, ...args as unknown as Args);
        // A 101 (Deno.upgradeWebSocket's): the server sends it as it is, the request is closed.
        if (result instanceof Response && result.status === 101) {
          responder.written?.(101);
          return result; // the server's handshake, the request closed: nothing added
        }
        const answered = result instanceof Response ? exchange.answered(result) : exchange;
        reply = responder.success(result, answered, phase);
      } catch (thrown) {
        discardBody(result); // a result it could not answer: its stream is never sent
        reply = responder.error(thrown, exchange, phase);
      }
      return send(reply, context, request, phase);
    };
  };

  return { responder, route, errorResponse };
}
