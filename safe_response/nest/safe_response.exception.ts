/**
 * `SafeException` for Nest: the catalog exception as an `HttpException`.
 *
 * @module
 */
import { HttpException } from "@nestjs/common";
import {
  catalogErrorShape,
  type ErrorCatalog,
  type SafeExceptionOptions,
} from "../error_catalog.ts";
import { initSafeException } from "../_safe_exception.ts";

/**
 * The core's catalog exception (`SafeException` of `./safe-response`) as a
 * Nest `HttpException`, as `@nestarc/safe-response` threw it: filters and
 * interceptors of the application that know only `HttpException` see it as
 * one. `getStatus()` is the catalog's status and `getResponse()` the
 * `{ statusCode, code, message, details? }` that is sent (per-throw overrides
 * applied) when the exception carries its catalog (`options.catalog`); a key
 * without it is a 500 until `SafeResponseFilter` resolves it with the
 * module's `errorCatalog`. The filter treats both classes alike (by their
 * shared brand, `isSafeException`): same status, code, message and details.
 *
 * @example
 * ```ts
 * import { Controller, Get, Module, Param } from "@nestjs/common";
 * import { defineErrors } from "@saferoute/api-kit/safe-response";
 * import { SafeException, SafeResponseModule } from "@saferoute/api-kit/safe-response/nest";
 *
 * const Errors = defineErrors({ USER_NOT_FOUND: { status: 404, message: "User not found" } });
 *
 * @Controller("users")
 * class UsersController {
 *   @Get(":id")
 *   find(@Param("id") id: string) {
 *     // getStatus() is 404 here; without `catalog` the filter still answers 404
 *     throw new SafeException("USER_NOT_FOUND", { catalog: Errors, details: { id } });
 *   }
 * }
 *
 * @Module({
 *   imports: [SafeResponseModule.register({ errorCatalog: Errors })],
 *   controllers: [UsersController],
 * })
 * class AppModule {}
 * ```
 */
export interface SafeException<K extends string = string> extends Error {
  /** The catalog key; also the error code. */
  readonly code: K;
  /** Per-throw overrides. */
  readonly overrides: Readonly<Pick<SafeExceptionOptions, "message" | "details">>;
  /** Catalog the key belongs to, when given. */
  readonly catalog?: ErrorCatalog;
  /** The catalog's status, or 500 when the exception does not carry its catalog. */
  getStatus(): number;
  /** `{ statusCode, code, message, details? }` as sent, or the message without the catalog. */
  getResponse(): string | object;
}

/** Constructor of `SafeException` (an `HttpException` subclass). */
export const SafeException: new <K extends string = string>(
  key: K,
  options?: SafeExceptionOptions,
) => SafeException<K> = class SafeException<K extends string = string> extends HttpException {
  /** The catalog key; also the error code. */
  declare readonly code: K;
  /** Per-throw overrides. */
  declare readonly overrides: Readonly<Pick<SafeExceptionOptions, "message" | "details">>;
  /** Catalog the key belongs to, when given. */
  declare readonly catalog?: ErrorCatalog;

  /** Creates the exception of `key`. */
  constructor(key: K, options: SafeExceptionOptions = {}) {
    super(...httpExceptionArguments(key, options));
    this.name = "SafeException";
    initSafeException(this, key, options);
  }
};

/** `HttpException`'s arguments: the body and status sent, as far as the exception knows them. */
function httpExceptionArguments(
  key: string,
  { message, details, cause, catalog }: SafeExceptionOptions,
): [response: string | object, status: number, options: { cause?: unknown }] {
  const shape = catalog === undefined
    ? undefined
    : catalogErrorShape({ code: key, overrides: { message, details }, catalog });
  if (shape === undefined || "missing" in shape) return [message ?? key, 500, { cause }];
  const { status, ...sent } = shape;
  return [{ statusCode: status, ...sent }, status, { cause }];
}
