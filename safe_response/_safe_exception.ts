/**
 * What makes an error a catalog exception, shared by the core's
 * `SafeException` and the Nest entry's (an `HttpException`): its brand and
 * its fields.
 *
 * @module
 */
import type { ErrorCatalog, SafeExceptionOptions } from "./error_catalog.ts";
import { LIBRARY_ERROR } from "./_library_error.ts";

/** Brand of a `SafeException`, shared by every copy of the library. */
export const SAFE_EXCEPTION: unique symbol = Symbol.for("@saferoute/api-kit/safe-exception");

/** The fields of a catalog exception. */
export interface SafeExceptionFields<K extends string> {
  /** The catalog key; also the error code. */
  readonly code: K;
  /** Per-throw overrides. */
  readonly overrides: Readonly<Pick<SafeExceptionOptions, "message" | "details">>;
  /** Catalog the key belongs to, when given. */
  readonly catalog?: ErrorCatalog;
}

/**
 * Makes `target` (just constructed) the catalog exception of `key`: its
 * fields, and the brands that every copy of the library recognises.
 */
export function initSafeException<K extends string>(
  target: SafeExceptionFields<K>,
  key: K,
  options: SafeExceptionOptions,
): void {
  const { message, details, catalog } = options;
  Object.defineProperties(target, {
    [SAFE_EXCEPTION]: { value: true },
    [LIBRARY_ERROR]: { value: true },
  });
  Object.assign(target, { code: key, overrides: Object.freeze({ message, details }) });
  if (catalog !== undefined) Object.assign(target, { catalog });
}
