/**
 * The few request and response operations the module needs, over both
 * Express (`req`/`res`) and Fastify (`FastifyRequest`/`FastifyReply`, or the
 * raw Node objects inside middleware).
 *
 * @module
 */
import { originForm } from "../request_target.ts";

/** A request of either adapter. */
export interface RequestLike {
  url?: string;
  originalUrl?: string;
  headers?: Record<string, string | string[] | undefined>;
  query?: unknown;
  raw?: RequestLike;
}

/** A response of either adapter. */
export interface ResponseLike {
  statusCode?: number;
  header?: (name: string, value: string) => unknown;
  setHeader?: (name: string, value: string) => unknown;
  getHeader?: (name: string) => unknown;
}

/** The Node request behind an adapter request (the object middleware sees). */
export function rawRequest(request: RequestLike): RequestLike {
  return request.raw ?? request;
}

/** Path and query of the request (never its `Host`, nor an absolute-form target's authority). */
export function requestTarget(request: RequestLike): string {
  return originForm(request.originalUrl ?? request.url ?? "/");
}

/** A parsed query parameter (string, array of strings, or whatever the parser made). */
export function queryValue(request: RequestLike, name: string): unknown {
  const query = request.query;
  return typeof query === "object" && query !== null && Object.hasOwn(query, name)
    ? (query as Record<string, unknown>)[name]
    : undefined;
}

/** The path of a request target, without the query. */
export function pathOf(target: string): string {
  const query = target.indexOf("?");
  return query === -1 ? target : target.slice(0, query);
}

/** Sets a response header on either adapter. */
export function setResponseHeader(response: ResponseLike, name: string, value: string): void {
  if (typeof response.header === "function") response.header(name, value);
  else response.setHeader?.(name, value);
}

/** Reads a response header on either adapter. */
export function getResponseHeader(response: ResponseLike, name: string): unknown {
  return response.getHeader?.(name);
}
