/**
 * `SkipGlobalErrors`: exclude a route from global error documentation.
 *
 * @module
 */
import { SetMetadata } from "@nestjs/common";
import { SKIP_GLOBAL_ERRORS_METADATA } from "./safe-response.constants.ts";

/**
 * Marks a route (or controller) so the global error responses
 * (`swagger.globalErrors`) are not added to its OpenAPI operation. No effect
 * on the response itself.
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
  return SetMetadata(SKIP_GLOBAL_ERRORS_METADATA, true);
}
