/**
 * `SkipGlobalErrors`: exclude a route from global error documentation.
 *
 * @module
 */
import { applyDecorators, SetMetadata } from "@nestjs/common";
import { ApiExtension } from "@nestjs/swagger";
import { SKIP_GLOBAL_ERRORS_EXTENSION } from "./openapi/operation-marks.ts";
import { SKIP_GLOBAL_ERRORS_METADATA } from "./safe-response.constants.ts";

/**
 * Marks a route (or controller) so the global error responses
 * (`swagger.globalErrors`) are not added to its OpenAPI operation by
 * `applyGlobalErrors`: the operation carries `x-safe-skip-global-errors: true`.
 * No effect on the response itself.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { SkipGlobalErrors } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("ping")
 * class PingController {
 *   @Get()
 *   @SkipGlobalErrors()
 *   ping() {
 *     return "pong";
 *   }
 * }
 * ```
 */
export function SkipGlobalErrors(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(SKIP_GLOBAL_ERRORS_METADATA, true),
    ApiExtension(SKIP_GLOBAL_ERRORS_EXTENSION, true),
  );
}
