/**
 * Safe response for NestJS: module, interceptor, exception filter, decorators.
 *
 * @example
 * ```ts
 * import { SAFE_RESPONSE_PLACEHOLDER } from "@saferoute/api-kit/safe-response/nest";
 * console.log(SAFE_RESPONSE_PLACEHOLDER);
 * ```
 *
 * @module
 */
/** Placeholder until the Nest module lands.
 *
 * @example
 * ```ts
 * import { SAFE_RESPONSE_PLACEHOLDER } from "@saferoute/api-kit/safe-response/nest";
 * console.log(SAFE_RESPONSE_PLACEHOLDER);
 * ```
 */
export const SAFE_RESPONSE_PLACEHOLDER = true;
