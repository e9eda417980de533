/**
 * The Fetch side of an exchange: the core's `HttpExchange` view over a Web
 * `Request` and the handler's {@link SafeContext} (the response headers and
 * status it sets), and the conversion of the core's `Reply` to a `Response`.
 *
 * @module
 */
import type { ParsedPaginationQuery } from "../pagination_query.ts";
import type { HttpExchange, Reply } from "../responder.ts";

/**
 * What a wrapped handler gets beside the request: the headers and the status
 * of the response to come. Headers set here are sent with the answer (also
 * with an error the handler throws afterwards), and the safe-response meta
 * reads them: rate-limit headers (`X-RateLimit-*`, `Retry-After`) are
 * mirrored into `meta.rateLimit` with the `rateLimit` option, and a request
 * id already set is the one echoed.
 * @example
 * ```ts
 * import type { SafeContext } from "@saferoute/api-kit/safe-response/fetch";
 * function countDown(context: SafeContext, remaining: number) {
 *   context.headers.set("X-RateLimit-Limit", "10");
 *   context.headers.set("X-RateLimit-Remaining", String(remaining));
 *   context.headers.set("X-RateLimit-Reset", "60");
 * }
 * ```
 */
export interface SafeContext {
  /** Response headers to send (created on first use). */
  readonly headers: Headers;
  /** The status to send instead of the route's `statusCode` (successes only). */
  status?: number;
  /**
   * The route's parsed pagination query (`{ kind: "offset", page, limit }` or
   * `{ kind: "cursor", cursor?, limit }`), as Nest's `PaginationQuery()` gives
   * it: `limit` clamped to `maxLimit` and defaulted. Reading it on a route
   * without pagination throws a `TypeError`.
   */
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

/** The core's view of a Fetch exchange (the request target is the absolute URL). */
export class FetchExchange implements HttpExchange {
  readonly method: string;
  readonly target: string;

  /** A view of `request` and, once the handler phase began, its `context`. */
  constructor(readonly request: Request, readonly context?: RequestContext) {
    this.method = request.method;
    this.target = request.url;
  }

  /** The status the handler set, if any. */
  get status(): number | undefined {
    return this.context?.status;
  }

  /** A request header (repeated lines joined by `Headers`). */
  requestHeader(name: string): string | undefined {
    return this.request.headers.get(name) ?? undefined;
  }

  /** A header the handler set on the response. */
  responseHeader(name: string): unknown {
    return this.context?.touched?.get(name) ?? undefined;
  }
}

const JSON_CONTENT_TYPE = "application/json";

/**
 * Response headers: the handler's, then the reply's (set semantics). When the
 * handler set none, a list of pairs (the reply's names are distinct and its
 * own `Content-Type` comes last), which `Response` reads without a `Headers`.
 */
function headersOf(
  reply: Reply,
  context: RequestContext | undefined,
  json: boolean,
): Headers | Array<[string, string]> {
  const touched = context?.touched;
  if (touched === undefined) {
    const own = reply.headers.some(([name]) => name.toLowerCase() === "content-type");
    return json && !own ? [["Content-Type", JSON_CONTENT_TYPE], ...reply.headers] : reply.headers;
  }
  if (json) touched.set("Content-Type", JSON_CONTENT_TYPE);
  for (const [name, value] of reply.headers) touched.set(name, value);
  return touched;
}

/**
 * The `Response` of `reply`. A wrapped body (envelope, problem details) is
 * JSON (`application/json` unless the reply sets its own type); an unwrapped
 * one is sent as it is: a `Response` keeps its own status (the handler's and
 * the reply's headers added), strings, bytes and streams are the body, `null`
 * and `undefined` an empty body, anything else JSON. Throws when the body
 * cannot be serialised (the binding answers a 500 then).
 */
export function toResponse(reply: Reply, context: RequestContext | undefined): Response {
  const { body, status } = reply;
  if (reply.wrapped) {
    const text = JSON.stringify(body);
    if (reply.headers.length === 0 && context?.touched === undefined) {
      return new Response(text, { status, headers: { "Content-Type": JSON_CONTENT_TYPE } });
    }
    return new Response(text, { status, headers: headersOf(reply, context, true) });
  }
  if (body instanceof Response) {
    const headers = new Headers(context?.touched);
    body.headers.forEach((value, name) => headers.set(name, value));
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
