/**
 * `SafeResponseModule`: the core's `Responder` as a provider, the response
 * interceptor, the global exception filter and, with `requestId`, the
 * request-id middleware; the module's option types.
 *
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
import {
  exchangeOf,
  type RequestLike,
  RESPONDER,
  type ResponseLike,
  setHeaders,
  SETTINGS,
} from "./_http.ts";
import { discoverIntegrations } from "./_integrations.ts";
import { SafeResponseFilter } from "./safe_response.filter.ts";
import { SafeResponseInterceptor } from "./_safe_response.interceptor.ts";

/**
 * What a `version` function receives: Nest's `ExecutionContext` (which
 * fits). For errors thrown before the interceptor (guards, middleware,
 * unknown routes) Nest gives the filter no route, so `getHandler()` and
 * `getClass()` return `null` there.
 * @example
 * ```ts
 * import type { ExecutionContext } from "@nestjs/common";
 * import type { ApiVersionContext } from "@saferoute/api-kit/safe-response/nest";
 * const narrow = (context: ExecutionContext): ApiVersionContext => context;
 * ```
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
 * Options of `SafeResponseModule.register`: the core options, with a
 * `version` function receiving the {@link ApiVersionContext}.
 * @example
 * ```ts
 * import type { SafeResponseModuleOptions } from "@saferoute/api-kit/safe-response/nest";
 * const options: SafeResponseModuleOptions = {
 *   requestId: true,
 *   version: (context) => context.switchToHttp().getRequest().headers["x-api-version"],
 * };
 * ```
 */
export type SafeResponseModuleOptions = CoreOptions<ApiVersionContext>;

/**
 * Options of `SafeResponseModule.registerAsync`.
 * @example
 * ```ts
 * import type { SafeResponseModuleAsyncOptions } from "@saferoute/api-kit/safe-response/nest";
 * const options: SafeResponseModuleAsyncOptions = {
 *   useFactory: async () => ({ requestId: true }),
 * };
 * ```
 */
export interface SafeResponseModuleAsyncOptions {
  /** Produces the options (sync or async) from the injected values. */
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
    provide: RESPONDER,
    useFactory: (settings: SafeResponseSettings, hooks: ResponderHooks) =>
      new Responder(settings, hooks),
    inject: [SETTINGS, HOOKS],
  },
  { provide: APP_INTERCEPTOR, useClass: SafeResponseInterceptor },
  { provide: APP_FILTER, useClass: SafeResponseFilter },
];

/**
 * What the filter and the interceptor inject, visible to the importing module:
 * an app that registers the filter again as its own `APP_FILTER` (the way
 * `SafeExceptionFilter` was used with `@nestarc/safe-response`) still starts.
 */
const EXPORTS = [RESPONDER];

/**
 * Wraps every response of the application: successes in the success
 * envelope, errors in the error envelope or problem-details body. Options are
 * validated when registered (a bad option throws naming it). Implements
 * Nest's `NestModule` (`configure`) to install the request-id middleware.
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
  /** Receives the responder and what module init needs (explicit tokens: no decorator metadata needed). */
  constructor(
    @Inject(RESPONDER) private readonly responder: Responder,
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
   * Registers the module with options from a factory (validated when the
   * factory resolves).
   * @example
   * ```ts
   * import { Module } from "@nestjs/common";
   * import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
   * @Module({
   *   imports: [
   *     SafeResponseModule.registerAsync({
   *       useFactory: async () => ({ problemDetails: { baseUrl: "https://api.example.com/problems" } }),
   *     }),
   *   ],
   * })
   * class AppModule {}
   * ```
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
          useFactory: async (...args: never[]) => resolveSettings(await useFactory(...args)),
          inject: (options.inject ?? []) as FactoryProvider["inject"],
        },
        ...PROVIDERS,
      ],
      exports: EXPORTS,
    };
  }

  /**
   * Finds the optional integrations (nestjs-i18n, nestjs-cls) once.
   *
   * @ignore
   */
  onModuleInit(): void {
    const { hooks, responder } = this;
    discoverIntegrations(this.modules, responder.settings, hooks, hooks.logger!);
  }

  /**
   * Installs the request-id middleware (before guards) when `requestId` is on.
   *
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
    // "*" is every route on Nest 10 (path-to-regexp 0.x/3.x); Nest 11 and 12 convert this
    // one wildcard to "{*path}" silently. "{*path}" itself breaks Nest 10 (middie rejects it).
    consumer.apply(assign).forRoutes({ path: "*", method: RequestMethod.ALL });
  }
}
