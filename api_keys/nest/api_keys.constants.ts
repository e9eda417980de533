/**
 * Constants of the Nest bindings: request property, metadata keys, injection tokens.
 *
 * @module
 */

/**
 * Request property the default context writer puts the verified context on.
 *
 * @example
 * ```ts
 * import { API_KEY_CONTEXT_PROPERTY } from "@saferoute/api-kit/api-keys/nest";
 * console.log(API_KEY_CONTEXT_PROPERTY); // "apiKey"
 * ```
 */
export const API_KEY_CONTEXT_PROPERTY = "apiKey";

/**
 * Route metadata key written by `RequireEnvironment`.
 *
 * @example
 * ```ts
 * import { API_KEYS_ENVIRONMENT_METADATA } from "@saferoute/api-kit/api-keys/nest";
 * console.log(API_KEYS_ENVIRONMENT_METADATA); // "lib:api-keys:environment"
 * ```
 */
export const API_KEYS_ENVIRONMENT_METADATA = "lib:api-keys:environment";

/**
 * Route metadata key written by `RequireScope`.
 *
 * @example
 * ```ts
 * import { API_KEYS_SCOPE_METADATA } from "@saferoute/api-kit/api-keys/nest";
 * console.log(API_KEYS_SCOPE_METADATA); // "lib:api-keys:scope"
 * ```
 */
export const API_KEYS_SCOPE_METADATA = "lib:api-keys:scope";

/**
 * Route metadata key written by `RateLimit`.
 *
 * @example
 * ```ts
 * import { API_KEYS_RATE_LIMIT_METADATA } from "@saferoute/api-kit/api-keys/nest";
 * console.log(API_KEYS_RATE_LIMIT_METADATA); // "lib:api-keys:rate-limit"
 * ```
 */
export const API_KEYS_RATE_LIMIT_METADATA = "lib:api-keys:rate-limit";

/**
 * Injection token of the context writer the guard uses (`null` means the default).
 *
 * @example
 * ```ts
 * import { API_KEYS_CONTEXT_WRITER } from "@saferoute/api-kit/api-keys/nest";
 * console.log(API_KEYS_CONTEXT_WRITER.description);
 * ```
 */
export const API_KEYS_CONTEXT_WRITER: unique symbol = Symbol("API_KEYS_CONTEXT_WRITER");

/**
 * Injection token of the client-IP resolver the guard uses (`null` means the default).
 *
 * @example
 * ```ts
 * import { API_KEYS_CLIENT_IP_RESOLVER } from "@saferoute/api-kit/api-keys/nest";
 * console.log(API_KEYS_CLIENT_IP_RESOLVER.description);
 * ```
 */
export const API_KEYS_CLIENT_IP_RESOLVER: unique symbol = Symbol("API_KEYS_CLIENT_IP_RESOLVER");

/** Injection token of the raw options given to `forRoot`/`forRootAsync` (internal). */
export const API_KEYS_MODULE_OPTIONS: unique symbol = Symbol("API_KEYS_MODULE_OPTIONS");
