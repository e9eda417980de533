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
  Module,
  type Provider,
} from "@nestjs/common";
import { ApiKeysService } from "../service.ts";
import type { ApiKeysServiceOptions } from "../service_options.ts";
import type { ApiKeyContext } from "../types.ts";
import {
  API_KEYS_CLIENT_IP_RESOLVER,
  API_KEYS_CONTEXT_WRITER,
  API_KEYS_MODULE_OPTIONS,
} from "./api_keys.constants.ts";
import { ApiKeysGuard } from "./api_keys.guard.ts";

/**
 * Puts the verified context where handlers expect it. Default: `request.apiKey = context`.
 * `CurrentApiKey` and `getApiKeyContext` work whatever the writer does.
 *
 * @example
 * ```ts
 * import type { ApiKeyContextWriter } from "@saferoute/api-kit/api-keys/nest";
 * const writer: ApiKeyContextWriter = (context, request) => {
 *   request.auth = { tenantId: context.tenantId, apiKey: context };
 * };
 * ```
 */
// deno-lint-ignore no-explicit-any
export type ApiKeyContextWriter = (context: ApiKeyContext, request: any) => void | Promise<void>;

/**
 * Returns the client address of a request (Express or Fastify), or `undefined`
 * when unknown; a key with an IP allowlist is then refused (fail closed).
 *
 * @example
 * ```ts
 * import type { ApiKeyClientIpResolver } from "@saferoute/api-kit/api-keys/nest";
 * const resolver: ApiKeyClientIpResolver = (request) => request.headers["cf-connecting-ip"];
 * ```
 */
export type ApiKeyClientIpResolver = (
  // deno-lint-ignore no-explicit-any
  request: any,
) => string | undefined | Promise<string | undefined>;

/**
 * Options of `ApiKeysModule.forRoot`: the `ApiKeysService` options plus the guard's
 * context writer and client-IP resolver.
 *
 * @example
 * ```ts
 * import { InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import type { ApiKeysModuleOptions } from "@saferoute/api-kit/api-keys/nest";
 * const options: ApiKeysModuleOptions = {
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * };
 * ```
 */
export interface ApiKeysModuleOptions extends ApiKeysServiceOptions {
  /** Where the guard puts the verified context (default: `request.apiKey`). */
  contextWriter?: ApiKeyContextWriter;
  /** How the guard finds the client IP (default: `defaultApiKeyClientIpResolver`). */
  clientIpResolver?: ApiKeyClientIpResolver;
}

/**
 * Options of `ApiKeysModule.forRootAsync`: a factory of `ApiKeysModuleOptions` with
 * its injected dependencies and the modules that provide them.
 *
 * @example
 * ```ts
 * import { InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import type { ApiKeysModuleAsyncOptions } from "@saferoute/api-kit/api-keys/nest";
 * const options: ApiKeysModuleAsyncOptions = {
 *   inject: ["PEPPER"],
 *   useFactory: (pepper: string) => ({ peppers: { 1: pepper }, storage: new InMemoryApiKeyStorage() }),
 * };
 * ```
 */
export interface ApiKeysModuleAsyncOptions {
  /** Modules (classes or dynamic modules) exporting the providers listed in `inject`. */
  imports?: unknown[];
  /** Injection tokens (classes, strings, symbols) whose instances `useFactory` receives, in order. */
  inject?: unknown[];
  /** Builds the options (sync or async). */
  // deno-lint-ignore no-explicit-any
  useFactory: (...args: any[]) => ApiKeysModuleOptions | Promise<ApiKeysModuleOptions>;
}

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
      API_KEYS_MODULE_OPTIONS, // for the deprecated API_KEYS_OPTIONS alias
    ],
  };
}

/**
 * Global module providing `ApiKeysService` and `ApiKeysGuard`. Import it once
 * (usually in the root module); every option is validated at startup, and a
 * bad one stops the app from booting with a message naming it. At module
 * init it awaits `service.ready()`: with `retiredPepperVersions`, the app
 * does not start while usable keys remain on a retired hash, or while the
 * storage is down.
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
  /** Receives the service (an explicit token: no decorator metadata needed). */
  constructor(@Inject(ApiKeysService) private readonly service: ApiKeysService) {}

  /**
   * Awaits `service.ready()` (the retirement check), so a refusal stops the boot.
   *
   * @ignore
   */
  onModuleInit(): Promise<void> {
    return this.service.ready();
  }

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
