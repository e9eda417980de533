/**
 * `RawResponse`: skip wrapping.
 *
 * @module
 */
import { SetMetadata } from "@nestjs/common";
import { RAW_RESPONSE_METADATA } from "./safe-response.constants.ts";

/**
 * Sends the handler's result as is (no success envelope). Errors are still
 * wrapped by the exception filter. On a class, applies to every route;
 * `SafeResponse()` on a method turns wrapping back on.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { RawResponse } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("health")
 * class HealthController {
 *   @Get()
 *   @RawResponse()
 *   check() {
 *     return "ok";
 *   }
 * }
 * ```
 */
export function RawResponse(): MethodDecorator & ClassDecorator {
  return SetMetadata(RAW_RESPONSE_METADATA, true);
}
