/**
 * Safe response, framework-free core: envelope builders, code maps,
 * pagination and header helpers, and the wire types.
 *
 * @example
 * ```ts
 * import type { SafeResponse } from "@saferoute/api-kit/safe-response";
 * const body: SafeResponse = { success: true, statusCode: 200, data: null };
 * ```
 *
 * @module
 */
export type * from "../client/types.ts";
