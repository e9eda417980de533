/**
 * The `@nestarc/safe-response` names of the Nest binding's renamed exports, kept until the next major.
 * @module
 */
import { SafeResponseFilter } from "./safe_response.filter.ts";

/** @deprecated Use `SafeResponseModule`, which installs the filter (`SafeResponseFilter`). */
export interface SafeExceptionFilter {
  /** Sends the error response of `exception` (Nest's `ExceptionFilter.catch`). */
  catch(exception: unknown, host: unknown): unknown;
}

/** @deprecated Use `SafeResponseModule`, which installs the filter (`SafeResponseFilter`). */
export const SafeExceptionFilter: new (...args: never[]) => SafeExceptionFilter =
  SafeResponseFilter;
