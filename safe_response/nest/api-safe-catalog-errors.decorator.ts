/**
 * `ApiSafeCatalogErrors`: OpenAPI documentation of error-catalog entries.
 *
 * @module
 */
import type { ErrorCatalog } from "../error_catalog.ts";
import type { SafeErrorResponseConfig } from "../options.ts";
import { documentErrors } from "./api-safe-error-response.decorator.ts";

/**
 * Options of {@link ApiSafeCatalogErrors}.
 *
 * @example
 * ```ts
 * import type { ApiSafeCatalogErrorsOptions } from "@saferoute/api-kit/safe-response/nest";
 * const options: ApiSafeCatalogErrorsOptions = { problemDetails: true };
 * ```
 */
export interface ApiSafeCatalogErrorsOptions {
  /** Document problem-details bodies instead of error envelopes (default `false`). */
  problemDetails?: boolean;
}

/**
 * Documents catalog errors by key: each key becomes an error response with
 * the catalog's status, the key as code, and its message and details as the
 * example (keys of one status share a response, one example per key). Built
 * on `ApiSafeErrorResponse`; keys are type-checked against the catalog, and
 * an unknown key throws when decorating.
 *
 * @example
 * ```ts
 * import { Controller, Get, Param } from "@nestjs/common";
 * import { defineErrors } from "@saferoute/api-kit/safe-response";
 * import { ApiSafeCatalogErrors } from "@saferoute/api-kit/safe-response/nest";
 *
 * const Errors = defineErrors({ USER_NOT_FOUND: { status: 404, message: "User not found" } });
 *
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
    const { status, message, details } = definition;
    return { status, code: key, message, details };
  });
  return documentErrors(configs, options.problemDetails === true, "ApiSafeCatalogErrors");
}
