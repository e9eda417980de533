/**
 * The Nest applications of the HTTP benchmarks: one route, `GET /items/42`,
 * behind each variant of benchmark 3. Constructor injection is explicit
 * (`@Inject`), so the file also works when bundled without decorator metadata
 * (the Node run, see `bench/node_build.ts`).
 *
 * @module
 */
import "reflect-metadata";
import {
  type CallHandler,
  type CanActivate,
  Controller,
  type DynamicModule,
  Get,
  type INestApplication,
  Injectable,
  Module,
  type NestInterceptor,
  type Provider,
  type Type,
} from "@nestjs/common";
import { APP_GUARD, APP_INTERCEPTOR, NestFactory } from "@nestjs/core";
import { ExpressAdapter } from "@nestjs/platform-express";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import { ThrottlerGuard, ThrottlerModule } from "@nestjs/throttler";
import { ClsModule } from "nestjs-cls";
import { AcceptLanguageResolver, I18nModule } from "nestjs-i18n";
import type { Observable } from "rxjs";
import { fileURLToPath } from "node:url";
import { InMemoryApiKeyStorage } from "../../api_keys/mod.ts";
import { ApiKeysGuard, ApiKeysModule } from "../../api_keys/nest/mod.ts";
import { ResponseMessage, SafeResponseModule } from "../../safe_response/nest/mod.ts";
import type { SafeResponseModuleOptions } from "../../safe_response/mod.ts";

/** HTTP platform of an app. */
export type Platform = "express" | "fastify";

/** The variants of benchmark 3, in table order. */
export const VARIANTS = [
  "bare",
  "noop-interceptor",
  "envelope",
  "floor",
  "envelope-all",
  "noop-guard",
  "noop-guard+interceptor",
  "guard-cached",
  "guard-uncached",
  "guard+envelope",
] as const;

/** One variant of benchmark 3. */
export type Variant = (typeof VARIANTS)[number];

/** Pepper of the benchmark apps (not a secret). */
export const BENCH_PEPPER = "bench-pepper-0123456789abcdefghijklmnopqrstuvwxyz";

/** Whether requests to `variant` carry an API key. */
export const needsKey = (variant: string): boolean => variant.startsWith("guard");

/** The handler result every variant returns. */
export const ITEM = Object.freeze({
  id: 42,
  name: "widget",
  price: 9.5,
  tags: ["blue", "small"],
  createdAt: "2026-01-01T00:00:00.000Z",
});

@Controller("items")
export class ItemsController {
  @Get(":id")
  get(): unknown {
    return ITEM;
  }
}

@Controller("items")
export class MessageItemsController {
  @Get(":id")
  @ResponseMessage("messages.ok")
  get(): unknown {
    return ITEM;
  }
}

/** The floor interceptor: Nest's interceptor machinery and nothing else. */
@Injectable()
export class NoopInterceptor implements NestInterceptor {
  /** Returns the handler's stream untouched. */
  intercept(_context: unknown, next: CallHandler): Observable<unknown> {
    return next.handle();
  }
}

/** The floor guard: Nest's guard machinery and nothing else. */
@Injectable()
export class NoopGuard implements CanActivate {
  /** Lets every request through. */
  canActivate(): boolean {
    return true;
  }
}

const I18N_PATH = fileURLToPath(new URL("./i18n/", import.meta.url));

/** The third-party modules of the floor app: nestjs-cls, nestjs-i18n, throttler (+ its guard). */
function floorModules(): { imports: DynamicModule[]; providers: Provider[] } {
  return {
    imports: [
      ClsModule.forRoot({
        global: true,
        middleware: {
          mount: true,
          setup: (cls, request: { headers: Record<string, string | undefined> }) => {
            cls.set("traceId", request.headers["x-trace-id"] ?? "none");
          },
        },
      }),
      I18nModule.forRoot({
        fallbackLanguage: "en",
        loaderOptions: { path: I18N_PATH, watch: false },
        resolvers: [AcceptLanguageResolver],
      }),
      ThrottlerModule.forRoot([{ ttl: 60_000, limit: 1_000_000_000 }]),
    ],
    providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
  };
}

/** Every success-path option of `SafeResponseModule` on. */
export const ALL_OPTIONS: SafeResponseModuleOptions = {
  timestamp: true,
  path: true,
  requestId: true,
  responseTime: true,
  problemDetails: true,
  context: { fields: { traceId: "traceId" } },
  i18n: true,
  rateLimit: true,
  transformResponse: (data) => data,
  successCodeMapper: (status) => (status < 300 ? "OK" : undefined),
  fieldSelection: true,
  version: "2026-01-01",
};

/** The request target of every HTTP benchmark (`fields` is read only with field selection on). */
export const BENCH_PATH = "/items/42?fields=id,name,price";

/** Options of {@link createBenchApp}. */
export interface BenchAppOptions {
  /** Cache of the API-key service: `false`, or its bound (default 10,000 entries). */
  cache?: false | { maxEntries?: number };
}

function moduleOf(variant: Variant, options: BenchAppOptions): Type<unknown> {
  const imports: DynamicModule[] = [];
  const providers: Provider[] = [];
  let controller: Type<unknown> = ItemsController;
  const apiKeys = (cache: BenchAppOptions["cache"]) =>
    ApiKeysModule.forRoot({
      peppers: { 1: BENCH_PEPPER },
      storage: new InMemoryApiKeyStorage(),
      cache: cache === false ? false : { ttlMs: 60_000, maxEntries: cache?.maxEntries },
    });
  switch (variant) {
    case "bare":
      break;
    case "noop-interceptor":
      providers.push({ provide: APP_INTERCEPTOR, useClass: NoopInterceptor });
      break;
    case "envelope":
      imports.push(SafeResponseModule.register());
      break;
    case "floor": {
      const floor = floorModules();
      imports.push(...floor.imports);
      providers.push(...floor.providers);
      controller = MessageItemsController;
      break;
    }
    case "envelope-all": {
      const floor = floorModules();
      imports.push(...floor.imports, SafeResponseModule.register(ALL_OPTIONS));
      providers.push(...floor.providers);
      controller = MessageItemsController;
      break;
    }
    case "noop-guard":
      providers.push({ provide: APP_GUARD, useClass: NoopGuard });
      break;
    case "noop-guard+interceptor":
      providers.push(
        { provide: APP_GUARD, useClass: NoopGuard },
        { provide: APP_INTERCEPTOR, useClass: NoopInterceptor },
      );
      break;
    case "guard-cached":
    case "guard-uncached":
      imports.push(apiKeys(variant === "guard-uncached" ? false : options.cache));
      providers.push({ provide: APP_GUARD, useExisting: ApiKeysGuard });
      break;
    case "guard+envelope":
      imports.push(apiKeys(options.cache), SafeResponseModule.register());
      providers.push({ provide: APP_GUARD, useExisting: ApiKeysGuard });
      break;
  }
  @Module({ imports, providers, controllers: [controller] })
  class BenchModule {}
  return BenchModule;
}

/** Builds (does not start) the app of `variant` on `platform`, logger off. */
export async function createBenchApp(
  platform: Platform,
  variant: Variant,
  options: BenchAppOptions = {},
): Promise<INestApplication> {
  const adapter = platform === "express" ? new ExpressAdapter() : new FastifyAdapter();
  return await NestFactory.create(moduleOf(variant, options), adapter, { logger: false });
}
