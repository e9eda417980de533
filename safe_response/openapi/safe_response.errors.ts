/**
 * OpenAPI documentation of error responses.
 * @module
 */
import { applyDecorators } from "@nestjs/common";
import { ApiResponse } from "@nestjs/swagger";
import type { ErrorCatalog } from "../error_catalog.ts";
import type { SafeErrorResponseConfig, SafeErrorResponseOptions } from "../options.ts";
import { ApiSafeComponents } from "./_components.ts";
import { errorResponses } from "./_error_responses.ts";

/** Documents `configs` as error envelopes or problem details (`errorCodes` does not apply here). */
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
 * Documents one error envelope; the code defaults to the status's default code, the message and
 * description to its title.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { ApiSafeErrorResponse } from "@saferoute/api-kit/safe-response/openapi";
 * @Controller("users")
 * class Routes { @Get() @ApiSafeErrorResponse(404, { code: "USER_NOT_FOUND" }) find() { return {}; } }
 * ```
 */
export function ApiSafeErrorResponse(
  status: number,
  options: SafeErrorResponseOptions = {},
): MethodDecorator & ClassDecorator {
  return documentErrors([{ ...options, status }], false, "ApiSafeErrorResponse");
}

/**
 * Documents several error envelopes; entries of one status share a response, one example per code.
 * @example
 * ```ts
 * import { Controller, Post } from "@nestjs/common";
 * import { ApiSafeErrorResponses } from "@saferoute/api-kit/safe-response/openapi";
 * @Controller("users")
 * class Routes { @Post() @ApiSafeErrorResponses([400, { status: 409, code: "EMAIL_TAKEN" }]) create() {} }
 * ```
 */
export function ApiSafeErrorResponses(
  configs: SafeErrorResponseConfig[],
): MethodDecorator & ClassDecorator {
  return documentErrors(configs, false, "ApiSafeErrorResponses");
}

/**
 * Documents one RFC 9457 problem-details error, for apps with the `problemDetails` option.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { ApiSafeProblemResponse } from "@saferoute/api-kit/safe-response/openapi";
 * @Controller("users")
 * class Routes { @Get() @ApiSafeProblemResponse(404, { message: "No such user" }) find() { return {}; } }
 * ```
 */
export function ApiSafeProblemResponse(
  status: number,
  options: SafeErrorResponseOptions = {},
): MethodDecorator & ClassDecorator {
  return documentErrors([{ ...options, status }], true, "ApiSafeProblemResponse");
}

/**
 * Options of {@link ApiSafeCatalogErrors} and {@link ApiSafeCatalogError}.
 */
export interface ApiSafeCatalogErrorsOptions {
  /** Document problem-details bodies instead of error envelopes (default `false`). */
  problemDetails?: boolean;
}

/**
 * Documents catalog errors by key (status, code, description, message and details from the
 * catalog). An unknown key throws a `TypeError`.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { defineErrors } from "@saferoute/api-kit/safe-response";
 * import { ApiSafeCatalogErrors } from "@saferoute/api-kit/safe-response/openapi";
 * const Errors = defineErrors({ USER_NOT_FOUND: { status: 404, message: "User not found" } });
 * @Controller("users")
 * class Routes { @Get() @ApiSafeCatalogErrors(Errors, ["USER_NOT_FOUND"]) find() { return {}; } }
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

/**
 * Documents one catalog error by key: `ApiSafeCatalogErrors(catalog, [key], options)` (seed
 * 0.15's singular name). An unknown key throws a `TypeError`.
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { defineErrors } from "@saferoute/api-kit/safe-response";
 * import { ApiSafeCatalogError } from "@saferoute/api-kit/safe-response/openapi";
 * const Errors = defineErrors({ USER_NOT_FOUND: { status: 404, message: "User not found" } });
 * @Controller("users")
 * class Routes { @Get() @ApiSafeCatalogError(Errors, "USER_NOT_FOUND") find() { return {}; } }
 * ```
 */
export function ApiSafeCatalogError<K extends string>(
  catalog: ErrorCatalog<K>,
  key: NoInfer<K>,
  options: ApiSafeCatalogErrorsOptions = {},
): MethodDecorator & ClassDecorator {
  return ApiSafeCatalogErrors(catalog, [key], options);
}
