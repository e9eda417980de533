/**
 * The global exception filter: every thrown value becomes the error envelope
 * or, with `problemDetails`, an RFC 9457 problem-details body.
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
import type { ErrorMeta } from "../../client/types.ts";
import { describeThrown } from "../app_functions.ts";
import { buildErrorBody } from "../envelope.ts";
import { type ResolvedError, resolveError } from "../error_resolution.ts";
import {
  buildProblemDetails,
  PROBLEM_JSON_CONTENT_TYPE,
  problemTypeUri,
} from "../problem_details.ts";
import { problemTitle } from "../problem_titles.ts";
import { elapsedSince, handlerPhase } from "./handler-phase.ts";
import { pathOf, type RequestLike, requestTarget, type ResponseLike } from "./http-exchange.ts";
import { assignRequestId } from "./request-id.ts";
import { SafeResponseRuntime } from "./safe-response.runtime.ts";

/**
 * Catches everything thrown in HTTP requests (installed globally by
 * `SafeResponseModule`). Unrecognised throws become a 500 with the generic
 * title, logged once (API keys redacted); nothing of the original (message,
 * stack, class name) reaches the client; neither does a failure of an
 * application function while the body is built (a generic 500). In non-HTTP contexts the exception is passed on
 * unchanged (as an error Observable).
 *
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 *
 * // The module installs SafeResponseFilter as APP_FILTER:
 * @Module({ imports: [SafeResponseModule.register({ problemDetails: true })] })
 * class AppModule {}
 * ```
 */
@Catch()
@Injectable()
export class SafeResponseFilter implements ExceptionFilter {
  constructor(
    @Inject(SafeResponseRuntime) private readonly runtime: SafeResponseRuntime,
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
  ) {}

  /** Sends the error response of `exception`. */
  catch(exception: unknown, host: ArgumentsHost): Observable<never> | undefined {
    if (host.getType() !== "http") return throwError(() => exception);
    const http = host.switchToHttp();
    const request = http.getRequest<RequestLike>();
    const response = http.getResponse<ResponseLike>();
    const adapter = this.adapterHost.httpAdapter;
    const { settings } = this.runtime;
    const resolved = resolveError(exception, settings);
    if (resolved.unexpected) {
      const [line, stack] = describeThrown(exception);
      this.runtime.logError(resolved.reason ?? line, stack);
    }
    if (adapter.isHeadersSent(response)) {
      adapter.end(response);
      return undefined;
    }
    let body: object;
    try {
      body = this.#body(resolved, host, request, response);
    } catch (failure) {
      this.runtime.logError(...describeThrown(failure));
      body = buildErrorBody({
        statusCode: 500,
        code: "INTERNAL_SERVER_ERROR",
        message: problemTitle(500),
      });
      resolved.statusCode = 500;
    }
    if (settings.problemDetails !== undefined && adapter.getType() === "express") {
      // Express adapters of Nest 11 reset any non-`application/json` error Content-Type in
      // `reply()`; the serialised body is sent as is so `application/problem+json` survives.
      adapter.status(response, resolved.statusCode);
      adapter.end(response, JSON.stringify(body));
    } else {
      adapter.reply(response, body, resolved.statusCode);
    }
    return undefined;
  }

  #body(
    resolved: ResolvedError,
    host: ArgumentsHost,
    request: RequestLike,
    response: ResponseLike,
  ): object {
    const { settings } = this.runtime;
    const phase = handlerPhase(request); // undefined: thrown before the interceptor (a guard)
    const plan = phase?.plan;
    let meta: ErrorMeta | undefined;
    if (plan?.deprecation !== undefined) meta = { deprecation: plan.deprecation.meta };
    if (phase !== undefined && settings.responseTime) {
      (meta ??= {}).responseTime = elapsedSince(phase.start);
    }
    const apiVersion = phase === undefined
      ? this.runtime.apiVersion(host, request, undefined)
      : phase.apiVersion;
    if (apiVersion !== undefined) (meta ??= {}).apiVersion = apiVersion;
    meta = this.runtime.sharedMeta(meta, response) as typeof meta;
    const requestId = settings.requestId === undefined
      ? undefined
      : assignRequestId(request, response, settings.requestId);
    const message = this.runtime.translate(resolved.message, request);
    const path = pathOf(requestTarget(request));
    if (settings.problemDetails !== undefined) {
      const { baseUrl } = settings.problemDetails;
      this.adapterHost.httpAdapter.setHeader(response, "Content-Type", PROBLEM_JSON_CONTENT_TYPE);
      return buildProblemDetails({
        type: plan?.problemType ??
          (baseUrl === undefined ? undefined : problemTypeUri(baseUrl, resolved.code)),
        status: resolved.statusCode,
        code: resolved.code,
        detail: message,
        instance: path,
        requestId,
        details: resolved.details,
        meta,
      });
    }
    return buildErrorBody({
      statusCode: resolved.statusCode,
      code: resolved.code,
      message,
      details: resolved.details,
      requestId,
      meta,
      timestamp: settings.timestamp ? this.runtime.timestamp() : undefined,
      path: settings.path ? path : undefined,
    });
  }
}
