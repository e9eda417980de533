/**
 * The framework-free response pipeline every binding calls: a {@link Responder}
 * turns a route's plan, the handler's result or thrown value and the exchange into a {@link Reply}.
 * @module
 */
import type {
  CursorPaginationMeta,
  ErrorMeta,
  PaginationMeta,
  ResponseMeta,
} from "../client/types.ts";
import { callAppFunction, describeThrown } from "./_app_functions.ts";
import { isContextFieldName } from "./_meta_fields.ts";
import { appendLinks } from "./_link_header.ts";
import { isJsonMediaType } from "./_media_type.ts";
import { isNullBodyStatus } from "./_null_body.ts";
import { requestPath } from "./_request_target.ts";
import type { DeprecationPlan } from "./deprecation_headers.ts";
import { buildErrorBody, buildSuccessBody } from "./envelope.ts";
import { isSafeException } from "./error_catalog.ts";
import { resolveError } from "./error_resolution.ts";
import {
  type FieldSelectionOptions,
  type FieldSelectionSettings,
  parseFieldSelection,
  resolveFieldSelection,
  selectFields,
} from "./field_selection.ts";
import { registerTaps, type ResponderTaps } from "../telemetry/_taps.ts";
import { isHttpStatus, problemTitle } from "./http_status.ts";
import type { I18nAdapter } from "./i18n_adapter.ts";
import {
  buildCursorPaginationMeta,
  buildPaginationMeta,
  clampLimit,
  type CursorPaginatedResult,
  impliedMaxLimit,
  type PaginatedResult,
  paginatedResultFault,
  type PaginationSetting,
} from "./pagination.ts";
import { type ParsedPaginationQuery, readPaginationQuery } from "./pagination_query.ts";
import type { LinkHeaderOption } from "./_link_header.ts";
import { paginationLinkValues } from "./pagination_links.ts";
import {
  buildProblemDetails,
  PROBLEM_JSON_CONTENT_TYPE,
  problemTypeUri,
} from "./problem_details.ts";
import { readRateLimitHeaders } from "./rate_limit.ts";
import { isSafeRequestId, resolveRequestId } from "./_request_id.ts";
import type { SafeResponseSettings } from "./settings.ts";
import { isFilterMap, isSortInfo } from "./sort_filter.ts";

type Bag = Record<string, unknown>;

const isBag = (value: unknown): value is Bag => typeof value === "object" && value !== null;

/** One route's settings as a binding reads them (Nest decorators, a Fetch route's configuration). */
export interface RouteOptions {
  /** Name of the route in warnings (`Controller.handler`). */
  route?: string;
  /** Send the handler's result as is (`RawResponse`). */
  raw?: boolean;
  /** The route's success status (default 200). */
  statusCode?: number;
  /** Fixed success `code` (`SuccessCode`); wins over `successCodeMapper`. */
  successCode?: string;
  /** `meta.message` (a translation key with i18n on). */
  message?: string;
  /** Offset or cursor pagination (`Paginated`, `CursorPaginated`). */
  pagination?: PaginationSetting;
  /** Pagination links in a `Link` header (default: the module option `linkHeader`). */
  linkHeader?: LinkHeaderOption;
  /** Copy the result's `sort` into `meta.sort` (`SortMeta`). */
  sort?: boolean;
  /** Copy the result's `filters` into `meta.filters` (`FilterMeta`). */
  filter?: boolean;
  /** Problem type URI of the handler's errors (`ProblemType`). */
  problemType?: string;
  /** Deprecation headers and meta (`Deprecated`). */
  deprecation?: DeprecationPlan;
  /** Field selection over the module option, or `false` for off (`FieldSelection`). */
  fieldSelection?: FieldSelectionOptions | false;
  /** The composites' `problemDetails` flag, checked against the module option. */
  problemDetails?: boolean;
  /** The route's API version (default: a string `version` option). */
  apiVersion?: string;
}

/**
 * A route's resolved plan, built once by {@link Responder.plan}.
 */
export interface RoutePlan {
  /** Name of the route in warnings. */
  readonly route: string;
  /** No success envelope. */
  readonly raw: boolean;
  /** The route's success status. */
  readonly statusCode: number;
  /** The success `code` at {@link statusCode}. */
  readonly successCode?: string;
  /** Whether {@link successCode} is fixed (independent of the status sent). */
  readonly fixedCode: boolean;
  /** `meta.message`. */
  readonly message?: string;
  /** Pagination, when on. */
  readonly pagination?: PaginationSetting;
  /** Pagination links in a `Link` header (`"only"`: not in the body). */
  readonly linkHeader: LinkHeaderOption;
  /** `meta.sort` on. */
  readonly sort: boolean;
  /** `meta.filters` on. */
  readonly filter: boolean;
  /** Problem type URI of the handler's errors. */
  readonly problemType?: string;
  /** Deprecation, when the route is deprecated. */
  readonly deprecation?: DeprecationPlan;
  /** Field selection, when on. */
  readonly fieldSelection?: FieldSelectionSettings;
  /** `meta.apiVersion` unless the request decides. */
  readonly apiVersion?: string;
  /** Keys of the warnings already logged for this route. */
  readonly warned: Set<string>;
}

/** The view of one HTTP exchange a binding gives the responder. */
export interface HttpExchange {
  /** Request method. */
  readonly method: string;
  /** Request target: path and query (an absolute-form target loses its authority). */
  readonly target: string;
  /** Reads a request header (any case; a repeated header's first value). */
  requestHeader(name: string): string | undefined;
  /** Reads a header already set on the response (rate limits, the request id). */
  responseHeader(name: string): unknown;
  /**
   * Status set on the response, if any (Nest sets the route's before the handler, which may change
   * it): the one sent and the envelope's.
   */
  readonly status?: number;
  /** The lowest status a success may be sent with (default 100; a Fetch `Response`'s is 200). */
  readonly lowestStatus?: number;
  /** The framework's request object, given to `I18nAdapter.resolveLanguage`. */
  readonly request?: unknown;
}

/**
 * Where a request is: `plan` from the handler phase on (absent for errors thrown by guards or
 * middleware), the phase's `start`, and the API version the request chose.
 */
export interface RequestPhase {
  /** The route's plan, from the handler phase on. */
  plan?: RoutePlan;
  /** {@link Responder.start} at the handler phase. */
  start?: number;
  /** The API version the request chose. */
  apiVersion?: string;
  /** The pagination query the handler is given; its `limit` is the meta's when the result states none. */
  pagination?: ParsedPaginationQuery;
}

/** What to send: status, final headers and body. */
export interface Reply {
  /** HTTP status sent. */
  status: number;
  /** Header name and value pairs to set. */
  headers: Array<[string, string]>;
  /** The body (an object to serialise as JSON when `wrapped`). */
  body: unknown;
  /** Whether `body` is an envelope or problem-details body. */
  wrapped: boolean;
  /**
   * Whether {@link status} is a null body status (1xx, 204, 205, 304): send no envelope and no
   * `Content-Type` (nor, in a Fetch `Response`, any other body), the other headers kept.
   */
  nullBody: boolean;
}

/** Where the responder logs (API keys redacted from every line). */
export interface ResponderLogger {
  /** A shape warning. */
  warn(message: string): void;
  /** An error, with its stack when known. */
  error(message: string, stack?: string): void;
}

/** Integrations of a responder; read on every call, so a binding may fill them later. */
export interface ResponderHooks {
  /** Log sink (default: the console). */
  logger?: ResponderLogger;
  /** Translation adapter when the `i18n` option is `true` (discovered by the binding). */
  i18n?: I18nAdapter;
  /** Reads the request-context store of the `context` option. */
  store?: () => unknown;
}

const CONSOLE_LOGGER: ResponderLogger = {
  warn: (message) => console.warn(message),
  error: (message, stack) => console.error(message, ...(stack === undefined ? [] : [stack])),
};

/** Results sent as they are: binary data, streams and Web `Response`s. */
function isPassthrough(data: unknown): boolean {
  if (typeof data !== "object" || data === null) return false;
  return data instanceof Uint8Array || data instanceof ArrayBuffer ||
    data instanceof ReadableStream || data instanceof Response ||
    typeof (data as Bag).pipe === "function" || typeof (data as Bag).getStream === "function";
}

/** Whether the route set a `Content-Type` of its own that is not JSON (`@Header("Content-Type", …)`). */
function setsOwnMediaType(exchange: HttpExchange): boolean {
  const type = exchange.responseHeader("Content-Type");
  return typeof type === "string" && !isJsonMediaType(type);
}

/** The `Content-Type` of a problem-details reply, on every binding (UTF-8, as Nest states it). */
const PROBLEM_JSON_HEADER = `${PROBLEM_JSON_CONTENT_TYPE}; charset=utf-8`;

/** The query of a request target. */
function queryOf(target: string): URLSearchParams {
  const start = target.indexOf("?");
  return new URLSearchParams(start === -1 ? "" : target.slice(start + 1));
}

/** A query parameter of a request target: one value, several (an array), or `undefined`. */
function queryParam(target: string, name: string): string | string[] | undefined {
  const values = queryOf(target).getAll(name);
  return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
}

/** Whether the pipeline parses the pagination query of a route (it has a limit). */
const hasLimits = (setting: PaginationSetting): boolean =>
  setting.maxLimit !== undefined || setting.defaultLimit !== undefined;

/**
 * The pagination query the handler of a paginated route is given, parsed with the route's (else
 * the module's) limits and recorded as `phase.pagination` when the route has one. Throws a
 * `PaginationQueryError` (a 400) on a bad value, a `TypeError` on a route without pagination.
 * @example
 * ```ts
 * import {
 *   paginationQueryOf,
 *   resolvePagination,
 *   resolveSettings,
 *   Responder,
 * } from "@saferoute/api-kit/safe-response";
 * const responder = new Responder(resolveSettings());
 * const plan = responder.plan({ pagination: resolvePagination("offset", { maxLimit: 50 }, "items") });
 * const exchange = {
 *   method: "GET",
 *   target: "/items?page=2&limit=500",
 *   requestHeader: () => undefined,
 *   responseHeader: () => undefined,
 * };
 * paginationQueryOf(exchange, { plan }); // { kind: "offset", page: 2, limit: 50 }
 * ```
 */
export function paginationQueryOf(
  exchange: HttpExchange,
  phase: RequestPhase & { plan: RoutePlan },
): ParsedPaginationQuery {
  const setting = phase.plan.pagination;
  if (setting === undefined) {
    throw new TypeError(`${phase.plan.route}: the pagination query of a route without pagination`);
  }
  if (phase.pagination !== undefined) return phase.pagination;
  const query = readPaginationQuery(queryOf(exchange.target), setting);
  if (hasLimits(setting)) phase.pagination = query;
  return query;
}

/**
 * Parses and records the pagination query of a paginated route with a limit before the handler
 * runs (so a bad value is a 400 first); does nothing on other routes.
 * @example
 * ```ts
 * import * as sr from "@saferoute/api-kit/safe-response";
 * const plan = new sr.Responder(sr.resolveSettings())
 *   .plan({ pagination: sr.resolvePagination("cursor", { defaultLimit: 20 }, "feed") });
 * const phase: sr.RequestPhase & { plan: sr.RoutePlan } = { plan };
 * const none = () => undefined;
 * sr.beginPagination({ method: "GET", target: "/feed?cursor=abc", requestHeader: none, responseHeader: none }, phase);
 * phase.pagination; // { kind: "cursor", cursor: "abc", limit: 20 }
 * ```
 */
export function beginPagination(
  exchange: HttpExchange,
  phase: RequestPhase & { plan: RoutePlan },
): void {
  const setting = phase.plan.pagination;
  if (setting !== undefined && hasLimits(setting)) paginationQueryOf(exchange, phase);
}

/**
 * The response pipeline of one application: plans routes and builds every reply.
 * @example
 * ```ts
 * import { resolveSettings, Responder } from "@saferoute/api-kit/safe-response";
 * const responder = new Responder(resolveSettings({ timestamp: false }));
 * const plan = responder.plan({ message: "Hello" });
 * const exchange = {
 *   method: "GET",
 *   target: "/hello",
 *   requestHeader: () => undefined,
 *   responseHeader: () => undefined,
 * };
 * const reply = responder.success({ to: "world" }, exchange, { plan });
 * reply.body;
 * // { success: true, statusCode: 200, data: { to: "world" }, meta: { message: "Hello" }, path: "/hello" }
 * ```
 */
export class Responder {
  /** The resolved settings. */
  readonly settings: SafeResponseSettings;
  /**
   * The request headers the replies read (the request id's): a binding whose request the handler
   * may close (a WebSocket upgrade) reads them before the handler.
   */
  readonly requestHeaders: readonly string[];
  readonly #hooks: ResponderHooks;
  readonly #taps: ResponderTaps = {};
  #stampedAt = NaN;
  #stamp = "";

  /** A responder over `settings`, with the optional integrations `hooks`. */
  constructor(settings: SafeResponseSettings, hooks: ResponderHooks = {}) {
    this.settings = settings;
    this.requestHeaders = settings.requestId === undefined ? [] : [settings.requestId.headerName];
    this.#hooks = hooks;
    registerTaps(this, this.#taps);
  }

  /** The plan of a route, built once per route; throws when `successCodeMapper` fails. */
  plan(route: RouteOptions): RoutePlan {
    const { settings } = this;
    const statusCode = route.statusCode ?? 200;
    const selection = route.fieldSelection;
    const paging = route.pagination;
    const moduleDefault = settings.defaultLimit;
    const plan: RoutePlan = {
      route: route.route ?? "route",
      raw: route.raw === true,
      statusCode,
      successCode: route.successCode ?? this.#successCode(statusCode),
      fixedCode: route.successCode !== undefined,
      message: route.message,
      pagination: paging === undefined || paging.defaultLimit !== undefined ||
          moduleDefault === undefined
        ? paging
        : {
          ...paging,
          maxLimit: paging.maxLimit ?? impliedMaxLimit(moduleDefault),
          defaultLimit: clampLimit(moduleDefault, paging.maxLimit),
        },
      linkHeader: route.linkHeader ?? settings.linkHeader,
      sort: route.sort === true,
      filter: route.filter === true,
      problemType: route.problemType,
      deprecation: route.deprecation,
      fieldSelection: selection === undefined
        ? settings.fieldSelection
        : resolveFieldSelection(selection, "FieldSelection options", settings.fieldSelection),
      apiVersion: route.apiVersion ??
        (typeof settings.version === "string" ? settings.version : undefined),
      warned: new Set(),
    };
    const problemDetails = settings.problemDetails !== undefined;
    if (route.problemDetails !== undefined && route.problemDetails !== problemDetails) {
      this.#warnOnce(
        plan,
        "problemDetails",
        `${plan.route}: the endpoint's problemDetails (${route.problemDetails}) ` +
          `differs from the module option (${problemDetails}); errors are sent as ` +
          (problemDetails ? "problem details" : "error envelopes"),
      );
    }
    return plan;
  }

  /** The start of a handler phase: now, when `meta.responseTime` is on (else 0, unused). */
  start(): number {
    return this.settings.responseTime ? performance.now() : 0;
  }

  /**
   * The telemetry bridge's count of a response written (`undefined` while it is off): a binding
   * calls it once per request, with the status it writes (a reply it replaces, one whose body
   * cannot be serialised, is never counted).
   */
  get written(): ((status: number) => void) | undefined {
    return this.#taps.response;
  }

  /** The `version` function's result for `context`; `undefined` when absent or failing (logged). */
  versionOf(context: unknown): string | undefined {
    const { version } = this.settings;
    if (typeof version !== "function") return undefined;
    const chosen = this.#optional("option `version`", () => version(context));
    return typeof chosen === "string" && chosen !== "" ? chosen : undefined;
  }

  /**
   * The request's id (already on the response, else the incoming header when safe, else generated)
   * and the header to echo when not set yet; `undefined` when request ids are off.
   */
  requestId(exchange: HttpExchange): { id: string; header?: [string, string] } | undefined {
    const options = this.settings.requestId;
    if (options === undefined) return undefined;
    const echoed = exchange.responseHeader(options.headerName);
    if (isSafeRequestId(echoed)) return { id: echoed };
    const { generator } = options;
    const id = resolveRequestId(
      exchange.requestHeader(options.headerName),
      generator && (() => this.#optional("option `requestId.generator`", generator)),
    );
    return { id, header: [options.headerName, id] };
  }

  /**
   * The headers a route adds to every reply: deprecation headers, and one `Link` appending the
   * deprecation links and `links` (one link-value each) to the response's existing `Link`.
   */
  routeHeaders(
    exchange: HttpExchange,
    plan: RoutePlan | undefined,
    links: readonly string[] = [],
  ): Array<[string, string]> {
    const headers: Array<[string, string]> = [];
    const values: string[] = [];
    for (const [name, value] of plan?.deprecation?.headers ?? []) {
      if (name === "Link") values.push(value);
      else headers.push([name, value]);
    }
    values.push(...links);
    const value = appendLinks(
      values.length === 0 ? undefined : exchange.responseHeader("Link"),
      values,
    );
    if (value !== undefined) headers.push(["Link", value]);
    return headers;
  }

  /**
   * The reply of a handler's `result`: the success envelope, or the result itself on a raw route,
   * for binary and stream results, or when the route set a non-JSON `Content-Type` (with the
   * route's and request-id headers all the same). Its status, the one sent and the envelope's, is
   * the one set on the response (a 200 too), else the route's. Throws when that status is not an
   * integer from the exchange's `lowestStatus` (default 100) to 599, an application function fails
   * or a paginated result's numbers are out of range (pass the throw to {@link error}).
   */
  success(
    result: unknown,
    exchange: HttpExchange,
    phase: RequestPhase & { plan: RoutePlan },
  ): Reply {
    const { plan } = phase;
    const status = exchange.status ?? plan.statusCode;
    const lowest = exchange.lowestStatus ?? 100;
    if (!isHttpStatus(status, lowest)) {
      throw new RangeError(
        `status ${status} set on the response is not an integer from ${lowest} to 599`,
      );
    }
    if (plan.raw || isPassthrough(result) || setsOwnMediaType(exchange)) {
      const headers = this.routeHeaders(exchange, plan);
      this.#addRequestId(headers, exchange);
      return this.#reply(status, headers, result, false);
    }
    const { settings } = this;
    const { transformResponse } = settings;
    const transformed = transformResponse === undefined
      ? result
      : this.#required("option `transformResponse`", () => transformResponse(result));
    const shaped = this.#shape(exchange, phase, transformed);
    const headers = this.routeHeaders(exchange, plan, shaped.links);
    const requestId = this.#addRequestId(headers, exchange);
    const body = buildSuccessBody({
      statusCode: status,
      code: plan.fixedCode || status === plan.statusCode
        ? plan.successCode
        : this.#successCode(status),
      requestId,
      data: shaped.data,
      meta: this.#meta(status, shaped.meta, exchange, phase, plan.message),
      timestamp: settings.timestamp ? this.#timestamp() : undefined,
      path: settings.path ? requestPath(exchange.target) : undefined,
    });
    return this.#reply(status, headers, body, true);
  }

  /** The error envelope or problem details of a thrown value (unknown values: a logged 500). Never throws. */
  error(thrown: unknown, exchange: HttpExchange, phase: RequestPhase = {}): Reply {
    const { settings } = this;
    const resolved = resolveError(thrown, settings);
    if (resolved.unexpected) this.logThrown(thrown, resolved.reason);
    else if (resolved.statusCode >= 500) this.#logCause(thrown, resolved.statusCode);
    try {
      const headers = this.routeHeaders(exchange, phase.plan);
      const requestId = this.#addRequestId(headers, exchange);
      const meta = this.#meta(resolved.statusCode, undefined, exchange, phase, undefined);
      const message = this.#translate(resolved.message, exchange);
      const path = requestPath(exchange.target);
      if (settings.problemDetails !== undefined) {
        headers.push(["Content-Type", PROBLEM_JSON_HEADER]);
        const body = buildProblemDetails({
          type: this.#problemType(phase, resolved.code),
          status: resolved.statusCode,
          code: resolved.code,
          detail: message,
          instance: path,
          requestId,
          details: resolved.details,
          meta,
        });
        return this.#reply(resolved.statusCode, headers, body, true);
      }
      const body = buildErrorBody({
        statusCode: resolved.statusCode,
        code: resolved.code,
        message,
        details: resolved.details,
        requestId,
        meta,
        timestamp: settings.timestamp ? this.#timestamp() : undefined,
        path: settings.path ? path : undefined,
      });
      return this.#reply(resolved.statusCode, headers, body, true);
    } catch (failure) {
      this.logThrown(failure);
      return this.#lastResort(exchange, phase);
    }
  }

  /**
   * The generic 500 sent when the error reply could not be built: with the request id (header and
   * body) when it can be had, as problem details with `problemDetails`, else (or when they fail too)
   * the bare envelope. Never throws.
   */
  #lastResort(exchange: HttpExchange, phase: RequestPhase): Reply {
    const code = "INTERNAL_SERVER_ERROR";
    const message = problemTitle(500);
    const headers: Array<[string, string]> = [];
    let requestId: string | undefined;
    try {
      requestId = this.#addRequestId(headers, exchange);
    } catch {
      // no id to send: the reply goes without
    }
    if (this.settings.problemDetails !== undefined) {
      try {
        const body = buildProblemDetails({
          type: this.#problemType(phase, code),
          status: 500,
          code,
          detail: message,
          instance: requestPath(exchange.target),
          requestId,
        });
        return this.#reply(500, [...headers, ["Content-Type", PROBLEM_JSON_HEADER]], body, true);
      } catch {
        // the envelope below
      }
    }
    return this.#reply(
      500,
      headers,
      buildErrorBody({ statusCode: 500, code, message, requestId }),
      true,
    );
  }

  /** The problem-details `type` of an error of `code`: the route's, else under `baseUrl`, else none. */
  #problemType(phase: RequestPhase, code: string): string | undefined {
    const baseUrl = this.settings.problemDetails?.baseUrl;
    return phase.plan?.problemType ??
      (baseUrl === undefined ? undefined : problemTypeUri(baseUrl, code));
  }

  /** Adds the request-id header to `headers` unless the response has it; the id, if ids are on. */
  #addRequestId(headers: Array<[string, string]>, exchange: HttpExchange): string | undefined {
    const requestId = this.requestId(exchange);
    if (requestId?.header !== undefined) headers.push(requestId.header);
    return requestId?.id;
  }

  /** The reply of `status`. */
  #reply(status: number, headers: Array<[string, string]>, body: unknown, wrapped: boolean): Reply {
    return { status, headers, body, wrapped, nullBody: isNullBodyStatus(status) };
  }

  /** `data`, the meta it carries and the `Link` value of its pagination links. */
  #shape(
    exchange: HttpExchange,
    phase: RequestPhase & { plan: RoutePlan },
    result: unknown,
  ): { data: unknown; meta?: Bag; links?: string[] } {
    const { plan } = phase;
    const { target } = exchange;
    let meta: Bag | undefined;
    let data = result;
    let links: string[] | undefined;
    let source: Bag | undefined; // where `sort` and `filters` are read
    if (plan.pagination !== undefined) {
      const paged = this.#paginate(exchange, phase, plan.pagination, result);
      if (paged !== undefined) {
        ({ links } = paged);
        meta = { pagination: paged.pagination };
        source = result as Bag;
        data = source.data;
      }
    } else if ((plan.sort || plan.filter) && isBag(result) && "data" in result) {
      source = result;
      data = source.data;
    }
    if (plan.sort) {
      if (isSortInfo(source?.sort)) (meta ??= {}).sort = source.sort;
      else {
        this.#mismatch(
          plan,
          "sort",
          "a `sort` field ({ field, order: 'asc' | 'desc' }) next to `data`",
        );
      }
    }
    if (plan.filter) {
      if (isFilterMap(source?.filters)) (meta ??= {}).filters = source.filters;
      else this.#mismatch(plan, "filters", "a plain `filters` object next to `data`");
    }
    if (plan.fieldSelection !== undefined) {
      const raw = queryParam(target, plan.fieldSelection.queryParam);
      const selection = raw === undefined
        ? undefined
        : parseFieldSelection(raw, plan.fieldSelection);
      if (selection !== undefined) {
        data = selectFields(data, selection);
        (meta ??= {}).fields = [...selection.fields];
      }
    }
    return { data, meta, links };
  }

  /**
   * The pagination meta and `Link` values of the handler's page, or `undefined` (warned) for another
   * shape. Throws on a number out of range.
   */
  #paginate(
    exchange: HttpExchange,
    phase: RequestPhase & { plan: RoutePlan },
    setting: PaginationSetting,
    result: unknown,
  ): { pagination: PaginationMeta | CursorPaginationMeta; links?: string[] } | undefined {
    const { plan } = phase;
    const { kind, links } = setting;
    const { linkHeader } = plan;
    const name = `${kind === "offset" ? "" : "Cursor"}PaginatedResult`;
    const fault = paginatedResultFault(kind, result);
    if (fault !== undefined && fault !== "shape") {
      throw new Error(
        `${plan.route}: the handler's ${name} has \`${fault}\` ${
          String((result as Bag)[fault])
        }, not a safe integer in range`,
      );
    }
    const given = hasLimits(setting) ? paginationQueryOf(exchange, phase).limit : undefined;
    const stated = (result as Partial<PaginatedResult> | undefined)?.limit;
    if (fault === "shape" || (stated === undefined && given === undefined)) {
      this.#mismatch(
        plan,
        "pagination",
        `a ${name} (with its \`limit\` on a route without limits)`,
      );
      return undefined;
    }
    const input = {
      limit: given,
      requestTarget: links || linkHeader ? exchange.target : undefined,
    };
    const pagination = kind === "offset"
      ? buildPaginationMeta(result as PaginatedResult, input)
      : buildCursorPaginationMeta(result as CursorPaginatedResult, input);
    let linkValues: string[] | undefined;
    if (linkHeader && pagination.links !== undefined) {
      linkValues = paginationLinkValues(pagination.links);
      if (!links || linkHeader === "only") delete pagination.links;
    }
    if (stated !== undefined && given !== undefined && stated !== given) {
      this.#warnOnce(
        plan,
        "limit",
        `${plan.route}: the handler returned limit ${stated} for a page size of ${given}; ` +
          `meta describes the page sent (limit ${stated}); take the page size from ` +
          "PaginationQuery() / context.pagination",
      );
    }
    const count = ((result as Bag).data as unknown[]).length;
    if (count > pagination.limit) {
      this.#warnOnce(
        plan,
        "items",
        `${plan.route}: the handler returned ${count} items on a page of limit ${pagination.limit}; ` +
          "all are sent",
      );
    }
    return { pagination, links: linkValues };
  }

  /** The one assembly of `meta`, for successes and errors; a field is never overridden. */
  #meta(
    status: number,
    shaped: Bag | undefined,
    exchange: HttpExchange,
    phase: RequestPhase,
    message: string | undefined,
  ): ResponseMeta & ErrorMeta | undefined {
    const { settings } = this;
    const { plan } = phase;
    let meta = shaped;
    if (message !== undefined) (meta ??= {}).message = this.#translate(message, exchange);
    if (settings.responseTime && plan !== undefined && phase.start !== undefined) {
      (meta ??= {}).responseTime = Math.round((performance.now() - phase.start) * 100) / 100;
    }
    if (plan?.deprecation !== undefined) (meta ??= {}).deprecation = plan.deprecation.meta;
    const apiVersion = phase.apiVersion ?? plan?.apiVersion ??
      (typeof settings.version === "string" ? settings.version : undefined);
    if (apiVersion !== undefined) (meta ??= {}).apiVersion = apiVersion;
    if (settings.rateLimit !== undefined) {
      const mirrored = readRateLimitHeaders(
        (name) => exchange.responseHeader(name),
        settings.rateLimit,
        Date.now(),
        status,
      );
      if (mirrored !== undefined) (meta ??= {}).rateLimit ??= mirrored;
    }
    const read = settings.context === undefined ? undefined : this.#hooks.store;
    const store = read &&
      this.#optional("option `context`: reading the request-context store", read);
    if (isBag(store)) meta = this.#contextMeta(meta, store);
    return meta;
  }

  /**
   * Adds the context fields: a value or a resolver that fails is left out (logged), as is a value
   * JSON cannot encode (a BigInt, a cycle: it would fail the reply and its fallback 500 alike).
   */
  #contextMeta(meta: Bag | undefined, store: Bag): Bag | undefined {
    const { fields, resolver } = this.settings.context ?? {};
    const add = (name: string, value: unknown) => {
      if (
        value === undefined || !isContextFieldName(name) ||
        (meta !== undefined && Object.hasOwn(meta, name)) // own: `toString` is a field too
      ) return;
      if (
        (typeof value === "object" && value !== null || typeof value === "bigint") &&
        this.#optional(
            `option \`context\`: meta field \`${name}\``,
            () => (JSON.stringify(value), true),
          ) ===
          undefined
      ) return;
      (meta ??= {})[name] = value;
    };
    if (fields !== undefined) {
      for (const [name, key] of Object.entries(fields)) {
        add(name, this.#optional(`option \`context\`: store key \`${key}\``, () => store[key]));
      }
    }
    if (resolver !== undefined) {
      const what = "option `context.resolver`";
      const resolved = this.#optional(what, () => resolver(store));
      if (isBag(resolved)) {
        for (const [name, value] of this.#optional(what, () => Object.entries(resolved)) ?? []) {
          add(name, value);
        }
      }
    }
    return meta;
  }

  /** `message` in the request's language when i18n is on; untranslated when that fails. */
  #translate(message: string, exchange: HttpExchange): string {
    const { i18n } = this.settings;
    const adapter = i18n === "auto" ? this.#hooks.i18n : i18n;
    if (adapter === undefined) return message;
    const lang = callAppFunction(
      "i18n resolveLanguage",
      () => adapter.resolveLanguage(exchange.request),
    );
    if (!lang.ok) {
      this.#logError(lang.failure);
      return message;
    }
    const options = typeof lang.value === "string" ? { lang: lang.value } : undefined;
    const translated = this.#optional("i18n translate", () => adapter.translate(message, options));
    return typeof translated === "string" ? translated : message;
  }

  /** The formatted `timestamp` of now (formatted at most once per millisecond); throws when it fails. */
  #timestamp(): string {
    const now = Date.now();
    if (now !== this.#stampedAt) {
      const { dateFormatter } = this.settings;
      this.#stamp = this.#string("option `dateFormatter`", () => dateFormatter(new Date(now)))!;
      this.#stampedAt = now;
    }
    return this.#stamp;
  }

  /** The `successCodeMapper` code of `statusCode`; throws when the mapper fails. */
  #successCode(statusCode: number): string | undefined {
    const { successCodeMapper } = this.settings;
    return successCodeMapper === undefined
      ? undefined
      : this.#string("option `successCodeMapper`", () => successCodeMapper(statusCode), true);
  }

  /** The string `call` returns (or `undefined` when `orUndefined`); a failure or another value throws. */
  #string(what: string, call: () => unknown, orUndefined = false): string | undefined {
    const value = this.#required(what, call);
    if (typeof value === "string" || (orUndefined && value === undefined)) return value;
    throw new Error(`${what} returned ${typeof value}, not a string`);
  }

  /** The value of the application function `call`; a failure throws an `Error` saying so. */
  #required<T>(what: string, call: () => T): T {
    const outcome = callAppFunction(what, call);
    if (outcome.ok) return outcome.value;
    throw new Error(outcome.failure);
  }

  /** The value of the application function `call`, or `undefined` when it fails (logged). */
  #optional<T>(what: string, call: () => T): T | undefined {
    const outcome = callAppFunction(what, call);
    if (outcome.ok) return outcome.value;
    this.#logError(outcome.failure);
    return undefined;
  }

  #mismatch(plan: RoutePlan, key: string, expected: string): void {
    this.#warnOnce(
      plan,
      key,
      `${plan.route}: decorated for ${key} but returned a result without ${expected}; it is sent as plain data`,
    );
  }

  /** Logs `message` once per route and key, unless `suppressWarnings`. */
  #warnOnce(plan: RoutePlan, key: string, message: string): void {
    if (this.settings.suppressWarnings || plan.warned.has(key)) return;
    plan.warned.add(key);
    (this.#hooks.logger ?? CONSOLE_LOGGER).warn(message);
  }

  /** Logs the `cause` of a catalog exception sent with `status`, if any (never sent: it may be internal). */
  #logCause(thrown: unknown, status: number): void {
    let described: [line: string, stack: string | undefined];
    try {
      if (!isSafeException(thrown) || thrown.cause === undefined) return;
      const [line, stack] = describeThrown(thrown.cause);
      described = [`SafeException ${thrown.code} (${status}), caused by ${line}`, stack];
    } catch {
      return; // a hostile getter: nothing to log
    }
    this.#logError(...described);
  }

  /** Logs a thrown value (its line, or `reason`, and its stack), API keys redacted. */
  logThrown(thrown: unknown, reason?: string): void {
    const [line, stack] = describeThrown(thrown);
    this.#logError(reason ?? line, stack);
  }

  /** Logs an error, API keys (`legacyKeyLayouts`' too) redacted from the line and the stack. */
  #logError(line: string, stack?: string): void {
    const { redactApiKeys } = this.settings;
    (this.#hooks.logger ?? CONSOLE_LOGGER).error(
      redactApiKeys(line),
      stack === undefined ? undefined : redactApiKeys(stack),
    );
  }
}
