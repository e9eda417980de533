/**
 * `ApiKeysModule`: provides `ApiKeysService` and `ApiKeysGuard` app-wide.
 *
 * @module
 */
import { type DynamicModule, type FactoryProvider, Module, type Provider } from "@nestjs/common";
import { ApiKeysService } from "../service.ts";
import {
  API_KEYS_CLIENT_IP_RESOLVER,
  API_KEYS_CONTEXT_WRITER,
  API_KEYS_MODULE_OPTIONS,
} from "./api-keys.constants.ts";
import { ApiKeysGuard } from "./api-keys.guard.ts";
import type {
  ApiKeyClientIpResolver,
  ApiKeyContextWriter,
  ApiKeysModuleAsyncOptions,
  ApiKeysModuleOptions,
} from "./api-keys-module-options.interface.ts";

/** Validated module options, split into the service and the guard's functions. */
interface ResolvedApiKeysModule {
  service: ApiKeysService;
  contextWriter: ApiKeyContextWriter | null;
  clientIpResolver: ApiKeyClientIpResolver | null;
}

const RESOLVED = Symbol("API_KEYS_RESOLVED_MODULE");

function optionalFunction<T>(value: unknown, name: string): T | null {
  if (value === undefined) return null;
  if (typeof value !== "function") {
    throw new TypeError(`ApiKeysModuleOptions.${name} must be a function`);
  }
  return value as T;
}

/** Validates every option (the service constructor validates its own) once, at startup. */
function resolveModule(options: ApiKeysModuleOptions): ResolvedApiKeysModule {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("ApiKeysModuleOptions must be an object");
  }
  const { contextWriter, clientIpResolver, ...serviceOptions } = options;
  return {
    contextWriter: optionalFunction(contextWriter, "contextWriter"),
    clientIpResolver: optionalFunction(clientIpResolver, "clientIpResolver"),
    service: new ApiKeysService(serviceOptions),
  };
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
      ApiKeysGuard,
    ],
    exports: [
      ApiKeysService,
      ApiKeysGuard,
      API_KEYS_CONTEXT_WRITER,
      API_KEYS_CLIENT_IP_RESOLVER,
    ],
  };
}

/**
 * Global module providing `ApiKeysService` and `ApiKeysGuard`. Import it once
 * (usually in the root module); every option is validated at startup, and a
 * bad one stops the app from booting with a message naming it.
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
   * Configures the module with static options.
   *
   * @example
   * ```ts
   * import { InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
   * import { ApiKeysModule } from "@saferoute/api-kit/api-keys/nest";
   * const module = ApiKeysModule.forRoot({
   *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
   *   storage: new InMemoryApiKeyStorage(),
   * });
   * ```
   */
  static forRoot(options: ApiKeysModuleOptions): DynamicModule {
    return buildModule({ provide: API_KEYS_MODULE_OPTIONS, useValue: options }, []);
  }

  /**
   * Configures the module from a factory, e.g. reading peppers from a config service.
   *
   * @example
   * ```ts
   * import { InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
   * import { ApiKeysModule } from "@saferoute/api-kit/api-keys/nest";
   * const module = ApiKeysModule.forRootAsync({
   *   inject: ["API_KEY_PEPPER"],
   *   useFactory: (pepper: string) => ({
   *     peppers: { 1: pepper },
   *     storage: new InMemoryApiKeyStorage(),
   *   }),
   * });
   * ```
   */
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
