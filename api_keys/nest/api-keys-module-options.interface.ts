/**
 * Option types of `ApiKeysModule` and the guard's pluggable functions.
 *
 * @module
 */
import type { ApiKeysServiceOptions } from "../service_options.ts";
import type { ApiKeyContext } from "../types.ts";

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
