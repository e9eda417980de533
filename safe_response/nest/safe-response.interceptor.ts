/**
 * The response interceptor: wraps handler results in the success envelope.
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
import { map, type Observable } from "rxjs";
import type { ResponseMeta } from "../../client/types.ts";
import { buildSuccessBody } from "../envelope.ts";
import { parseFieldSelection, selectFields } from "../field_selection.ts";
import {
  buildCursorPaginationMeta,
  buildPaginationMeta,
  isCursorPaginatedResult,
  isPaginatedResult,
} from "../pagination.ts";
import { isFilterMap, isSortInfo } from "../sort_filter.ts";
import { elapsedSince, markHandlerPhase } from "./handler-phase.ts";
import {
  pathOf,
  queryValue,
  type RequestLike,
  requestTarget,
  type ResponseLike,
  setResponseHeader,
} from "./http-exchange.ts";
import { assignRequestId } from "./request-id.ts";
import type { RoutePlan } from "./route-plan.ts";
import { SafeResponseRuntime } from "./safe-response.runtime.ts";

type Bag = Record<string, unknown>;

/** Results sent as they are: files, binary data and streams. */
function isPassthrough(data: unknown): boolean {
  if (typeof data !== "object" || data === null) return false;
  return data instanceof StreamableFile || data instanceof Uint8Array ||
    data instanceof ArrayBuffer ||
    data instanceof ReadableStream || typeof (data as Bag).pipe === "function";
}

/**
 * Wraps every HTTP handler result in the success envelope (installed globally
 * by `SafeResponseModule`). Non-HTTP contexts, `RawResponse` routes and
 * `StreamableFile`/`Buffer`/stream results pass through unwrapped.
 *
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 *
 * // The module installs SafeResponseInterceptor as APP_INTERCEPTOR:
 * @Module({ imports: [SafeResponseModule.register()] })
 * class AppModule {}
 * ```
 */
@Injectable()
export class SafeResponseInterceptor implements NestInterceptor {
  constructor(@Inject(SafeResponseRuntime) private readonly runtime: SafeResponseRuntime) {}

  /** Wraps the result of an HTTP handler. */
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== "http") return next.handle();
    const plan = this.runtime.plan(context.getClass(), context.getHandler());
    const http = context.switchToHttp();
    const request = http.getRequest<RequestLike>();
    const response = http.getResponse<ResponseLike>();
    // The start is read only for `meta.responseTime` (0 otherwise: nothing uses it).
    const start = this.runtime.settings.responseTime ? performance.now() : 0;
    const apiVersion = this.runtime.apiVersion(context, request, plan);
    markHandlerPhase(request, { start, plan, apiVersion });
    if (plan.deprecation !== undefined) {
      for (const [name, value] of plan.deprecation.headers) {
        setResponseHeader(response, name, value);
      }
    }
    if (plan.raw) return next.handle();
    return next.handle().pipe(
      map((data) => this.#wrap(plan, request, response, start, apiVersion, data)),
    );
  }

  #wrap(
    plan: RoutePlan,
    request: RequestLike,
    response: ResponseLike,
    start: number,
    apiVersion: string | undefined,
    result: unknown,
  ): unknown {
    if (isPassthrough(result)) return result;
    const { settings } = this.runtime;
    const { transformResponse } = settings;
    const transformed = transformResponse === undefined
      ? result
      : this.runtime.required("option `transformResponse`", () => transformResponse(result));
    let meta: ResponseMeta | undefined;
    let data = transformed;
    let source: Bag | undefined; // where `sort` and `filters` are read
    const target = requestTarget(request);
    if (plan.pagination !== undefined) {
      const { kind, maxLimit, links } = plan.pagination;
      const input = { maxLimit, requestTarget: links ? target : undefined };
      if (kind === "offset" && isPaginatedResult(transformed)) {
        meta = { pagination: buildPaginationMeta(transformed, input) };
      } else if (kind === "cursor" && isCursorPaginatedResult(transformed)) {
        meta = { pagination: buildCursorPaginationMeta(transformed, input) };
      }
      if (meta === undefined) {
        this.#mismatch(
          plan,
          "pagination",
          `a ${kind === "offset" ? "PaginatedResult" : "CursorPaginatedResult"}`,
        );
      } else {
        source = transformed as Bag;
        data = source.data;
        if ((data as unknown[]).length > meta.pagination!.limit) {
          this.runtime.warnOnce(
            plan,
            "maxLimit",
            `${plan.route}: the handler returned more items than the page size ` +
              `(${meta.pagination!.limit}); clamp the query to maxLimit`,
          );
        }
      }
    } else if (plan.sort || plan.filter) {
      if (typeof transformed === "object" && transformed !== null && "data" in transformed) {
        source = transformed as Bag;
        data = source.data;
      }
    }
    if (plan.sort) {
      const expected = "a `sort` field ({ field, order: 'asc' | 'desc' }) next to `data`";
      if (isSortInfo(source?.sort)) (meta ??= {}).sort = source.sort;
      else this.#mismatch(plan, "sort", expected);
    }
    if (plan.filter) {
      if (isFilterMap(source?.filters)) (meta ??= {}).filters = source.filters;
      else this.#mismatch(plan, "filters", "a `filters` object next to `data`");
    }
    if (plan.fieldSelection !== undefined) {
      const { queryParam } = plan.fieldSelection;
      const selection = parseFieldSelection(queryValue(request, queryParam), plan.fieldSelection);
      if (selection !== undefined) {
        data = selectFields(data, selection);
        (meta ??= {}).fields = [...selection.fields];
      }
    }
    if (plan.message !== undefined) {
      (meta ??= {}).message = this.runtime.translate(plan.message, request);
    }
    if (settings.responseTime) (meta ??= {}).responseTime = elapsedSince(start);
    if (plan.deprecation !== undefined) (meta ??= {}).deprecation = plan.deprecation.meta;
    if (apiVersion !== undefined) (meta ??= {}).apiVersion = apiVersion;
    meta = this.runtime.sharedMeta(meta, response) as typeof meta;
    const current = response.statusCode;
    const statusCode = current !== undefined && current !== 200 ? current : plan.statusCode;
    return buildSuccessBody({
      statusCode,
      code: plan.fixedCode || statusCode === plan.statusCode
        ? plan.successCode
        : this.runtime.successCode(statusCode),
      requestId: settings.requestId === undefined
        ? undefined
        : assignRequestId(request, response, settings.requestId),
      data,
      meta,
      timestamp: settings.timestamp ? this.runtime.timestamp() : undefined,
      path: settings.path ? pathOf(target) : undefined,
    });
  }

  #mismatch(plan: RoutePlan, key: string, expected: string): void {
    this.runtime.warnOnce(
      plan,
      key,
      `${plan.route}: decorated for ${key} but returned a result without ${expected}; it is sent as plain data`,
    );
  }
}
