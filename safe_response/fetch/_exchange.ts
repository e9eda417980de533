/**
 * The Fetch side of an exchange: the core's view of a `Request`, the handler's {@link SafeContext},
 * and the `Reply` as a `Response`.
 * @module
 */
import { isJsonMediaType, JSON_HEADER } from "../_media_type.ts";
import { fetchRequestTarget } from "../../telemetry/_fetch_target.ts";
import type { ParsedPaginationQuery } from "../pagination_query.ts";
import type { HttpExchange, Reply } from "../responder.ts";

/**
 * What a wrapped handler gets beside the request: the response's headers (sent also with an error
 * thrown afterwards, and read by the meta, e.g. `X-RateLimit-*`) and status.
 */
export interface SafeContext {
  /** Response headers to send (created on first use). */
  readonly headers: Headers;
  /** The status to send instead of the route's `statusCode` (successes only). */
  status?: number;
  /** The route's parsed pagination query; throws a `TypeError` on a route without pagination. */
  readonly pagination: ParsedPaginationQuery;
}

/** The context of one request: headers created on first use. */
export class RequestContext implements SafeContext {
  #headers: Headers | undefined;
  #pagination: (() => ParsedPaginationQuery) | undefined;
  status?: number;

  /** Where `pagination` comes from (the route's parser). */
  bindPagination(read: () => ParsedPaginationQuery): void {
    this.#pagination = read;
  }

  /** The route's parsed pagination query. */
  get pagination(): ParsedPaginationQuery {
    if (this.#pagination === undefined) throw new TypeError("no pagination on this route");
    return this.#pagination();
  }

  /** The response headers, created on first use. */
  get headers(): Headers {
    return this.#headers ??= new Headers();
  }

  /** The headers when the handler used them. */
  get touched(): Headers | undefined {
    return this.#headers;
  }
}

/**
 * The lowest status of a success: a `Response` carries 200 to 599 (Deno's also a 101, which only
 * an upgrade's own `Response` may send).
 */
export const LOWEST_STATUS = 200;

/** The core's view of a Fetch exchange (the request target in origin form: `fetchRequestTarget`). */
export class FetchExchange implements HttpExchange {
  readonly method: string;
  /** The target as sent (`fetchRequestTarget`); `undefined` when the Host is no `host[:port]`. */
  readonly #target: string | undefined;
  readonly lowestStatus = LOWEST_STATUS;
  /** The request headers read so far, by lower-case name (read again without the request). */
  #read: Map<string, string | undefined> | undefined;

  /**
   * A view of `request`, once the handler phase began its `context`, and the `Response` the handler
   * returned, if any (its headers win over the context's, as they do when sent).
   */
  constructor(
    readonly request: Request,
    readonly context?: RequestContext,
    readonly response?: Response,
    target: string | undefined = fetchRequestTarget(request),
  ) {
    this.method = request.method;
    this.#target = target;
  }

  /** The request target in origin form (`/` when it cannot be read: see `hostMalformed`). */
  get target(): string {
    return this.#target ?? "/";
  }

  /** Whether the Host header is no `host[:port]`: the target cannot be read apart from it. */
  get hostMalformed(): boolean {
    return this.#target === undefined;
  }

  /** The status the handler set, if any. */
  get status(): number | undefined {
    return this.context?.status;
  }

  /**
   * Reads the request headers `names` now, for when the handler closes the request (a WebSocket
   * upgrade: reading it afterwards throws).
   */
  readAhead(names: readonly string[]): void {
    for (const name of names) this.requestHeader(name);
  }

  /** This exchange once the handler returned `response` (the headers read so far kept). */
  answered(response: Response): FetchExchange {
    const answered = new FetchExchange(this.request, this.context, response, this.#target);
    answered.#read = this.#read;
    return answered;
  }

  /** A request header (repeated lines joined by `Headers`), read once. */
  requestHeader(name: string): string | undefined {
    const key = name.toLowerCase();
    const read = this.#read ??= new Map();
    if (read.has(key)) return read.get(key);
    const value = this.request.headers.get(name) ?? undefined;
    read.set(key, value);
    return value;
  }

  /** A header the handler set on the response (on its `Response`, else on the context). */
  responseHeader(name: string): unknown {
    return this.response?.headers.get(name) ?? this.context?.touched?.get(name) ?? undefined;
  }
}

/**
 * Copies `from` into `into`: each field replaces the one of its name, except `Set-Cookie`, whose
 * every line is added (one field per cookie; `set` would keep only the last).
 */
export function copyHeaders(into: Headers, from: Headers): void {
  from.forEach((value, name) => {
    if (name === "set-cookie") into.append(name, value);
    else into.set(name, value);
  });
}

/**
 * Response headers: the handler's, then the reply's (a plain list when the handler set none). A JSON
 * body is typed `application/json; charset=utf-8`, but for one whose handler set its own type: any
 * for an unwrapped one, a JSON one (`application/vnd.api+json`, its charset added) for an
 * envelope, as Express and Fastify send Nest's.
 */
function headersOf(
  reply: Reply,
  context: RequestContext | undefined,
  json: boolean,
): Headers | Array<[string, string]> {
  const touched = context?.touched;
  if (touched === undefined) {
    const own = reply.headers.some(([name]) => name.toLowerCase() === "content-type");
    return json && !own ? [["Content-Type", JSON_HEADER], ...reply.headers] : reply.headers;
  }
  if (json) {
    const own = touched.get("Content-Type");
    if (own === null || (reply.wrapped && !isJsonMediaType(own))) {
      touched.set("Content-Type", JSON_HEADER);
    } else if (reply.wrapped && !/;\s*charset=/i.test(own)) {
      touched.set("Content-Type", `${own}; charset=utf-8`);
    }
  }
  for (const [name, value] of reply.headers) touched.set(name, value);
  return touched;
}

/**
 * Cancels `body` when it is a stream, or a `Response`'s, that will not be sent (a file's stays open
 * until its stream is read or cancelled); a failure changes nothing.
 */
export function discardBody(body: unknown): void {
  const stream = body instanceof Response ? body.body : body;
  if (stream instanceof ReadableStream) stream.cancel().catch(() => {});
}

/**
 * The `Response` of `reply`: wrapped bodies and plain values as JSON; `Response`s, strings, bytes and
 * streams as they are (a handler's own 101 upgrade too); no body with a null body status (204, 205,
 * 304: a status below 200 is refused before, `LOWEST_STATUS`). Throws when the body cannot be
 * serialised.
 */
export function toResponse(reply: Reply, context: RequestContext | undefined): Response {
  const { body, status } = reply;
  if (reply.nullBody && !(body instanceof Response)) {
    discardBody(body);
    // No body, no Content-Type (even the handler's), as Express sends Nest's.
    const headers = new Headers(headersOf(reply, context, false));
    headers.delete("Content-Type");
    return new Response(null, { status, headers });
  }
  if (reply.wrapped) {
    const text = JSON.stringify(body);
    if (reply.headers.length === 0 && context?.touched === undefined) {
      return new Response(text, { status, headers: { "Content-Type": JSON_HEADER } });
    }
    return new Response(text, { status, headers: headersOf(reply, context, true) });
  }
  if (body instanceof Response) {
    const headers = new Headers(context?.touched);
    copyHeaders(headers, body.headers);
    for (const [name, value] of reply.headers) headers.set(name, value);
    return new Response(body.body, { status: body.status, statusText: body.statusText, headers });
  }
  if (body === undefined || body === null) {
    return new Response(null, { status, headers: headersOf(reply, context, false) });
  }
  if (
    typeof body === "string" || body instanceof Uint8Array || body instanceof ArrayBuffer ||
    body instanceof ReadableStream || body instanceof Blob
  ) {
    return new Response(body as BodyInit, { status, headers: headersOf(reply, context, false) });
  }
  return new Response(JSON.stringify(body), { status, headers: headersOf(reply, context, true) });
}
