/**
 * The response interceptor: reads the route's plan (cached per handler),
 * records the handler phase, and replies with what the core's `Responder`
 * makes of the handler's result.
 *
 * @module
 */
import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
  StreamableFile,
} from "@nestjs/common";
import { ApplicationConfig } from "@nestjs/core";
import { map, type Observable, takeLast } from "rxjs";
import { beginPagination, Responder } from "../responder.ts";
import {
  countWhenClosed,
  exchangeOf,
  markPhase,
  phaseOf,
  type RequestLike,
  type ResponseLike,
  routeOf,
  setSuccessHeaders,
} from "./_http.ts";
import { requestVersion } from "./_versioning.ts";

/**
 * Binary data as Nest sends it as bytes on both adapters (a `StreamableFile`: Express's adapter
 * would send a `Buffer` as JSON, Fastify an `ArrayBuffer` as `{}`); any other result as it is.
 */
function bytesOf(body: unknown): unknown {
  if (!(body instanceof Uint8Array || body instanceof ArrayBuffer)) return body;
  const bytes = body instanceof ArrayBuffer ? new Uint8Array(body) : body;
  return new StreamableFile(bytes, { length: bytes.byteLength });
}

/**
 * Wraps every HTTP handler result in the success envelope (installed globally
 * by `SafeResponseModule`). Non-HTTP contexts, `RawResponse` routes, routes
 * Nest answers itself (`@Redirect`, `@Render`, `@Sse`) or whose handler sends
 * its own response (`@Res()`, `@Next()`, no passthrough), routes that set a
 * non-JSON `Content-Type` (`@Header`) and `StreamableFile`/`Buffer`/stream
 * results pass through unwrapped (binary data sent as its bytes on both
 * adapters); a success with a 1xx, 204, 205 or 304 status is sent with no body. A request it already answers (the module
 * registered twice) passes through the second one unchanged.
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 * // The module installs SafeResponseInterceptor as APP_INTERCEPTOR:
 * @Module({ imports: [SafeResponseModule.register()] })
 * class AppModule {}
 * ```
 */
@Injectable()
export class SafeResponseInterceptor implements NestInterceptor {
  constructor(
    @Inject(Responder) private readonly responder: Responder,
    @Inject(ApplicationConfig) private readonly config: ApplicationConfig,
  ) {}

  /** Wraps the result of an HTTP handler. */
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== "http") return next.handle();
    const http = context.switchToHttp();
    const request = http.getRequest<RequestLike>();
    // The module registered twice (root and feature module): the first interceptor answers.
    if (phaseOf(request) !== undefined) return next.handle();
    const response = http.getResponse<ResponseLike>();
    const { responder } = this;
    const versioning = this.config.getVersioning();
    const route = routeOf(responder, context.getClass(), context.getHandler(), versioning);
    const { plan } = route;
    // Counted as written: Nest serialises the result after this interceptor (and may fail to).
    countWhenClosed(responder, response);
    const exchange = exchangeOf(request, response);
    const start = responder.start();
    const apiVersion = responder.versionOf(context) ??
      (typeof route.version === "object" && versioning !== undefined
        ? requestVersion(route.version, exchange, versioning)
        : undefined);
    const phase = { plan, start, apiVersion };
    markPhase(request, phase);
    beginPagination(exchange, phase); // a bad pagination query is a 400 before the handler
    if (plan.raw) {
      setSuccessHeaders(request, response, responder.routeHeaders(exchange, plan));
      return next.handle();
    }
    // Nest sends an Observable's last value (`lastValueFrom`): only it is wrapped and sets headers.
    return next.handle().pipe(
      takeLast(1),
      map((result) => {
        const reply = responder.success(result, exchange, phase);
        setSuccessHeaders(request, response, reply.headers);
        // No envelope with a null body status: Nest then sends no body and no Content-Type
        if (reply.wrapped) return reply.nullBody ? undefined : reply.body;
        return bytesOf(reply.body);
      }),
    );
  }
}
