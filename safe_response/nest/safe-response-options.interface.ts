/**
 * Options of `SafeResponseModule.register` and `registerAsync`.
 *
 * @module
 */
import type { SafeResponseModuleOptions } from "../options.ts";

export type { SafeResponseModuleOptions };

/**
 * Options of `SafeResponseModule.registerAsync`.
 *
 * @example
 * ```ts
 * import type { SafeResponseModuleAsyncOptions } from "@saferoute/api-kit/safe-response/nest";
 * const options: SafeResponseModuleAsyncOptions = {
 *   useFactory: async () => ({ requestId: true }),
 * };
 * ```
 */
export interface SafeResponseModuleAsyncOptions {
  /** Produces the options (sync or async) from the injected values. */
  useFactory: (
    ...args: never[]
  ) => SafeResponseModuleOptions | Promise<SafeResponseModuleOptions>;
  /** Tokens of the providers passed to `useFactory`. */
  inject?: unknown[];
  /** Modules (classes or dynamic modules) exporting the injected providers. */
  imports?: unknown[];
}
