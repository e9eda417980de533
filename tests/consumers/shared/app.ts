// The consumer app's runtime: routes, modules and every runtime decorator, shared by every app
// under tests/consumers/ (run.ts copies this folder into each app as `shared/`, where the app
// compiles it with its own TypeScript settings and module system). It imports nothing from
// @nestjs/swagger or @saferoute/api-kit/safe-response/openapi, so it runs in the apps without
// swagger; ./openapi.ts (copied only into apps with swagger) documents the same controllers.
import "reflect-metadata";
import {
  Controller,
  Get,
  HttpException,
  type HttpExceptionOptions,
  Module,
  NotFoundException,
  Param,
  Post,
  Query,
  Res,
  type Type,
  UseGuards,
} from "@nestjs/common";
import { type ApiKeyContext, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
import {
  ApiKeysGuard,
  ApiKeysModule,
  CurrentApiKey,
  RequireEnvironment,
  RequireScope,
} from "@saferoute/api-kit/api-keys/nest";
import {
  type CursorPaginationQuery,
  defineErrors,
  type OffsetPaginationQuery,
} from "@saferoute/api-kit/safe-response";
import {
  CursorPaginated,
  Deprecated,
  FieldSelection,
  FilterMeta,
  Paginated,
  PaginationQuery,
  ProblemType,
  RawResponse,
  ResponseMessage,
  SafeException,
  SafeResponse,
  SafeResponseModule,
  type SafeResponseModuleOptions,
  SkipGlobalErrors,
  SortMeta,
  SuccessCode,
} from "@saferoute/api-kit/safe-response/nest";

/** A clock the checks can move forward, to expire a key without waiting. */
export const clock = {
  offsetMs: 0,
  now: (): Date => new Date(Date.now() + clock.offsetMs),
};

/** The problem type of an unknown order. */
export const ORDER_NOT_FOUND = "https://consumer.example/problems/order-not-found";

/** The base of derived problem types. */
export const PROBLEM_BASE = "https://consumer.example/problems";

/** The app's error catalog. */
export const Errors = defineErrors({
  ORDER_LOCKED: {
    status: 409,
    message: "The order is locked",
    description: "The order is being shipped and cannot change",
    details: { reason: "shipping" },
  },
});

/** The deprecation of the v1 routes. */
export const V1_DEPRECATION = {
  since: "2025-01-01T00:00:00.000Z",
  sunset: "2030-01-01T00:00:00.000Z",
  message: "Use /orders",
  link: "https://consumer.example/migrate",
};

/** An order as the routes return it. */
export interface Order {
  id: number;
  status: "open" | "shipped";
  customer: { name: string; city: string };
}

/** Orders 1-5: odd ones open, even ones shipped. */
export const ORDERS: readonly Order[] = Array.from({ length: 5 }, (_, i) => ({
  id: i + 1,
  status: i % 2 === 0 ? "open" : "shipped",
  customer: { name: `customer ${i + 1}`, city: i % 2 === 0 ? "Lyon" : "Oslo" },
}));

/** A response's header setter on both platforms (Express and Fastify both have `header`). */
interface HeaderSink {
  header(name: string, value: string): unknown;
  getHeader(name: string): unknown;
}

@UseGuards(ApiKeysGuard)
@Controller("orders")
export class OrdersController {
  @Get()
  @RequireScope("orders", "read")
  @Paginated({ maxLimit: 3, defaultLimit: 2, links: true })
  @SortMeta()
  @FilterMeta()
  list(
    @PaginationQuery() { page, limit = 2 }: OffsetPaginationQuery,
    @Query("status") status?: string,
  ) {
    const matching = ORDERS.filter((order) => status === undefined || order.status === status);
    return {
      data: matching.slice((page - 1) * limit, page * limit),
      total: matching.length,
      page,
      limit,
      sort: { field: "id", order: "asc" as const },
      filters: status === undefined ? {} : { status },
    };
  }

  @Post()
  @RequireScope("orders", "write")
  @ResponseMessage("Order created")
  @SuccessCode("ORDER_CREATED")
  create() {
    return { id: ORDERS.length + 1 };
  }

  @Get("feed")
  @RequireScope("orders", "read")
  @CursorPaginated({ maxLimit: 3, defaultLimit: 2, links: true })
  feed(@PaginationQuery() { cursor, limit = 2 }: CursorPaginationQuery) {
    const start = cursor === undefined ? 0 : Number(cursor);
    const data = ORDERS.slice(start, start + limit);
    const end = start + data.length;
    return {
      data,
      nextCursor: end < ORDERS.length ? String(end) : null,
      hasMore: end < ORDERS.length,
      limit,
    };
  }

  @Get("live")
  @RequireEnvironment("live")
  @RequireScope("orders", "read")
  live() {
    return { live: true };
  }

  @Get("me")
  @RequireScope("orders", "read")
  me(@CurrentApiKey() key: ApiKeyContext) {
    return { keyId: key.keyId, tenantId: key.tenantId, environment: key.environment };
  }

  @Get(":id")
  @RequireScope("orders", "read")
  @ProblemType(ORDER_NOT_FOUND)
  @FieldSelection()
  one(@Param("id") id: string) {
    const order = ORDERS.find((o) => String(o.id) === id);
    if (order === undefined) throw new NotFoundException(`order ${id} does not exist`);
    return order;
  }

  @Post(":id/cancel")
  @RequireScope("orders", "write")
  cancel(@Param("id") id: string) {
    // The Nest entry's exception, resolved by the module's catalog.
    throw new SafeException("ORDER_LOCKED", { details: { id: Number(id) } });
  }

  @Post(":id/refund")
  @RequireScope("orders", "write")
  refund() {
    // The core's exception, carrying its catalog, with a per-throw message.
    throw Errors.exception("ORDER_LOCKED", { message: "Refunds wait for delivery" });
  }
}

@Controller("v1/orders")
@Deprecated(V1_DEPRECATION)
export class LegacyOrdersController {
  @Get()
  list() {
    return ORDERS.map(({ id }) => ({ id }));
  }

  @Get(":id")
  one(@Param("id") id: string) {
    throw new NotFoundException(`order ${id} does not exist`);
  }
}

@Controller()
export class OpsController {
  /** Raw: sent as it is. */
  @Get("health")
  @RawResponse()
  @SkipGlobalErrors()
  health() {
    return "ok";
  }

  /** The request id the handler sees on the response (set by the module's middleware). */
  @Get("request-id")
  requestId(@Res({ passthrough: true }) response: HeaderSink) {
    return { seen: response.getHeader("x-request-id") ?? null };
  }

  /** Sets rate-limit headers, as a throttler would, then answers. */
  @Get("limited")
  limited(@Res({ passthrough: true }) response: HeaderSink) {
    response.header("X-RateLimit-Limit", "10");
    response.header("X-RateLimit-Remaining", "9");
    response.header("X-RateLimit-Reset", "30");
    return { ok: true };
  }

  /** Sets the headers of an exhausted limit and refuses. */
  @Get("limited/exceeded")
  exceeded(@Res({ passthrough: true }) response: HeaderSink) {
    response.header("X-RateLimit-Limit", "10");
    response.header("X-RateLimit-Remaining", "0");
    response.header("X-RateLimit-Reset", "30");
    response.header("Retry-After", "30");
    throw new HttpException("Too many requests", 429);
  }

  /**
   * Throws with Nest 12's `errorCode` option, which Nest 10 and 11 do not know (they ignore it;
   * the variable keeps their `HttpExceptionOptions` type check from refusing the field).
   */
  @Get("coded")
  coded() {
    const options: HttpExceptionOptions & { errorCode: string } = { errorCode: "EMAIL_TAKEN" };
    throw new HttpException("Email in use", 409, options);
  }
}

/** Every route of a class-level `RawResponse()`, except where `SafeResponse` wraps again. */
@Controller("raw")
@RawResponse()
export class RawController {
  @Get()
  plain() {
    return { plain: true };
  }

  @Post("jobs")
  @SafeResponse({ statusCode: 202, description: "Accepted" })
  enqueue() {
    return { queued: true };
  }
}

/** The app's controllers (./openapi.ts documents them). */
export const CONTROLLERS = [OrdersController, LegacyOrdersController, OpsController, RawController];

/** The error formats: RFC 9457 problem details, or the error envelope. */
export type ErrorFormat = "problem" | "envelope";

/** The safe-response options of an app sending errors in `format`. */
export function safeResponseOptions(format: ErrorFormat): SafeResponseModuleOptions {
  return {
    ...(format === "problem" ? { problemDetails: { baseUrl: PROBLEM_BASE } } : {}),
    requestId: true,
    rateLimit: true,
    errorCatalog: Errors,
    swagger: { globalErrors: [401, 403, 500] },
  };
}

/** The root module of an app sending errors in `format`. */
export function appModule(format: ErrorFormat): Type<unknown> {
  @Module({
    imports: [
      ApiKeysModule.forRoot({
        peppers: { 1: "consumer-app-pepper-0123456789abcdef" },
        storage: new InMemoryApiKeyStorage(),
        ttlPolicy: { allowNeverExpires: true },
        clock: clock.now,
      }),
      SafeResponseModule.register(safeResponseOptions(format)),
    ],
    controllers: CONTROLLERS,
  })
  class AppModule {}
  return AppModule;
}
