/**
 * `ApiKeysModule`, which provides `ApiKeysService` and `ApiKeysGuard` app-wide,
 * and its options (the service's plus the guard's pluggable functions).
 *
 * @module
 */
import {
  type DynamicModule,
  type FactoryProvider,
  Inject,
  Logger,
  Module,
  type Provider,
} from "@nestjs/common";
import { ApplicationConfig, HttpAdapterHost, ModulesContainer } from "@nestjs/core";
import { thresholdsProblem } from "../_input.ts";
import { failureLine, logLine } from "../_sinks.ts";
import { serviceRedact } from "../_service_hooks.ts";
import { ApiKeysService } from "../service.ts";
import type { ApiKeysServiceOptions } from "../service_options.ts";
import type { ApiKeyChangeFeed } from "../change_feed.ts";
import { assertKnownFields } from "../../telemetry/_known_fields.ts";
import { SERVICE_OPTIONS } from "../_settings.ts";
import { MAX_TIMER_MS } from "../../telemetry/_timer.ts";
import type { ApiKeyStorage } from "../storage/types.ts";
import {
  API_KEYS_CLIENT_IP_RESOLVER,
  API_KEYS_CONTEXT_WRITER,
  API_KEYS_MODULE_OPTIONS,
  type ApiKeyClientIpResolver,
  type ApiKeyContextWriter,
} from "./api_keys.constants.ts";
import { ApiKeysGuard, ApiKeysThrottlerTracker } from "./api_keys.guard.ts";
import { unguardedRoutes, unguardedRoutesLine } from "./_route_requirements.ts";

/**
 * Runs `ApiKeysService.notifyExpiring` on an interval (option `expiryNotices`
 * of `ApiKeysModule`).
 */
export interface ApiKeyExpiryNoticesOptions {
  /** The thresholds of `notifyExpiring`, in ms. */
  thresholdsMs: number[];
  /** Time between two runs, in ms (at most 2147483647); the first runs when the app starts. */
  intervalMs: number;
}

/**
 * Options of `ApiKeysModule.forRoot`: the `ApiKeysService` options plus the guard's
 * context writer and client-IP resolver, and the expiry-notice interval.
 */
export interface ApiKeysModuleOptions extends ApiKeysServiceOptions {
  /** Where the guard puts the verified context (default: `request.apiKey`). */
  contextWriter?: ApiKeyContextWriter;
  /** How the guard finds the client IP (default: `defaultApiKeyClientIpResolver`). */
  clientIpResolver?: ApiKeyClientIpResolver;
  /** With a `limiter`: the guard also writes `X-RateLimit-*` (the policy with the least remaining; on a 429 the refusing one with the longest wait). */
  xRateLimitHeaders?: boolean;
  /**
   * Runs `notifyExpiring` on an interval while the app runs (cleared when it
   * closes; a run still going is awaited). The storage needs the capabilities
   * `listExpiring` and `claimExpiryNotice`. A failed run is logged (the first
   * of a streak), and the next one retries. Several instances may run it at
   * once: each notice is still emitted once.
   */
  expiryNotices?: ApiKeyExpiryNoticesOptions;
}

/**
 * Options of `ApiKeysModule.forRootAsync`: a factory of `ApiKeysModuleOptions` with
 * its injected dependencies and the modules that provide them.
 */
export interface ApiKeysModuleAsyncOptions {
  /** Modules (classes or dynamic modules) exporting the providers listed in `inject`. */
  imports?: unknown[];
  /**
   * Injection tokens (classes, strings, symbols) whose instances `useFactory` receives, in order;
   * none request-scoped (the start is refused: the service would be one per request).
   */
  inject?: unknown[];
  /** Builds the options (sync or async). */
  // deno-lint-ignore no-explicit-any
  useFactory: (...args: any[]) => ApiKeysModuleOptions | Promise<ApiKeysModuleOptions>;
}

/**
 * The interval of the `expiryNotices` option: one run at a time; a closing
 * app clears it and awaits the run in flight.
 */
class ExpiryNoticeTimer {
  readonly #service: ApiKeysService;
  readonly #options: ApiKeyExpiryNoticesOptions;
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<void> | undefined;
  #failing = false;

  constructor(service: ApiKeysService, options: ApiKeyExpiryNoticesOptions) {
    this.#service = service;
    this.#options = options;
  }

  /** Nest hook: the first run, then one every `intervalMs`. */
  onApplicationBootstrap(): void {
    this.#run();
    this.#timer = setInterval(() => this.#run(), this.#options.intervalMs);
  }

  /** Nest hook: no more runs; resolves once the run in flight is over. */
  onModuleDestroy(): Promise<void> | undefined {
    clearInterval(this.#timer);
    this.#timer = undefined;
    return this.#running;
  }

  #run(): void {
    if (this.#running !== undefined) return;
    this.#running = this.#service.notifyExpiring({ thresholdsMs: this.#options.thresholdsMs })
      .then(() => {
        this.#failing = false;
      }, (error) => {
        if (!this.#failing) {
          const line = failureLine("expiryNotices", error, serviceRedact(this.#service));
          logLine((text) => console.warn(text), line);
        }
        this.#failing = true;
      })
      .finally(() => {
        this.#running = undefined;
      });
  }
}

/** Validated module options, split into the service, the guard's functions and the timer. */
interface ResolvedApiKeysModule {
  service: ApiKeysService;
  /** The `feed` option, which the module closes (after the service) when the app closes. */
  feed: ApiKeyChangeFeed | null;
  contextWriter: ApiKeyContextWriter | null;
  clientIpResolver: ApiKeyClientIpResolver | null;
  expiryNoticeTimer: ExpiryNoticeTimer | null;
}

const RESOLVED = Symbol("API_KEYS_RESOLVED_MODULE");
const EXPIRY_NOTICE_TIMER = Symbol("API_KEYS_EXPIRY_NOTICE_TIMER");
const SINGLETON_CHECK = Symbol("API_KEYS_SINGLETON_CHECK");

/**
 * Refuses the start when the service is not a singleton: a request-scoped provider in the
 * `inject` of `forRootAsync` makes it one per request, whose module hooks Nest skips (no
 * `ready()`, no `close()`: usage counts lost). Checked at module init, once every provider's
 * dependencies are known, on the service of this import (found through the check itself: an app
 * may import the module more than once).
 */
function singletonCheck(modules: ModulesContainer): { onModuleInit(): void } {
  const check = {
    onModuleInit() {
      const own = apiKeysModules(modules).find((entry) =>
        entry.providers.get(SINGLETON_CHECK)?.instance === check
      );
      if (own?.providers.get(ApiKeysService)?.isDependencyTreeStatic() === false) {
        throw new TypeError(
          "ApiKeysModule.forRootAsync: `inject` must not include request-scoped providers",
        );
      }
    },
  };
  return check;
}

function optionalFunction<T>(value: unknown, name: string): T | null {
  if (value === undefined) return null;
  if (typeof value !== "function") {
    throw new TypeError(`ApiKeysModuleOptions.${name} must be a function`);
  }
  return value as T;
}

/** The options of the module beside the service's (`SERVICE_OPTIONS`, read at `forRoot`: required on first use). */
const MODULE_OPTIONS: readonly string[] = Object.keys(
  {
    contextWriter: true,
    clientIpResolver: true,
    xRateLimitHeaders: true,
    expiryNotices: true,
  } satisfies Record<Exclude<keyof ApiKeysModuleOptions, keyof ApiKeysServiceOptions>, true>,
);

/** Validates every option (the service constructor validates its own) once, at startup. */
function resolveModule(options: ApiKeysModuleOptions): ResolvedApiKeysModule {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("ApiKeysModuleOptions must be an object");
  }
  assertKnownFields(
    options,
    [...SERVICE_OPTIONS, ...MODULE_OPTIONS],
    "ApiKeysModuleOptions",
    "option",
  );
  const { contextWriter, clientIpResolver, expiryNotices, xRateLimitHeaders, ...serviceOptions } =
    options;
  if (xRateLimitHeaders !== undefined && typeof xRateLimitHeaders !== "boolean") {
    throw new TypeError("ApiKeysModuleOptions.xRateLimitHeaders must be a boolean");
  }
  const service = new ApiKeysService(serviceOptions);
  return {
    contextWriter: optionalFunction(contextWriter, "contextWriter"),
    clientIpResolver: optionalFunction(clientIpResolver, "clientIpResolver"),
    service,
    feed: serviceOptions.feed ?? null,
    expiryNoticeTimer: expiryNotices === undefined
      ? null
      : new ExpiryNoticeTimer(service, validExpiryNotices(expiryNotices, serviceOptions.storage)),
  };
}

/** The `expiryNotices` option, checked (a `TypeError` naming what is wrong). */
function validExpiryNotices(value: unknown, storage: ApiKeyStorage): ApiKeyExpiryNoticesOptions {
  const label = "ApiKeysModuleOptions.expiryNotices";
  if (typeof value !== "object" || value === null) {
    throw new TypeError(`${label} must be { thresholdsMs, intervalMs }`);
  }
  const { thresholdsMs, intervalMs } = value as ApiKeyExpiryNoticesOptions;
  const problem = thresholdsProblem(thresholdsMs);
  if (problem !== undefined) throw new TypeError(`${label}.thresholdsMs ${problem}`);
  if (!Number.isSafeInteger(intervalMs) || intervalMs <= 0 || intervalMs > MAX_TIMER_MS) {
    throw new TypeError(
      `${label}.intervalMs must be a whole number of ms from 1 to ${MAX_TIMER_MS}`,
    );
  }
  if (
    typeof storage.listExpiring !== "function" || typeof storage.claimExpiryNotice !== "function"
  ) {
    throw new TypeError(
      `${label} needs a storage with the capabilities listExpiring and claimExpiryNotice`,
    );
  }
  return { thresholdsMs: [...thresholdsMs], intervalMs };
}

function buildModule(optionsProvider: Provider, imports: DynamicModule["imports"]): DynamicModule {
  return {
    module: ApiKeysModule,
    global: true,
    imports,
    providers: [
      optionsProvider,
      { provide: RESOLVED, useFactory: resolveModule, inject: [API_KEYS_MODULE_OPTIONS] },
      {
        provide: ApiKeysService,
        useFactory: (resolved: ResolvedApiKeysModule) => resolved.service,
        inject: [RESOLVED],
      },
      {
        provide: API_KEYS_CONTEXT_WRITER,
        useFactory: (resolved: ResolvedApiKeysModule) => resolved.contextWriter,
        inject: [RESOLVED],
      },
      {
        provide: API_KEYS_CLIENT_IP_RESOLVER,
        useFactory: (resolved: ResolvedApiKeysModule) => resolved.clientIpResolver,
        inject: [RESOLVED],
      },
      {
        provide: EXPIRY_NOTICE_TIMER,
        useFactory: (resolved: ResolvedApiKeysModule) => resolved.expiryNoticeTimer,
        inject: [RESOLVED],
      },
      { provide: SINGLETON_CHECK, useFactory: singletonCheck, inject: [ModulesContainer] },
      ApiKeysGuard,
      ApiKeysThrottlerTracker,
    ],
    exports: [
      ApiKeysService,
      ApiKeysGuard,
      ApiKeysThrottlerTracker,
      API_KEYS_CONTEXT_WRITER,
      API_KEYS_CLIENT_IP_RESOLVER,
      API_KEYS_MODULE_OPTIONS, // for the deprecated API_KEYS_OPTIONS alias
    ],
  };
}

/** The app's instances of `ApiKeysModule` (one per import), in the order Nest met them. */
function apiKeysModules(modules: ModulesContainer) {
  return [...modules.values()].filter((entry) => entry.metatype === ApiKeysModule);
}

/** Logs one of the module's start-up warnings (Nest's `Logger`, context `ApiKeysModule`). */
function warn(line: string): void {
  new Logger("ApiKeysModule").warn(line);
}

/**
 * Logs one warning (from the app's second instance of the module) when the app holds several:
 * each import builds its own service, so they share no cache, counts or timers.
 */
function warnIfImportedAgain(module: ApiKeysModule, modules: ModulesContainer): void {
  const instances = apiKeysModules(modules);
  if (instances.length < 2 || instances[1].instance !== (module as object)) return;
  warn(
    `ApiKeysModule is imported ${instances.length} times in this app: each import has its own ` +
      "ApiKeysService (its own verification cache, usage counts, credit balances and expiry " +
      "notices), so a key revoked through one is still accepted by another's guard until its " +
      "cache entry expires; import it once, in the root module (it is global)",
  );
}

/**
 * Global module providing `ApiKeysService` and `ApiKeysGuard`; import it once (an app importing
 * it again logs a warning: each import has its own service). At start-up it also warns, naming
 * them, about routes with `RequireScope`, `RequireEnvironment` or `RateLimit` that no
 * `ApiKeysGuard` (`APP_GUARD`, `@UseGuards`, `app.useGlobalGuards`) protects.
 * A bad option stops the boot with a message naming it, and so does a
 * refusal of `service.ready()` at module init. Shutdown awaits `service.close()`,
 * then closes the `feed` of the options (the module owns it).
 *
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { ApiKeysModule } from "@saferoute/api-kit/api-keys/nest";
 *
 * @Module({
 *   imports: [
 *     ApiKeysModule.forRoot({
 *       peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *       storage: new InMemoryApiKeyStorage(),
 *     }),
 *   ],
 * })
 * class AppModule {}
 * ```
 */
@Module({})
export class ApiKeysModule {
  /**
   * Receives the resolved options, the app's modules, its configuration (global guards) and its
   * HTTP adapter (explicit tokens: no decorator metadata needed).
   */
  constructor(
    @Inject(RESOLVED) private readonly resolved: ResolvedApiKeysModule,
    @Inject(ModulesContainer) private readonly modules: ModulesContainer,
    @Inject(ApplicationConfig) private readonly config: ApplicationConfig,
    @Inject(HttpAdapterHost) private readonly http: HttpAdapterHost,
  ) {}

  /**
   * Warns once when the app imports the module more than once, then awaits
   * `service.ready()` (the retirement check, the limiter's `ready()`), so a
   * refusal stops the boot.
   *
   * @ignore
   */
  onModuleInit(): Promise<void> {
    warnIfImportedAgain(this, this.modules);
    return this.resolved.service.ready();
  }

  /**
   * Warns once (from the app's first instance of the module) when routes with `RequireScope`,
   * `RequireEnvironment` or `RateLimit` have no `ApiKeysGuard`, naming them; throws a
   * `TypeError` naming a route whose controller's and method's `RateLimit` clash (a cost under
   * `RateLimit(false)`), which the guard would refuse at every request. At bootstrap every
   * global guard is known: `APP_GUARD` providers join them when the app is created, and
   * `app.useGlobalGuards` runs before `init()`/`listen()`, which run this hook (the routes take
   * the global guards when registered, just before). An app without HTTP serves no route.
   *
   * @ignore
   */
  onApplicationBootstrap(): void {
    if (!this.http.httpAdapter) return;
    if (apiKeysModules(this.modules)[0]?.instance !== (this as object)) return;
    const routes = unguardedRoutes(this.modules, this.config, ApiKeysGuard);
    if (routes.length > 0) warn(unguardedRoutesLine(routes));
  }

  /**
   * Flushes the usage counts and writes back the credit balances held in
   * memory (`service.close()`) once the app stopped serving, then closes the
   * `feed` of the options (even when `close()` failed).
   *
   * @ignore
   */
  async onApplicationShutdown(): Promise<void> {
    try {
      await this.resolved.service.close();
    } finally {
      await this.resolved.feed?.close();
    }
  }

  /** Configures the module with static options. */
  static forRoot(options: ApiKeysModuleOptions): DynamicModule {
    return buildModule({ provide: API_KEYS_MODULE_OPTIONS, useValue: options }, []);
  }

  /** Configures the module from a factory, e.g. reading peppers from a config service. */
  static forRootAsync(options: ApiKeysModuleAsyncOptions): DynamicModule {
    if (typeof options?.useFactory !== "function") {
      throw new TypeError("ApiKeysModuleAsyncOptions.useFactory must be a function");
    }
    return buildModule(
      {
        provide: API_KEYS_MODULE_OPTIONS,
        useFactory: options.useFactory,
        inject: (options.inject ?? []) as FactoryProvider["inject"],
      },
      (options.imports ?? []) as DynamicModule["imports"],
    );
  }
}
