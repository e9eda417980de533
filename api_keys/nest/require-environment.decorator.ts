/**
 * `RequireEnvironment` route decorator.
 *
 * @module
 */
import { SetMetadata } from "@nestjs/common";
import type { Environment } from "../types.ts";
import { API_KEYS_ENVIRONMENT_METADATA } from "./api-keys.constants.ts";

/**
 * Requires keys of one environment on a controller or route (the method's
 * requirement wins over the class's). The guard answers 403
 * `api_key_environment_mismatch` otherwise. A bad argument throws at startup.
 *
 * @example
 * ```ts
 * import { Controller, Post, UseGuards } from "@nestjs/common";
 * import { ApiKeysGuard, RequireEnvironment } from "@saferoute/api-kit/api-keys/nest";
 *
 * @Controller("payouts")
 * @UseGuards(ApiKeysGuard)
 * @RequireEnvironment("live")
 * class PayoutsController {
 *   @Post()
 *   create() {
 *     return { queued: true };
 *   }
 * }
 * ```
 */
export function RequireEnvironment(environment: Environment): MethodDecorator & ClassDecorator {
  if (environment !== "live" && environment !== "test") {
    throw new TypeError('RequireEnvironment: environment must be "live" or "test"');
  }
  return SetMetadata(API_KEYS_ENVIRONMENT_METADATA, environment);
}
