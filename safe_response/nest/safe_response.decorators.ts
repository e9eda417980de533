/**
 * The binding's route vocabulary: the runtime decorators (shared with the
 * OpenAPI composites, in the core's `_route_decorators.ts`) and the parameter
 * decorator `PaginationQuery`, which reads the phase the interceptor records.
 *
 * @module
 */
import { createParamDecorator, type ExecutionContext } from "@nestjs/common";
import { paginationQueryOf } from "../responder.ts";
import { ROUTE_KEYS } from "../_route_metadata.ts";
import { exchangeOf, phaseOf, type RequestLike, type ResponseLike } from "./_http.ts";

export {
  CursorPaginated,
  Deprecated,
  FieldSelection,
  FilterMeta,
  Paginated,
  type PaginatedOptions,
  ProblemType,
  RawResponse,
  ResponseMessage,
  SafeResponse,
  type SafeResponseOptions,
  SkipGlobalErrors,
  SortMeta,
  SuccessCode,
} from "../_route_decorators.ts";

const paginationQueryParameter = createParamDecorator(
  (_data: unknown, context: ExecutionContext) => {
    const http = context.switchToHttp();
    const request = http.getRequest<RequestLike>();
    const phase = phaseOf(request);
    if (phase === undefined) {
      throw new Error(
        "PaginationQuery() needs SafeResponseModule (its interceptor parses the query)",
      );
    }
    return paginationQueryOf(exchangeOf(request, http.getResponse<ResponseLike>()), phase);
  },
);

/**
 * Parameter decorator: the route's pagination query, parsed with its
 * `Paginated` or `CursorPaginated` options (and the module's `defaultLimit`):
 * `{ kind, page, limit }` or `{ kind, cursor, limit }`, `limit` clamped and
 * defaulted. A bad value is a 400 (`INVALID_PAGINATION_QUERY`); a route
 * without pagination answers 500 (logged). The request's own `query` stays as
 * the client sent it (Express 5 makes it read-only).
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import type { CursorPaginationQuery } from "@saferoute/api-kit/safe-response";
 * import { CursorPaginated, PaginationQuery } from "@saferoute/api-kit/safe-response/nest";
 * @Controller("feed")
 * class FeedController {
 *   @Get()
 *   @CursorPaginated({ maxLimit: 50, defaultLimit: 10 })
 *   list(@PaginationQuery() { cursor, limit = 10 }: CursorPaginationQuery) {
 *     const start = cursor === undefined ? 0 : Number.parseInt(cursor, 36) || 0;
 *     return { data: [start], nextCursor: (start + limit).toString(36), hasMore: true, limit };
 *   }
 * }
 * ```
 */
export function PaginationQuery(): ParameterDecorator {
  const parameter = paginationQueryParameter();
  return (target, key, index) => {
    parameter(target, key, index);
    // Marks the handler as parsing its query (a bad one: the 400 the OpenAPI document lists).
    const handler = key === undefined ? undefined : (target as Record<PropertyKey, unknown>)[key];
    if (typeof handler === "function") {
      Reflect.defineMetadata(ROUTE_KEYS.paginationQuery, true, handler);
    }
  };
}
