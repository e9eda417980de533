/**
 * `ApiSafeErrorResponse`, `ApiSafeErrorResponses`, `ApiSafeProblemResponse`
 * and `ApiSafeCatalogErrors`: OpenAPI documentation of error responses.
 *
 * @module
 */
import { applyDecorators } from "@nestjs/common";
import { ApiResponse } from "@nestjs/swagger";
import type { ErrorCatalog } from "../error_catalog.ts";
import type { SafeErrorResponseConfig, SafeErrorResponseOptions } from "../options.ts";
import { ApiSafeComponents } from "./_components.ts";
import { errorResponses } from "./_error_responses.ts";

/**
 * Documents `configs` as error envelopes or problem details. Codes come from
 * `code`, else the default code map, else the fallback code (decorators run
 * before module options exist, so `errorCodes` is not applied here).
 */
export function documentErrors(
  configs: readonly SafeErrorResponseConfig[],
  problem: boolean,
  decorator: string,
): MethodDecorator & ClassDecorator {
  const responses = errorResponses(configs, { problem }, decorator);
  return applyDecorators(
    ApiSafeComponents(),
    ...[...responses].map(([status, response]) => ApiResponse({ status, ...response })),
  );
}

/**
 * Documents one error envelope (`application/json`, schema
 * `SafeErrorResponse`) with an example carrying the code, message and
 * details. The code defaults to the default code map (`lookupErrorCode`),
 * else the fallback (`410` → `GONE`); the message and description default to
 * the status title.
 * @example
 * ```ts
 * import { Controller, Get, NotFoundException, Param } from "@nestjs/common";
 * import { ApiSafeErrorResponse } from "@saferoute/api-kit/safe-response/openapi";
 * @Controller("users")
 * class UsersController {
 *   @Get(":id")
 *   @ApiSafeErrorResponse(404, { code: "USER_NOT_FOUND", message: "No such user" })
 *   find(@Param("id") id: string) {
 *     throw new NotFoundException({ code: "USER_NOT_FOUND", message: "No such user" });
 *   }
 * }
 * ```
 */
export function ApiSafeErrorResponse(
  status: number,
  options: SafeErrorResponseOptions = {},
): MethodDecorator & ClassDecorator {
  return documentErrors([{ ...options, status }], false, "ApiSafeErrorResponse");
}

/**
 * Documents several error envelopes: statuses, or `{ status, ...options }`.
 * Entries of one status become one response with one example per code.
 * @example
 * ```ts
 * import { Controller, Post } from "@nestjs/common";
 * import { ApiSafeErrorResponses } from "@saferoute/api-kit/safe-response/openapi";
 * @Controller("users")
 * class UsersController {
 *   @Post()
 *   @ApiSafeErrorResponses([400, { status: 409, code: "EMAIL_TAKEN", message: "Email in use" }])
 *   create() { return { id: "u1" }; }
 * }
 * ```
 */
export function ApiSafeErrorResponses(
  configs: SafeErrorResponseConfig[],
): MethodDecorator & ClassDecorator {
  return documentErrors(configs, false, "ApiSafeErrorResponses");
}

/**
 * Documents one RFC 9457 problem-details error (`application/problem+json`,
 * schema `SafeProblemDetails`), for apps with the `problemDetails` option.
 * The example's `type` is `about:blank` and `instance` is `/`.
 * @example
 * ```ts
 * import { Controller, Get, Param } from "@nestjs/common";
 * import { ApiSafeProblemResponse } from "@saferoute/api-kit/safe-response/openapi";
 * @Controller("users")
 * class UsersController {
 *   @Get(":id")
 *   @ApiSafeProblemResponse(404, { message: "No such user" })
 *   find(@Param("id") id: string) { return { id }; }
 * }
 * ```
 */
export function ApiSafeProblemResponse(
  status: number,
  options: SafeErrorResponseOptions = {},
): MethodDecorator & ClassDecorator {
  return documentErrors([{ ...options, status }], true, "ApiSafeProblemResponse");
}

/**
 * Options of {@link ApiSafeCatalogErrors}.
 * @example
 * ```ts
 * import type { ApiSafeCatalogErrorsOptions } from "@saferoute/api-kit/safe-response/openapi";
 * const options: ApiSafeCatalogErrorsOptions = { problemDetails: true };
 * ```
 */
export interface ApiSafeCatalogErrorsOptions {
  /** Document problem-details bodies instead of error envelopes (default `false`). */
  problemDetails?: boolean;
}

/**
 * Documents catalog errors by key: each key becomes an error response with
 * the catalog's status, the key as code, its description (else the status
 * title) as the response description, and its message and details as the
 * example (keys of one status share a response, one example per key). Built
 * on `ApiSafeErrorResponse`; keys are type-checked against the catalog, and
 * an unknown key throws when decorating.
 * @example
 * ```ts
 * import { Controller, Get, Param } from "@nestjs/common";
 * import { defineErrors } from "@saferoute/api-kit/safe-response";
 * import { ApiSafeCatalogErrors } from "@saferoute/api-kit/safe-response/openapi";
 * const Errors = defineErrors({ USER_NOT_FOUND: { status: 404, message: "User not found" } });
 * @Controller("users")
 * class UsersController {
 *   @Get(":id")
 *   @ApiSafeCatalogErrors(Errors, ["USER_NOT_FOUND"])
 *   find(@Param("id") id: string) {
 *     throw Errors.exception("USER_NOT_FOUND", { details: { id } });
 *   }
 * }
 * ```
 */
export function ApiSafeCatalogErrors<K extends string>(
  catalog: ErrorCatalog<K>,
  keys: readonly NoInfer<K>[],
  options: ApiSafeCatalogErrorsOptions = {},
): MethodDecorator & ClassDecorator {
  const configs: SafeErrorResponseConfig[] = keys.map((key) => {
    const definition = catalog.get(key);
    if (definition === undefined) {
      throw new TypeError(`ApiSafeCatalogErrors: \`${key}\` is not in the catalog`);
    }
    const { status, message, description, details } = definition;
    return { status, code: key, message, description, details };
  });
  return documentErrors(configs, options.problemDetails === true, "ApiSafeCatalogErrors");
}
