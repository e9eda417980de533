/**
 * The global exception filter: every thrown value becomes the error envelope
 * or, with `problemDetails`, an RFC 9457 problem-details body, as the core's
 * `Responder` makes it.
 *
 * @module
 */
import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  Inject,
  Injectable,
} from "@nestjs/common";
import { HttpAdapterHost } from "@nestjs/core";
import { type Observable, throwError } from "rxjs";
import { Responder } from "../responder.ts";
import {
  countWhenClosed,
  exchangeOf,
  phaseOf,
  type RequestLike,
  type ResponseLike,
  setHeaders,
  undoSuccessLink,
} from "./_http.ts";

/**
 * Catches everything thrown in HTTP requests (installed globally by
 * `SafeResponseModule`). Unrecognised throws become a 500 with the generic
 * title, logged once (API keys redacted); nothing of the original (message,
 * stack, class name) reaches the client; neither does a failure of an
 * application function while the body is built (a generic 500). RPC and
 * WebSocket clients get what Nest's own filters send them: an `RpcException`'s
 * or `WsException`'s error, else `{ status: "error", message: "Internal server
 * error" }` (logged). Other contexts get the exception back unchanged (as an
 * error Observable), as from Nest's.
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 * // The module installs SafeResponseFilter as APP_FILTER:
 * @Module({ imports: [SafeResponseModule.register({ problemDetails: true })] })
 * class AppModule {}
 * ```
 */
@Catch()
@Injectable()
export class SafeResponseFilter implements ExceptionFilter {
  constructor(
    @Inject(Responder) private readonly responder: Responder,
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
  ) {}

  /** Sends the error response of `exception`. */
  catch(exception: unknown, host: ArgumentsHost): Observable<never> | undefined {
    const type = host.getType<string>();
    if (type === "rpc") return throwError(() => this.#clientError(exception, "RpcException").body);
    if (type === "ws") {
      this.#emitWsError(exception, host.switchToWs());
      return undefined;
    }
    // GraphQL and the like: thrown, as Nest's external filter does (a returned value would be the
    // resolver's answer, the error lost).
    if (type !== "http") throw exception;
    const http = host.switchToHttp();
    const request = http.getRequest<RequestLike>();
    const response = http.getResponse<ResponseLike>();
    // Counted as written, once: the interceptor may have had it counted, or this filter before
    // (its own reply failed to serialise).
    countWhenClosed(this.responder, response);
    const adapter = this.adapterHost.httpAdapter;
    const sent = adapter.isHeadersSent(response);
    // A success that failed to serialise: its pagination links are not the error's
    if (!sent) undoSuccessLink(request, response);
    // No handler phase: thrown before the interceptor (a guard, middleware, an unknown route).
    const phase = phaseOf(request) ?? { apiVersion: this.responder.versionOf(host) };
    const reply = this.responder.error(exception, exchangeOf(request, response), phase);
    if (sent) {
      adapter.end(response);
      return undefined;
    }
    setHeaders(response, reply.headers);
    if (
      adapter.getType() === "express" && reply.headers.some(([name]) => name === "Content-Type")
    ) {
      // Express adapters of Nest 11 reset any non-`application/json` error Content-Type in
      // `reply()`; the serialised body is sent as is so `application/problem+json` survives.
      adapter.status(response, reply.status);
      adapter.end(response, JSON.stringify(reply.body));
    } else {
      adapter.reply(response, reply.body, reply.status);
    }
    return undefined;
  }

  /**
   * What Nest's `BaseWsExceptionFilter` emits: the client error, with the message that caused it
   * unless the exception's own object; on a native WebSocket as `{ event, data }` text.
   */
  #emitWsError(exception: unknown, ws: ReturnType<ArgumentsHost["switchToWs"]>): void {
    const { body, own } = this.#clientError(exception, "WsException");
    const data = own ? body : { ...body, cause: { pattern: ws.getPattern(), data: ws.getData() } };
    const client = ws.getClient<{ emit?: unknown; send?: unknown; readyState?: unknown }>();
    if (typeof client.readyState === "number" && typeof client.send === "function") {
      client.send(JSON.stringify({ event: "exception", data }));
    } else if (typeof client.emit === "function") {
      client.emit("exception", data);
    }
  }

  /**
   * The error Nest's RPC and WebSocket filters send: the `getError()` of an instance of the class
   * named `trusted` (`own` when an object), else a generic one, the exception logged.
   */
  #clientError(exception: unknown, trusted: string): { body: object; own: boolean } {
    if (isInstanceNamed(exception, trusted) && hasGetError(exception)) {
      const error = exception.getError();
      return typeof error === "object" && error !== null
        ? { body: error, own: true }
        : { body: { status: "error", message: error }, own: false };
    }
    if (!isInstanceNamed(exception, "IntrinsicException")) this.responder.logThrown(exception);
    return { body: { status: "error", message: "Internal server error" }, own: false };
  }
}

/**
 * Whether `value` is an instance of a class named `name` or of a subclass: Nest's `RpcException`
 * and `WsException`, whose packages this library does not import, and `IntrinsicException`, which
 * `@nestjs/common` exports from 11 only.
 */
function isInstanceNamed(value: unknown, name: string): boolean {
  if (typeof value !== "object" || value === null) return false;
  try {
    for (
      let proto = Object.getPrototypeOf(value);
      proto !== null;
      proto = Object.getPrototypeOf(proto)
    ) {
      if ((proto.constructor as { name?: unknown } | undefined)?.name === name) return true;
    }
  } catch {
    // a hostile proxy: no class of Nest's
  }
  return false;
}

/** Whether `value` (an instance of a class of Nest's) has a `getError()`. */
const hasGetError = (value: unknown): value is { getError(): unknown } =>
  typeof (value as { getError?: unknown }).getError === "function";
