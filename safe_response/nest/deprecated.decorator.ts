/**
 * `Deprecated`: deprecation headers and `meta.deprecation`.
 *
 * @module
 */
import { applyDecorators, SetMetadata } from "@nestjs/common";
import { type DeprecatedOptions, resolveDeprecation } from "../deprecation_headers.ts";
import { ApiDeprecatedOperation } from "./openapi/operation-marks.ts";
import { DEPRECATED_METADATA } from "./safe-response.constants.ts";

/**
 * Marks a route deprecated. Dates are validated when the decorator is applied
 * (a bad date fails at startup). Responses, including errors thrown by the
 * handler (not by guards), carry `Deprecation: @<unix seconds of since>`
 * (`@0` without `since`), `Sunset: <HTTP-date>` when `sunset` is given,
 * `Link: <link>; rel="deprecation"` when `link` is given, and
 * `meta.deprecation`. The OpenAPI operation (of the route, or of every route
 * of a controller) gets `deprecated: true`.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { Deprecated } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("v1/users")
 * class LegacyUsersController {
 *   @Get()
 *   @Deprecated({ since: "2026-01-01", sunset: "2027-01-01", link: "https://example.com/v2" })
 *   list() {
 *     return [];
 *   }
 * }
 * ```
 */
export function Deprecated(options: DeprecatedOptions = {}): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(DEPRECATED_METADATA, resolveDeprecation(options)),
    ApiDeprecatedOperation(),
  );
}
