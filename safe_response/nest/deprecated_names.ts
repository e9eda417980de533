/**
 * The `@nestarc/safe-response` names of the Nest binding's renamed exports, kept until the next major.
 *
 * @module
 */
import { SafeResponseFilter } from "./safe_response.filter.ts";

/**
 * @deprecated Use `SafeResponseModule`, which installs the filter (`SafeResponseFilter`).
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 * @Module({ imports: [SafeResponseModule.register()] }) // installs the filter
 * class AppModule {}
 * ```
 */
export interface SafeExceptionFilter {
  /** Sends the error response of `exception` (Nest's `ExceptionFilter.catch`). */
  catch(exception: unknown, host: unknown): unknown;
}

/**
 * @deprecated Use `SafeResponseModule`, which installs the filter (`SafeResponseFilter`).
 * @example
 * ```ts
 * import { Module } from "@nestjs/common";
 * import { SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 * @Module({ imports: [SafeResponseModule.register()] }) // installs the filter
 * class AppModule {}
 * ```
 */
export const SafeExceptionFilter: new (...args: never[]) => SafeExceptionFilter =
  SafeResponseFilter;
