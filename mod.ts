/**
 * API keys and safe responses for server APIs: the framework-free cores.
 * Nest bindings live in `./api-keys/nest` and `./safe-response/nest`; the
 * browser client in `./client`.
 *
 * @example
 * ```ts
 * import type { SafeResponse } from "@saferoute/api-kit";
 * const body: SafeResponse<number> = { success: true, statusCode: 200, data: 1 };
 * ```
 *
 * @module
 */
export type { SafeResponse } from "./client/types.ts";
