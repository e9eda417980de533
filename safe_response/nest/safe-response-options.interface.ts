/**
 * Options of `SafeResponseModule.register` and `registerAsync`.
 *
 * @module
 */
import type { SafeResponseModuleOptions as CoreOptions } from "../options.ts";

/**
 * What a `version` function receives: Nest's `ExecutionContext` (which
 * fits). For errors thrown before the interceptor (guards, middleware,
 * unknown routes) Nest gives the filter no route, so `getHandler()` and
 * `getClass()` return `null` there.
 *
 * @example
 * ```ts
 * import type { ExecutionContext } from "@nestjs/common";
 * import type { ApiVersionContext } from "@saferoute/api-kit/safe-response/nest";
 * const narrow = (context: ExecutionContext): ApiVersionContext => context;
 * ```
 */
export interface ApiVersionContext {
  /** HTTP view of the call: the Express or Fastify request and response. */
  // deno-lint-ignore no-explicit-any
  switchToHttp(): { getRequest(): any; getResponse(): any };
  /** The route handler (`null` before the interceptor). */
  // deno-lint-ignore ban-types
  getHandler(): Function | null;
  /** The controller class (`null` before the interceptor). */
  // deno-lint-ignore ban-types
  getClass(): Function | null;
}

/**
 * Options of `SafeResponseModule.register`: the core options, with a
 * `version` function receiving the {@link ApiVersionContext}.
 *
 * @example
 * ```ts
 * import type { SafeResponseModuleOptions } from "@saferoute/api-kit/safe-response/nest";
 * const options: SafeResponseModuleOptions = {
 *   requestId: true,
 *   version: (context) => context.switchToHttp().getRequest().headers["x-api-version"],
 * };
 * ```
 */
export type SafeResponseModuleOptions = CoreOptions<ApiVersionContext>;

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
