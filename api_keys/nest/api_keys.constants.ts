/**
 * Constants of the Nest bindings (request property, metadata keys, injection
 * tokens) and the types of the functions those tokens provide.
 *
 * @module
 */
import type { ApiKeyContext } from "../types.ts";

/** Request property the default context writer puts the verified context on. */
export const API_KEY_CONTEXT_PROPERTY = "apiKey";

/** Route metadata key written by `RequireEnvironment`. */
export const API_KEYS_ENVIRONMENT_METADATA = "lib:api-keys:environment";

/** Route metadata key written by `RequireScope`. */
export const API_KEYS_SCOPE_METADATA = "lib:api-keys:scope";

/** Route metadata key written by `SkipApiKey` (internal). */
export const API_KEYS_SKIP_METADATA = "lib:api-keys:skip";

/** Route metadata key written by `RateLimit`. */
export const API_KEYS_RATE_LIMIT_METADATA = "lib:api-keys:rate-limit";

/** Injection token of the context writer the guard uses (`null` means the default). */
export const API_KEYS_CONTEXT_WRITER: unique symbol = Symbol("API_KEYS_CONTEXT_WRITER");

/** Injection token of the client-IP resolver the guard uses (`null` means the default). */
export const API_KEYS_CLIENT_IP_RESOLVER: unique symbol = Symbol("API_KEYS_CLIENT_IP_RESOLVER");

/** Injection token of the raw options given to `forRoot`/`forRootAsync` (internal). */
export const API_KEYS_MODULE_OPTIONS: unique symbol = Symbol("API_KEYS_MODULE_OPTIONS");

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
