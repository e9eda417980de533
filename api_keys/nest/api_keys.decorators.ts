/**
 * Route requirements the guard reads, and `CurrentApiKey`.
 *
 * @module
 */
import { createParamDecorator, type ExecutionContext, SetMetadata } from "@nestjs/common";
import { requiredEnvironmentOf, requiredScopeOf } from "../_route_requirements.ts";
import { routeRateLimitOf } from "../metering/_limits.ts";
import type { ApiKeyRateLimitPolicy, Environment, ScopeLevel } from "../types.ts";
import {
  API_KEYS_ENVIRONMENT_METADATA,
  API_KEYS_RATE_LIMIT_METADATA,
  API_KEYS_SCOPE_METADATA,
} from "./api_keys.constants.ts";
import { getApiKeyContext } from "./api_keys.guard.ts";

/**
 * Requires a key scope on a controller or route (the method's wins); `write`
 * implies `read`. Else the guard answers 403 `api_key_scope_insufficient`.
 * Bad arguments throw a `TypeError` when the route is declared.
 *
 * @example
 * ```ts
 * import { Controller, Get, Post, UseGuards } from "@nestjs/common";
 * import { ApiKeysGuard, RequireScope } from "@saferoute/api-kit/api-keys/nest";
 *
 * @Controller("orders")
 * @UseGuards(ApiKeysGuard)
 * @RequireScope("orders", "read")
 * class OrdersController {
 *   @Get()
 *   list() {
 *     return [];
 *   }
 *
 *   @Post()
 *   @RequireScope("orders", "write")
 *   create() {
 *     return { id: "o1" };
 *   }
 * }
 * ```
 */
export function RequireScope(
  resource: string,
  level: ScopeLevel,
): MethodDecorator & ClassDecorator {
  return SetMetadata(API_KEYS_SCOPE_METADATA, requiredScopeOf(resource, level, "RequireScope"));
}

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
  return SetMetadata(
    API_KEYS_ENVIRONMENT_METADATA,
    requiredEnvironmentOf(environment, "RequireEnvironment"),
  );
}

/**
 * Picks or weights the rate limits of a controller or route (with a service
 * `limiter`; the method's wins over the class's): policy names count only
 * those of the key's policies (a name a key with policies lacks is answered
 * 500 at the request and logged with the route), a list of policies adds the
 * route's own (counted per key unless `sharedBy: "tenant"`), `false` counts no
 * policy and spends no credits; `cost` (0–10^15) weights each request (0 only
 * checks). A bad argument throws a `TypeError` when the route is declared.
 *
 * @example
 * ```ts
 * import { Controller, Get, UseGuards } from "@nestjs/common";
 * import { ApiKeysGuard, RateLimit } from "@saferoute/api-kit/api-keys/nest";
 *
 * @Controller("reports")
 * @UseGuards(ApiKeysGuard)
 * class ReportsController {
 *   @Get()
 *   @RateLimit("hourly", { cost: 10 })
 *   build() {
 *     return { queued: true };
 *   }
 * }
 * ```
 */
export function RateLimit(
  policies?: string | readonly string[] | readonly ApiKeyRateLimitPolicy[] | false,
  options?: { cost?: number },
): MethodDecorator & ClassDecorator {
  return SetMetadata(
    API_KEYS_RATE_LIMIT_METADATA,
    routeRateLimitOf(policies, options?.cost, "RateLimit"),
  );
}

/**
 * Injects the `ApiKeyContext` the guard verified for this request (`undefined`
 * on a route the guard does not protect). Works with any context writer.
 *
 * @example
 * ```ts
 * import { Controller, Get, UseGuards } from "@nestjs/common";
 * import type { ApiKeyContext } from "@saferoute/api-kit/api-keys";
 * import { ApiKeysGuard, CurrentApiKey } from "@saferoute/api-kit/api-keys/nest";
 *
 * @Controller("whoami")
 * @UseGuards(ApiKeysGuard)
 * class WhoAmIController {
 *   @Get()
 *   whoAmI(@CurrentApiKey() apiKey: ApiKeyContext) {
 *     return { tenantId: apiKey.tenantId };
 *   }
 * }
 * ```
 */
export const CurrentApiKey: () => ParameterDecorator = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    getApiKeyContext(context.switchToHttp().getRequest()),
);
