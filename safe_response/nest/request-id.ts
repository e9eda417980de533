/**
 * Request-id assignment: once per request, before guards (middleware), with
 * the exception filter and interceptor as a fallback for requests no
 * middleware saw (e.g. an unknown route on Fastify).
 *
 * @module
 */
import { resolveRequestId } from "../request_id.ts";
import type { SafeResponseSettings } from "../settings.ts";
import {
  rawRequest,
  type RequestLike,
  type ResponseLike,
  setResponseHeader,
} from "./http-exchange.ts";

type RequestIdSettings = NonNullable<SafeResponseSettings["requestId"]>;

const assigned = new WeakMap<object, string>();

/** The request's id, assigning (and echoing in the response header) on first use. */
export function assignRequestId(
  request: RequestLike,
  response: ResponseLike,
  settings: RequestIdSettings,
): string {
  const raw = rawRequest(request);
  let id = assigned.get(raw);
  if (id === undefined) {
    id = resolveRequestId(raw.headers?.[settings.headerName.toLowerCase()], settings.generator);
    assigned.set(raw, id);
    setResponseHeader(response, settings.headerName, id);
  }
  return id;
}

/** Functional middleware assigning the request id before guards run. */
export function requestIdMiddleware(
  settings: RequestIdSettings,
): (request: RequestLike, response: ResponseLike, next: () => void) => void {
  return (request, response, next) => {
    assignRequestId(request, response, settings);
    next();
  };
}
