// The consumer app's runtime: routes, modules and every runtime decorator, shared by every app
// under tests/consumers/ (run.ts copies this folder into each app as `shared/`, where the app
// compiles it with its own TypeScript settings and module system). It imports nothing from
// @nestjs/swagger or @saferoute/api-kit/safe-response/openapi, so it runs in the apps without
// swagger; ./openapi.ts (copied only into apps with swagger) documents the same controllers.
// The integrations every app installs (@nestjs/throttler, nestjs-cls, nestjs-i18n) are in the
// root module, as the repository's Nest tests use them (tests/safe_response/nest/
// _integrations_test.ts, the scenarios' throttler); ./i18n/ holds nestjs-i18n's translations.
import "reflect-metadata";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import {
  type CanActivate,
  Controller,
  type DynamicModule,
  type ExecutionContext,
  ForbiddenException,
  Get,
  HttpException,
  type HttpExceptionOptions,
  Injectable,
  Module,
  NotFoundException,
  Param,
  Post,
  Query,
  Res,
  type Type,
  UseGuards,
} from "@nestjs/common";
import { ThrottlerGuard, ThrottlerModule } from "@nestjs/throttler";
import { ClsModule } from "nestjs-cls";
import { AcceptLanguageResolver, I18nModule, QueryResolver } from "nestjs-i18n";
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

/** The version of `name` as installed in the app (its checks run in the app's folder): major, minor. */
export function installedVersion(name: string): [major: number, minor: number] {
  const manifest = join(process.cwd(), "node_modules", name, "package.json");
  const [major, minor] = String(JSON.parse(readFileSync(manifest, "utf8")).version).split(".");
  return [Number(major), Number(minor)];
}

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

  /** Binary data: sent as its bytes, never JSON (on Express too). */
  @Get("bytes")
  bytes() {
    return Buffer.from("raw\u0000bytes");
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

/** Requests a minute on `GET /integrations/throttled`. */
export const THROTTLE_LIMIT = 2;

/** Refuses a request with an `X-Deny` header: a guard error with a translation key. */
@Injectable()
export class DenyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const { headers } = context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>();
    if (headers["x-deny"] !== undefined) throw new ForbiddenException("messages.forbidden");
    return true;
  }
}

/** The routes of the integrations: the throttler, nestjs-cls's store, nestjs-i18n's keys. */
@Controller("integrations")
@UseGuards(DenyGuard)
export class IntegrationsController {
  @Get("plain")
  plain() {
    return { plain: true };
  }

  /** The only throttled route (the throttler's guard is not global). */
  @Get("throttled")
  @UseGuards(ThrottlerGuard)
  throttled() {
    return { ok: true };
  }

  @Get("greeting")
  @ResponseMessage("messages.greeting")
  greeting() {
    return { greeted: true };
  }

  @Get("missing")
  missing() {
    throw new NotFoundException("messages.not_found");
  }

  @Get("page")
  @Paginated()
  page() {
    return { data: [], total: 0, page: 1, limit: 5 };
  }
}

/** The app's controllers (./openapi.ts documents them). */
export const CONTROLLERS = [
  OrdersController,
  LegacyOrdersController,
  OpsController,
  RawController,
  IntegrationsController,
];

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
    // nestjs-cls's store into meta (a field named after a built-in meta field, such as
    // `pagination`, is refused).
    context: {
      fields: { traceId: "traceId" },
      resolver: (store) => ({ tenant: store.tenantId, absent: undefined }),
    },
    i18n: true,
  };
}

/**
 * The throttler of the installed @nestjs/throttler, {@link THROTTLE_LIMIT} requests a minute:
 * 4.x takes one limit with `ttl` in seconds, 5.x and later a list of throttlers with `ttl` in
 * milliseconds (each app compiles against its own release's types, hence the cast).
 */
function throttlerModule(): DynamicModule {
  const options = installedVersion("@nestjs/throttler")[0] < 5
    ? { ttl: 60, limit: THROTTLE_LIMIT }
    : [{ ttl: 60_000, limit: THROTTLE_LIMIT }];
  return ThrottlerModule.forRoot(options as Parameters<typeof ThrottlerModule.forRoot>[0]);
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
      throttlerModule(),
      ClsModule.forRoot({
        global: true,
        middleware: {
          mount: true,
          setup: (cls, request: { headers: Record<string, string | undefined> }) => {
            cls.set("traceId", request.headers["x-trace-id"]);
            cls.set("tenantId", request.headers["x-tenant-id"]);
          },
        },
      }),
      I18nModule.forRoot({
        fallbackLanguage: "en",
        // The translations run.ts copies into the app (./i18n/, beside this file's source).
        loaderOptions: { path: join(process.cwd(), "shared", "i18n"), watch: false },
        resolvers: [new QueryResolver(["lang"]), AcceptLanguageResolver],
      }),
    ],
    controllers: CONTROLLERS,
  })
  class AppModule {}
  return AppModule;
}
