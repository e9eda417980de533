/**
 * `SafeResponseModule`: the core's `Responder` as a provider, the interceptor, the global filter and
 * the request-id middleware.
 * @module
 */
import {
  type DynamicModule,
  type FactoryProvider,
  Inject,
  Logger,
  type MiddlewareConsumer,
  Module,
  type Provider,
  RequestMethod,
} from "@nestjs/common";
import { APP_FILTER, APP_INTERCEPTOR, ModulesContainer } from "@nestjs/core";
import type { SafeResponseModuleOptions as CoreOptions } from "../options.ts";
import { Responder, type ResponderHooks } from "../responder.ts";
import { resolveSettings, type SafeResponseSettings } from "../settings.ts";
import { exchangeOf, type RequestLike, type ResponseLike, setHeaders, SETTINGS } from "./_http.ts";
import { discoverIntegrations } from "./_integrations.ts";
import { SafeResponseFilter } from "./safe_response.filter.ts";
import { SafeResponseInterceptor } from "./_safe_response.interceptor.ts";

/**
 * What a `version` function receives: Nest's `ExecutionContext`; `getHandler()` and `getClass()`
 * are `null` for errors thrown before the interceptor.
 */
export interface ApiVersionContext {
  /** HTTP view of the call: the Express or Fastify request and response. */
  // deno-lint-ignore no-explicit-any
  switchToHttp(): { getRequest(): any; getResponse(): any };
  /** The route handler (`null` before the interceptor). */
  // deno-lint-ignore ban-types
  getHandler(): Function | null;
  /** The controller class (`null` before the interceptor). */
  // deno-lint-ignore ban-types
  getClass(): Function | null;
}

/**
 * Options of `SafeResponseModule.register`, with a `version` function receiving the
 * {@link ApiVersionContext}.
 */
export type SafeResponseModuleOptions = CoreOptions<ApiVersionContext>;

/** Options of `SafeResponseModule.registerAsync`. */
export interface SafeResponseModuleAsyncOptions {
  /** Produces the options object (sync or async) from the injected values; else startup fails. */
  useFactory: (
    ...args: never[]
  ) => SafeResponseModuleOptions | Promise<SafeResponseModuleOptions>;
  /** Tokens of the providers passed to `useFactory`. */
  inject?: unknown[];
  /** Modules (classes or dynamic modules) exporting the injected providers. */
  imports?: unknown[];
}

/** Injection token of the responder's integrations, filled at module init. */
const HOOKS = Symbol("safe-response:hooks");

const PROVIDERS: Provider[] = [
  { provide: HOOKS, useFactory: (): ResponderHooks => ({ logger: new Logger("SafeResponse") }) },
  {
    provide: Responder,
    useFactory: (settings: SafeResponseSettings, hooks: ResponderHooks) =>
      new Responder(settings, hooks),
    inject: [SETTINGS, HOOKS],
  },
  { provide: APP_INTERCEPTOR, useClass: SafeResponseInterceptor },
  { provide: APP_FILTER, useClass: SafeResponseFilter },
];

/**
 * Exported by its class: an importing module injects the `Responder` that replies (to hand it to
 * `./telemetry`), and an app that registers the filter again as its own `APP_FILTER` still starts.
 */
const EXPORTS = [Responder];

/**
 * Wraps every response of the application in the success or error envelope (or problem details).
 * A bad option throws when registered, naming it.
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 * @Module({ imports: [SafeResponseModule.register({ requestId: true, responseTime: true })] })
 * class AppModule {}
 * ```
 */
@Module({})
export class SafeResponseModule {
  /** Receives the responder and what module init needs. */
  constructor(
    @Inject(Responder) private readonly responder: Responder,
    @Inject(HOOKS) private readonly hooks: ResponderHooks,
    @Inject(ModulesContainer) private readonly modules: ModulesContainer,
  ) {}

  /** Registers the module with static options. */
  static register(options: SafeResponseModuleOptions = {}): DynamicModule {
    return {
      module: SafeResponseModule,
      providers: [{ provide: SETTINGS, useValue: resolveSettings(options) }, ...PROVIDERS],
      exports: EXPORTS,
    };
  }

  /**
   * Registers the module with options from a factory, validated when it resolves: a result that is
   * not an object (`undefined` too) is a `TypeError`.
   */
  static registerAsync(options: SafeResponseModuleAsyncOptions): DynamicModule {
    if (typeof options?.useFactory !== "function") {
      throw new TypeError("SafeResponseModule.registerAsync: `useFactory` must be a function");
    }
    const { useFactory } = options;
    return {
      module: SafeResponseModule,
      imports: (options.imports ?? []) as DynamicModule["imports"],
      providers: [
        {
          provide: SETTINGS,
          // `?? null`: undefined (a factory without `return`) is refused, not read as no options.
          useFactory: async (...args: never[]) =>
            resolveSettings((await useFactory(...args)) ?? (null as never)),
          inject: (options.inject ?? []) as FactoryProvider["inject"],
        },
        ...PROVIDERS,
      ],
      exports: EXPORTS,
    };
  }

  /**
   * Finds the optional integrations (nestjs-i18n, nestjs-cls) once.
   * @ignore
   */
  onModuleInit(): void {
    const { hooks, responder } = this;
    discoverIntegrations(this.modules, responder.settings, hooks, hooks.logger!);
  }

  /**
   * Installs the request-id middleware (before guards) when `requestId` is on.
   * @ignore
   */
  configure(consumer: MiddlewareConsumer): void {
    if (this.responder.settings.requestId === undefined) return;
    const { responder } = this;
    const assign = (request: RequestLike, response: ResponseLike, next: () => void) => {
      const header = responder.requestId(exchangeOf(request, response))?.header;
      if (header !== undefined) setHeaders(response, [header]);
      next();
    };
    // "*": every route on Nest 10-12 ("{*path}" breaks Nest 10).
    consumer.apply(assign).forRoutes({ path: "*", method: RequestMethod.ALL });
  }
}
