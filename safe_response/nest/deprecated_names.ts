/**
 * Deprecated names of the Nest binding: the names `@nestarc/safe-response`
 * gave to what this binding has under another name (docs/migration.md).
 * They go in the next major version.
 *
 * @module
 */
import { SafeResponseFilter } from "./safe_response.filter.ts";

/**
 * The global exception filter, as other code may refer to it.
 *
 * @deprecated Use `SafeResponseModule`, which installs the filter (renamed
 * `SafeResponseFilter`; its name in `@nestarc/safe-response` was
 * `SafeExceptionFilter`) as `APP_FILTER`; nothing else needs to name it.
 *
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Module({ imports: [SafeResponseModule.register()] }) // installs the filter
 * class AppModule {}
 * ```
 */
export interface SafeExceptionFilter {
  /** Sends the error response of `exception` (Nest's `ExceptionFilter.catch`). */
  catch(exception: unknown, host: unknown): unknown;
}

/**
 * The class of the global exception filter, for Nest's dependency injection
 * only (it is built from `SafeResponseModule`'s providers).
 *
 * @deprecated Use `SafeResponseModule`, which installs the filter (renamed
 * `SafeResponseFilter`; its name in `@nestarc/safe-response` was
 * `SafeExceptionFilter`) as `APP_FILTER`; nothing else needs to name it.
 *
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Module({ imports: [SafeResponseModule.register()] }) // installs the filter
 * class AppModule {}
 * ```
 */
export const SafeExceptionFilter: new (...args: never[]) => SafeExceptionFilter =
  SafeResponseFilter;
