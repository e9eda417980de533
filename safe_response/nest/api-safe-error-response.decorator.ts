/**
 * `ApiSafeErrorResponse`, `ApiSafeErrorResponses` and
 * `ApiSafeProblemResponse`: OpenAPI documentation of error responses.
 *
 * @module
 */
import { applyDecorators } from "@nestjs/common";
import { ApiResponse } from "@nestjs/swagger";
import type { SafeErrorResponseConfig, SafeErrorResponseOptions } from "../options.ts";
import { ApiSafeComponents } from "./openapi/components.ts";
import { errorResponses } from "./openapi/error-responses.ts";

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
 *
 * @example
 * ```ts
 * import { Controller, Get, NotFoundException, Param } from "@nestjs/common";
 * import { ApiSafeErrorResponse } from "@saferoute/api-kit/safe-response/nest";
 *
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
 *
 * @example
 * ```ts
 * import { Controller, Post } from "@nestjs/common";
 * import { ApiSafeErrorResponses } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("users")
 * class UsersController {
 *   @Post()
 *   @ApiSafeErrorResponses([400, { status: 409, code: "EMAIL_TAKEN", message: "Email in use" }])
 *   create() {
 *     return { id: "u1" };
 *   }
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
 *
 * @example
 * ```ts
 * import { Controller, Get, Param } from "@nestjs/common";
 * import { ApiSafeProblemResponse } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("users")
 * class UsersController {
 *   @Get(":id")
 *   @ApiSafeProblemResponse(404, { message: "No such user" })
 *   find(@Param("id") id: string) {
 *     return { id };
 *   }
 * }
 * ```
 */
export function ApiSafeProblemResponse(
  status: number,
  options: SafeErrorResponseOptions = {},
): MethodDecorator & ClassDecorator {
  return documentErrors([{ ...options, status }], true, "ApiSafeProblemResponse");
}
