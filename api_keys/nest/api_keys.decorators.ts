/**
 * Route requirements the guard reads, and `CurrentApiKey`.
 *
 * @module
 */
import { createParamDecorator, type ExecutionContext, SetMetadata } from "@nestjs/common";
import { requiredEnvironmentOf, requiredScopeOf } from "../_route_requirements.ts";
import { routeRateLimitOf } from "../metering/_limits.ts";
import type { ApiKeyRateLimitPolicy, Environment, RequiredScope, ScopeLevel } from "../types.ts";
import {
  API_KEYS_ENVIRONMENT_METADATA,
  API_KEYS_RATE_LIMIT_METADATA,
  API_KEYS_SCOPE_METADATA,
  API_KEYS_SKIP_METADATA,
} from "./api_keys.constants.ts";
import { getApiKeyContext } from "./api_keys.guard.ts";
import { onlyUncounted, ownRequirements } from "./_route_requirements.ts";

/**
 * `SetMetadata(key, value)` on a method or a class, as `call`: throws a `TypeError` when the route
 * is declared if `clash` finds what it contradicts on that same method or class (`on`).
 */
function routeMetadata(
  key: string,
  value: unknown,
  call: string,
  clash: (on: object) => string | undefined,
): MethodDecorator & ClassDecorator {
  const decorate = SetMetadata(key, value);
  return ((target: object, property?: string | symbol, descriptor?: PropertyDescriptor) => {
    const found = clash(descriptor?.value ?? target);
    if (found !== undefined) {
      const where = descriptor === undefined
        ? (target as { name: string }).name
        : `${target.constructor.name}.${String(property)}`;
      throw new TypeError(`${call} on ${where}: it already has ${found}`);
    }
    return descriptor === undefined
      ? decorate(target as never)
      : decorate(target, property!, descriptor);
  }) as MethodDecorator & ClassDecorator;
}

/** Why `SkipApiKey` and a requirement on one method or class are refused. */
const SKIP_CLASH = "SkipApiKey() makes the route public, so a requirement beside it would never " +
  "be enforced: keep one of them (a requirement on a method under a skipped controller needs a key)";

/** `SkipApiKey()` on `on` itself, as a clash of a requirement decorator. */
function skipOn(on: object): string | undefined {
  return Reflect.getOwnMetadata(API_KEYS_SKIP_METADATA, on)
    ? `SkipApiKey(); ${SKIP_CLASH}`
    : undefined;
}

/**
 * Requires a key scope on a controller or route (the method's wins); `write`
 * implies `read`. Else the guard answers 403 `api_key_scope_insufficient`.
 * Bad arguments (a resource no key can hold, outside `create`'s rule, too)
 * throw a `TypeError` when the route is declared, and so does a second
 * `RequireScope` on the same method or class (one requirement each).
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
  const scope = requiredScopeOf(resource, level, "RequireScope");
  return routeMetadata(API_KEYS_SCOPE_METADATA, scope, scopeCall(scope), (on) => {
    // The method's own requirement, or the class's own (not one a parent class set).
    const earlier: RequiredScope | undefined = Reflect.getOwnMetadata(API_KEYS_SCOPE_METADATA, on);
    return earlier === undefined ? skipOn(on) : `${scopeCall(earlier)}; ` +
      "use one requirement per method or class (a second RequireScope would replace the first)";
  });
}

/** `RequireScope("orders", "read")`, for messages. */
function scopeCall(scope: RequiredScope): string {
  return `RequireScope(${JSON.stringify(scope.resource)}, ${JSON.stringify(scope.level)})`;
}

/**
 * Exempts a controller or route from `ApiKeysGuard`: the guard lets every request through without
 * reading or checking any key (no scope, environment, IP allowlist, rate limit or credit), and
 * `CurrentApiKey` gives `undefined`. For public routes under a global guard (`APP_GUARD`), such as
 * the leaked-key reports; anyone can call such a route, so protect it otherwise if it needs it.
 * A requirement nearer the route beats it (fail closed): a method's own `RequireScope`,
 * `RequireEnvironment` or `RateLimit` under a skipped controller, or a subclass's under a skipped
 * parent, still needs a key. Beside one of them on the same method or class it throws a `TypeError`
 * when the route is declared; `RateLimit(false)` without a cost asks nothing of a key and is none.
 *
 * @example
 * ```ts
 * import { Controller, Post } from "@nestjs/common";
 * import { SkipApiKey } from "@saferoute/api-kit/api-keys/nest";
 *
 * @Controller()
 * class LeakedKeysController {
 *   @Post("leaked-keys")
 *   @SkipApiKey()
 *   report() {
 *     return { status: "received" };
 *   }
 * }
 * ```
 */
export function SkipApiKey(): MethodDecorator & ClassDecorator {
  return routeMetadata(API_KEYS_SKIP_METADATA, true, "SkipApiKey()", (on) => {
    const requirements = ownRequirements(on);
    return requirements.length === 0 ? undefined : `${requirements.join(", ")}; ${SKIP_CLASH}`;
  });
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
  return routeMetadata(
    API_KEYS_ENVIRONMENT_METADATA,
    requiredEnvironmentOf(environment, "RequireEnvironment"),
    "RequireEnvironment",
    skipOn,
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
  const rateLimit = routeRateLimitOf(policies, options?.cost, "RateLimit");
  // `RateLimit(false)` without a cost asks nothing of a key: it may sit beside `SkipApiKey()`.
  return routeMetadata(
    API_KEYS_RATE_LIMIT_METADATA,
    rateLimit,
    "RateLimit",
    onlyUncounted(rateLimit) ? () => undefined : skipOn,
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
