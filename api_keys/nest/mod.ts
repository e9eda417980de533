/**
 * API keys for NestJS: module, guard and decorators.
 *
 * @example
 * ```ts
 * import { API_KEY_CONTEXT_PROPERTY } from "@saferoute/api-kit/api-keys/nest";
 * API_KEY_CONTEXT_PROPERTY; // "apiKey"
 * ```
 *
 * @module
 */
/** Request property the guard writes the verified context to.
 *
 * @example
 * ```ts
 * import { API_KEY_CONTEXT_PROPERTY } from "@saferoute/api-kit/api-keys/nest";
 * console.log(API_KEY_CONTEXT_PROPERTY);
 * ```
 */
export const API_KEY_CONTEXT_PROPERTY = "apiKey";
