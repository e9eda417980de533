/**
 * `SafeResponseModule`: installs the response interceptor, the global
 * exception filter and, with `requestId`, the request-id middleware.
 *
 * @module
 */
import {
  type DynamicModule,
  type FactoryProvider,
  Inject,
  type MiddlewareConsumer,
  Module,
  type Provider,
  RequestMethod,
} from "@nestjs/common";
import { APP_FILTER, APP_INTERCEPTOR } from "@nestjs/core";
import { resolveSettings, type SafeResponseSettings } from "../settings.ts";
import { requestIdMiddleware } from "./request-id.ts";
import type {
  SafeResponseModuleAsyncOptions,
  SafeResponseModuleOptions,
} from "./safe-response-options.interface.ts";
import { SAFE_RESPONSE_SETTINGS } from "./safe-response.constants.ts";
import { SafeResponseFilter } from "./safe-response.filter.ts";
import { SafeResponseInterceptor } from "./safe-response.interceptor.ts";
import { SafeResponseRuntime } from "./safe-response.runtime.ts";

const PROVIDERS: Provider[] = [
  SafeResponseRuntime,
  { provide: APP_INTERCEPTOR, useClass: SafeResponseInterceptor },
  { provide: APP_FILTER, useClass: SafeResponseFilter },
];

/**
 * Wraps every response of the application: successes in the success
 * envelope, errors in the error envelope or problem-details body. Options are
 * validated when registered (a bad option throws naming it). Implements
 * Nest's `NestModule` (`configure`) to install the request-id middleware.
 *
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Module({
 *   imports: [SafeResponseModule.register({ requestId: true, responseTime: true })],
 * })
 * class AppModule {}
 * ```
 */
@Module({})
export class SafeResponseModule {
  /** Receives the resolved settings (explicit token: no decorator metadata needed). */
  constructor(@Inject(SAFE_RESPONSE_SETTINGS) private readonly settings: SafeResponseSettings) {}

  /** Registers the module with static options. */
  static register(options: SafeResponseModuleOptions = {}): DynamicModule {
    return {
      module: SafeResponseModule,
      providers: [
        { provide: SAFE_RESPONSE_SETTINGS, useValue: resolveSettings(options) },
        ...PROVIDERS,
      ],
    };
  }

  /**
   * Registers the module with options from a factory (validated when the
   * factory resolves).
   *
   * @example
   * ```ts
   * import { Module } from "@nestjs/common";
   * import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
   *
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
          provide: SAFE_RESPONSE_SETTINGS,
          useFactory: async (...args: never[]) => resolveSettings(await useFactory(...args)),
          inject: (options.inject ?? []) as FactoryProvider["inject"],
        },
        ...PROVIDERS,
      ],
    };
  }

  /**
   * Installs the request-id middleware (before guards) when `requestId` is on.
   *
   * @ignore
   */
  configure(consumer: MiddlewareConsumer): void {
    if (this.settings.requestId === undefined) return;
    consumer.apply(requestIdMiddleware(this.settings.requestId))
      .forRoutes({ path: "{*path}", method: RequestMethod.ALL });
  }
}
