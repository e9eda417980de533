/**
 * Nest's side of an HTTP exchange: the core's `HttpExchange` view over
 * Express (`req`/`res`) and Fastify (`FastifyRequest`/`FastifyReply`, or the
 * raw Node objects inside middleware); the per-handler plan cache; and the
 * handler phase the interceptor records so the exception filter can tell
 * handler errors from guard errors (filters get no handler from Nest).
 *
 * @module
 */
import type { VersioningOptions } from "@nestjs/common";
import type { HttpExchange, RequestPhase, Responder, RoutePlan } from "../responder.ts";
import { readRouteOptions } from "../_route_metadata.ts";
import { readRouteVersion, type RouteVersion } from "./_versioning.ts";

/** A request of either adapter. */
export interface RequestLike {
  method?: string;
  url?: string;
  originalUrl?: string;
  headers?: Record<string, string | string[] | undefined>;
  raw?: RequestLike;
}

/** A response of either adapter. */
export interface ResponseLike {
  statusCode?: number;
  header?: (name: string, value: string) => unknown;
  setHeader?: (name: string, value: string) => unknown;
  getHeader?: (name: string) => unknown;
  removeHeader?: (name: string) => unknown;
  /** Fastify's reply: the Node response. */
  raw?: ResponseLike;
  /** Node's response: whether its status and headers went out. */
  headersSent?: boolean;
  on?: (event: "close", listener: (this: ResponseLike) => void) => unknown;
}

/** The core's view of a Nest exchange. */
class NestExchange implements HttpExchange {
  constructor(readonly request: RequestLike, readonly response: ResponseLike) {}
  get method(): string {
    return this.request.method ?? "GET";
  }
  get target(): string {
    return this.request.originalUrl ?? this.request.url ?? "/";
  }
  get status(): number | undefined {
    return this.response.statusCode;
  }
  requestHeader(name: string): string | undefined {
    const value = this.request.headers?.[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  }
  responseHeader(name: string): unknown {
    return this.response.getHeader?.(name);
  }
}

/** The core's view of `request` and `response`. */
export function exchangeOf(request: RequestLike, response: ResponseLike): HttpExchange {
  return new NestExchange(request, response);
}

/** Sets response headers on either adapter; none once they went out (the handler sent them). */
export function setHeaders(response: ResponseLike, headers: Iterable<readonly [string, string]>) {
  if ((response.raw ?? response).headersSent === true) return;
  for (const [name, value] of headers) {
    if (typeof response.header === "function") response.header(name, value);
    else response.setHeader?.(name, value);
  }
}

/** The response's `Link` before the interceptor set a success's headers, by request. */
const linksBefore = new WeakMap<object, { link: unknown }>();

/** Sets the headers of a success on `response`, remembering the `Link` they may append to. */
export function setSuccessHeaders(
  request: RequestLike,
  response: ResponseLike,
  headers: Iterable<readonly [string, string]>,
): void {
  linksBefore.set(request, { link: response.getHeader?.("Link") });
  setHeaders(response, headers);
}

/**
 * Takes back the `Link` a success set (its body then failed to serialise, headers not sent): the
 * error's links then append to the one before it (a middleware's), not to the success's pages.
 */
export function undoSuccessLink(request: RequestLike, response: ResponseLike): void {
  const before = linksBefore.get(request);
  if (before === undefined) return;
  linksBefore.delete(request);
  if (before.link === undefined) response.removeHeader?.("Link");
  else setHeaders(response, [["Link", String(before.link)]]);
}

/** A route's plan and its Nest versions (when several, the request picks one). */
export interface NestRoute {
  /** The core's plan. */
  readonly plan: RoutePlan;
  /** The route's Nest version(s). */
  readonly version: RouteVersion;
}

/** Plans by responder, controller and handler (controllers may share an inherited handler). */
const routes = new WeakMap<object, WeakMap<object, WeakMap<object, NestRoute>>>();

/** The cached plan of `handler` on `controller`, built on the route's first request. */
export function routeOf(
  responder: Responder,
  controller: object,
  handler: object,
  versioning: VersioningOptions | undefined,
): NestRoute {
  let byController = routes.get(responder);
  if (byController === undefined) routes.set(responder, byController = new WeakMap());
  let byHandler = byController.get(controller);
  if (byHandler === undefined) byController.set(controller, byHandler = new WeakMap());
  let route = byHandler.get(handler);
  if (route === undefined) {
    const version = readRouteVersion(controller, handler, versioning);
    const options = readRouteOptions(controller, handler);
    if (typeof version === "string") options.apiVersion = version;
    route = { plan: responder.plan(options), version };
    byHandler.set(handler, route);
  }
  return route;
}

/** What counts a response as it closes, by responder (its status, once it went out). */
const counters = new WeakMap<Responder, (this: ResponseLike) => void>();
/** The Node responses a closing count listens to already. */
const counted = new WeakSet<ResponseLike>();

/**
 * Counts `response` as it closes, once, through `responder`'s telemetry count (`written`), when
 * its status went out: the status written, whoever wrote it (Nest, after the interceptor; the
 * filter; an adapter's own error reply). No listener while the telemetry bridge is off.
 */
export function countWhenClosed(responder: Responder, response: ResponseLike): void {
  if (responder.written === undefined) return;
  const node = response.raw ?? response;
  if (counted.has(node)) return;
  counted.add(node);
  let count = counters.get(responder);
  if (count === undefined) {
    count = function (this: ResponseLike) {
      if (this.headersSent === true) responder.written?.(this.statusCode ?? 0);
    };
    counters.set(responder, count);
  }
  node.on?.("close", count);
}

const phases = new WeakMap<object, RequestPhase & { plan: RoutePlan }>();

/** Records that the handler phase of `request` began. */
export function markPhase(request: object, phase: RequestPhase & { plan: RoutePlan }): void {
  phases.set(request, phase);
}

/** The handler phase of `request`, or `undefined` before it (guard errors). */
export function phaseOf(request: object): (RequestPhase & { plan: RoutePlan }) | undefined {
  return phases.get(request);
}

/** Injection token of the module's resolved settings. */
export const SETTINGS: unique symbol = Symbol("safe-response:settings");
