/**
 * The route metadata the Nest and OpenAPI entries share, as plain `Reflect` metadata by key (no
 * `@nestjs/*` import, so `./safe-response/nest` works without swagger).
 * @module
 */
import type { RouteOptions } from "./responder.ts";
import { isJsonMediaType } from "./_media_type.ts";
import type { FieldSelectionOptions } from "./field_selection.ts";

/** The runtime decorators' metadata keys. */
export const ROUTE_KEYS = Object.freeze({
  raw: "safe-response:raw",
  message: "safe-response:message",
  successCode: "safe-response:success-code",
  pagination: "safe-response:pagination",
  /** A handler reading its pagination query (Nest's `PaginationQuery()`): it may answer the 400. */
  paginationQuery: "safe-response:pagination-query",
  linkHeader: "safe-response:link-header",
  sort: "safe-response:sort",
  filter: "safe-response:filter",
  problemType: "safe-response:problem-type",
  deprecation: "safe-response:deprecated",
  fieldSelection: "safe-response:field-selection",
  problemDetails: "safe-response:endpoint-problem-details",
});

/** `@nestjs/swagger`'s `DECORATORS` values this library writes. */
export const SWAGGER_METADATA = Object.freeze({
  operation: "swagger/apiOperation",
  extension: "swagger/apiExtension",
  response: "swagger/apiResponse",
  parameters: "swagger/apiParameters",
});

/** Nest's `METHOD_METADATA` (stable from Nest 10 to 12). */
export const NEST_METHOD_METADATA = "method";

/** Nest's `HTTP_CODE_METADATA` (`@HttpCode`; stable from Nest 10 to 12). */
export const NEST_HTTP_CODE = "__httpCode__";

/** Nest's `REDIRECT_METADATA` (`@Redirect`; stable from Nest 10 to 12, in `@nestjs/common/constants`). */
export const NEST_REDIRECT_METADATA = "__redirect__";

/** Nest's `RENDER_METADATA` (`@Render`; stable from Nest 10 to 12, in `@nestjs/common/constants`). */
export const NEST_RENDER_METADATA = "__renderTemplate__";

/** Nest's `SSE_METADATA` (`@Sse`; stable from Nest 10 to 12, in `@nestjs/common/constants`). */
export const NEST_SSE_METADATA = "__sse__";

/** Nest's `ROUTE_ARGS_METADATA` (parameter decorators, by `${paramtype}:${index}`; on the class, by method). */
export const NEST_ROUTE_ARGS_METADATA = "__routeArguments__";

/** Nest's `RESPONSE_PASSTHROUGH_METADATA` (`@Res({ passthrough: true })`; on the class, by method). */
export const NEST_RESPONSE_PASSTHROUGH_METADATA = "__responsePassthrough__";

/** Nest's `RouteParamtypes.RESPONSE` and `RouteParamtypes.NEXT`. */
const NEST_RESPONSE_PARAMS: ReadonlySet<number> = new Set([1, 2]);

/** Nest's `HEADERS_METADATA` (`@Header`: `{ name, value }[]`, in `@nestjs/common/constants`). */
const NEST_HEADERS_METADATA = "__headers__";

/** Nest's `RequestMethod.POST`. */
const POST = 1;

/** Vendor extension marking the operations `applyGlobalErrors` leaves alone (`SkipGlobalErrors`). */
export const SKIP_GLOBAL_ERRORS_EXTENSION = "x-safe-skip-global-errors";

/**
 * Vendor extension marking a paginated operation (`Paginated`, `CursorPaginated`):
 * `{ kind: "offset" | "cursor", limits, linkHeader? }`, `limits` when the route sets `maxLimit` or
 * `defaultLimit`. The pipeline then parses its query before the handler (as with the module's
 * `defaultLimit`), so `applyGlobalErrors` documents the 400 `INVALID_PAGINATION_QUERY`; with the
 * route's `linkHeader` (the method's, else the controller's: read as the server reads it, else the
 * module's), it documents the success's `Link` header.
 */
export const PAGINATED_EXTENSION = "x-safe-paginated";

/**
 * Vendor extension listing the headers every response of an operation carries besides the
 * module's (`Deprecated`: `Deprecation`, then `Sunset` and `Link` when set), a guard's error aside;
 * `applyGlobalErrors` documents them on every response (optional, for that guard's error).
 */
export const RESPONSE_HEADERS_EXTENSION = "x-safe-response-headers";

/**
 * Vendor extension of an operation's `FieldSelection`: `true` (on) or `false` (off); without it the
 * module's `fieldSelection` decides. `applyGlobalErrors` then documents `data` without `required`.
 */
export const FIELD_SELECTION_EXTENSION = "x-safe-field-selection";

/**
 * Vendor extension of a `SafeResponse` route or a composite endpoint: `{ documented, described,
 * status, media, redirect }`, the status its success was documented at, whether its description was
 * given, and (read when the document is built, after every decorator: `@HttpCode`, `@Header`,
 * `@Sse`, `@Render` or `@Redirect` may come after) the status Nest sends (`@Redirect`'s), the media
 * type of a success sent without the envelope (`ownSuccessMediaType`) and whether Nest redirects.
 * `applyGlobalErrors` moves the success to `status`, with that media type, or with `Location` and no
 * body when it redirects.
 */
export const SUCCESS_STATUS_EXTENSION = "x-safe-success-status";

/** Vendor extension holding the `ProblemType` URI of an operation. */
export const PROBLEM_TYPE_EXTENSION = "x-safe-problem-type";

/** A method and class decorator. */
export type RouteDecorator = MethodDecorator & ClassDecorator;

/** Nest's `SetMetadata`: `value` under `key` on the handler, or on the class. */
export function setMetadata(key: string, value: unknown): RouteDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    Reflect.defineMetadata(key, value, descriptor === undefined ? target : descriptor.value);
  };
}

/** Nest's `applyDecorators`: one decorator applying `decorators` in order. */
export function combine(...decorators: RouteDecorator[]): RouteDecorator {
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    for (const decorator of decorators) {
      if (descriptor === undefined) (decorator as ClassDecorator)(target as () => void);
      else (decorator as MethodDecorator)(target, key!, descriptor);
    }
  };
}

/**
 * The status Nest redirects `handler`'s requests with (`@Redirect`, not under `@Render`, which Nest
 * tests first): the decorator's, else 302; a result's `statusCode` overrides it per request. Else
 * `undefined`.
 */
export function redirectStatusOf(handler: object): number | undefined {
  const redirect = Reflect.getMetadata(NEST_REDIRECT_METADATA, handler);
  if (typeof redirect?.url !== "string" || Reflect.getMetadata(NEST_RENDER_METADATA, handler)) {
    return undefined;
  }
  return redirect.statusCode || 302;
}

/**
 * Whether Nest itself answers `handler`'s result (`@Redirect` reads `{ url, statusCode }` from it,
 * `@Render` renders it, `@Sse` writes each event): tested as Nest's router tests it, on the handler.
 */
function nestAnswers(handler: object): boolean {
  return redirectStatusOf(handler) !== undefined ||
    !!Reflect.getMetadata(NEST_RENDER_METADATA, handler) ||
    !!Reflect.getMetadata(NEST_SSE_METADATA, handler);
}

/**
 * Whether `handler` sends its own response: a `@Res()` or `@Next()` parameter without
 * `@Res({ passthrough: true })` (Nest's `isResponseHandled`; Nest then sends nothing itself).
 */
export function sendsOwnResponse(controller: object, handler: object): boolean {
  const name = (handler as { name?: string }).name;
  if (typeof name !== "string" || name === "") return false;
  if (Reflect.getMetadata(NEST_RESPONSE_PASSTHROUGH_METADATA, controller, name)) return false;
  const args: unknown = Reflect.getMetadata(NEST_ROUTE_ARGS_METADATA, controller, name);
  return Object.keys(args ?? {}).some((key) => NEST_RESPONSE_PARAMS.has(Number(key.split(":")[0])));
}

/**
 * The media type `handler` sends its success with when not the JSON envelope: `text/html` for
 * `@Render` (a view engine's default), `text/event-stream` for `@Sse`, its own
 * `@Header("Content-Type")` when not JSON (the last one, as Nest sets them in order); else `null`.
 */
export function ownSuccessMediaType(handler: object): string | null {
  if (Reflect.getMetadata(NEST_RENDER_METADATA, handler)) return "text/html";
  if (Reflect.getMetadata(NEST_SSE_METADATA, handler)) return "text/event-stream";
  const headers: unknown = Reflect.getMetadata(NEST_HEADERS_METADATA, handler);
  const type = (Array.isArray(headers) ? headers as { name?: unknown; value?: unknown }[] : [])
    .findLast((header) =>
      typeof header?.name === "string" && header.name.toLowerCase() === "content-type"
    )?.value;
  return typeof type === "string" && !isJsonMediaType(type) ? type : null;
}

/**
 * The route option `key` as the server reads it: the handler's, else its controller's (each option on
 * its own, so a controller's `linkHeader` reaches a route with its own pagination options). The one
 * home of that merge: `readRouteOptions` and the `x-safe-paginated` mark both read through it.
 */
export function routeOption<T>(controller: object, handler: object, key: string): T | undefined {
  return Reflect.getMetadata(key, handler) ?? Reflect.getMetadata(key, controller);
}

/**
 * The route options the decorators set on `handler` (over its `controller`), and Nest's default
 * status. A route Nest answers itself (`@Redirect`, `@Render`, `@Sse`) or whose handler sends its own
 * response (`@Res()`, `@Next()`, no passthrough) is raw whatever `SafeResponse` says.
 */
export function readRouteOptions(controller: object, handler: object): RouteOptions {
  const get = <T>(key: string): T | undefined => routeOption<T>(controller, handler, key);
  const method = Reflect.getMetadata(NEST_METHOD_METADATA, handler);
  return {
    route: `${(controller as { name?: string }).name}.${(handler as { name?: string }).name}`,
    raw: nestAnswers(handler) || sendsOwnResponse(controller, handler) ||
      get<boolean>(ROUTE_KEYS.raw),
    statusCode: Reflect.getMetadata(NEST_HTTP_CODE, handler) ?? (method === POST ? 201 : 200),
    successCode: Reflect.getMetadata(ROUTE_KEYS.successCode, handler),
    message: get(ROUTE_KEYS.message),
    pagination: get(ROUTE_KEYS.pagination),
    linkHeader: get(ROUTE_KEYS.linkHeader),
    sort: get(ROUTE_KEYS.sort),
    filter: get(ROUTE_KEYS.filter),
    problemType: get(ROUTE_KEYS.problemType),
    deprecation: get(ROUTE_KEYS.deprecation),
    fieldSelection: get<FieldSelectionOptions | false>(ROUTE_KEYS.fieldSelection),
    problemDetails: get(ROUTE_KEYS.problemDetails),
  };
}

/**
 * The route handlers of the class `controller`: those it declares and those it inherits, as Nest
 * serves them (the server reads its class metadata on both). An inherited one is made the class's own
 * first (`adoptRoute`), so that marking it documents this controller's route, not its base's, which
 * shares the function.
 */
export function routeHandlersOf(controller: object): object[] {
  const prototype = (controller as { prototype: object }).prototype;
  const handlers: object[] = [];
  const seen = new Set(["constructor"]);
  for (
    let holder: object | null = prototype;
    holder !== null && holder !== Object.prototype;
    holder = Object.getPrototypeOf(holder)
  ) {
    for (const name of Object.getOwnPropertyNames(holder)) {
      if (seen.has(name)) continue; // overridden below
      seen.add(name);
      const handler = Object.getOwnPropertyDescriptor(holder, name)?.value;
      if (typeof handler !== "function" || !Reflect.hasMetadata(NEST_METHOD_METADATA, handler)) {
        continue;
      }
      handlers.push(holder === prototype ? handler : adoptRoute(prototype, name, handler));
    }
  }
  return handlers;
}

/**
 * Makes the inherited route `inherited` the own method `name` of `prototype`: one calling it, with a
 * copy of its metadata (Nest's and swagger's), so Nest serves it and swagger documents it as before.
 */
function adoptRoute(
  prototype: object,
  name: string,
  inherited: (...args: unknown[]) => unknown,
): object {
  const own = {
    [name](this: unknown, ...args: unknown[]) {
      return inherited.apply(this, args);
    },
  }[name];
  for (const key of Reflect.getOwnMetadataKeys(inherited)) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, inherited), own);
  }
  Object.defineProperty(own, "length", { value: inherited.length });
  Object.defineProperty(prototype, name, { value: own, writable: true, configurable: true });
  return own;
}

/** A decorator applying `mark` to the route, or to every route of a controller (`routeHandlersOf`). */
export function onRoutes(mark: (handler: object, controller: object) => void): RouteDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor !== undefined) mark(descriptor.value, target.constructor);
    else for (const handler of routeHandlersOf(target)) mark(handler, target);
  };
}

/** Sets `deprecated: true` on the operation, keeping its other `ApiOperation` fields. */
export function markDeprecatedOperation(): RouteDecorator {
  return onRoutes((handler) => {
    const operation = Reflect.getMetadata(SWAGGER_METADATA.operation, handler);
    Reflect.defineMetadata(SWAGGER_METADATA.operation, { ...operation, deprecated: true }, handler);
  });
}

/**
 * Sets the vendor extension `name` of the operation: an existing value wins (as in swagger), except
 * on a controller's route without its own metadata `key` (the server reads the controller's value
 * then, so this one wins over one the route got from a base controller's decorator).
 */
export function markExtension(name: string, value: unknown, key?: string): RouteDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor !== undefined) return setExtension(descriptor.value, name, value, false);
    for (const handler of routeHandlersOf(target)) {
      setExtension(
        handler,
        name,
        value,
        key !== undefined && !Reflect.hasOwnMetadata(key, handler),
      );
    }
  };
}

/** Sets the vendor extension `name` of one route handler; an existing value wins unless `replace`. */
export function setExtension(
  handler: object,
  name: string,
  value: unknown,
  replace: boolean,
): void {
  const extensions = Reflect.getMetadata(SWAGGER_METADATA.extension, handler);
  Reflect.defineMetadata(
    SWAGGER_METADATA.extension,
    replace ? { ...extensions, [name]: value } : { [name]: value, ...extensions },
    handler,
  );
}

/** Documents the response `response` at `status` of one route handler. */
export function markResponse(handler: object, status: number, response: object): void {
  const responses = Reflect.getMetadata(SWAGGER_METADATA.response, handler);
  Reflect.defineMetadata(SWAGGER_METADATA.response, { ...responses, [status]: response }, handler);
}

/** A query parameter as `ApiQuery` records it (`in: "query"` is added). */
export interface QueryParameter {
  /** Parameter name. */
  name: string;
  /** Whether it is required. */
  required: boolean;
  /** Description. */
  description: string;
  /** Its OpenAPI schema. */
  schema: Record<string, unknown>;
}

/** Documents query `parameters` of one route handler; one it already documents by name is kept. */
export function markQueryParameters(handler: object, parameters: readonly QueryParameter[]): void {
  const existing: Array<{ name?: unknown; in?: unknown }> =
    Reflect.getMetadata(SWAGGER_METADATA.parameters, handler) ?? [];
  const documented = (name: string) =>
    existing.some((parameter) => parameter.in === "query" && parameter.name === name);
  const added = parameters.filter(({ name }) => !documented(name))
    .map((parameter) => ({ in: "query", ...structuredClone(parameter) }));
  Reflect.defineMetadata(SWAGGER_METADATA.parameters, [...existing, ...added], handler);
}
