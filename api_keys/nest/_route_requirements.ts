/**
 * The requirements `ApiKeysGuard` enforces on a route, read from this library's route metadata
 * (the guard reads them here), and the start-up check of `ApiKeysModule`: the routes with such
 * requirements that no `ApiKeysGuard` (or subclass) runs on, which Nest serves to anyone.
 *
 * @module
 */
import { type ApplicationConfig, type ModulesContainer, Reflector } from "@nestjs/core";
import { assertChargedRoute } from "../metering/_limits.ts";
import type { AuthorizeOptions, Environment, RequiredScope } from "../types.ts";
import {
  API_KEYS_ENVIRONMENT_METADATA,
  API_KEYS_RATE_LIMIT_METADATA,
  API_KEYS_SCOPE_METADATA,
  API_KEYS_SKIP_METADATA,
} from "./api_keys.constants.ts";

// deno-lint-ignore ban-types
type Target = Function;

/** What the guard checks on a route; `undefined`: `SkipApiKey`, nothing. */
export type RouteRequirements = Pick<
  AuthorizeOptions,
  "requiredEnvironment" | "requiredScope" | "rateLimits" | "cost"
>;

/** The metadata key of each requirement decorator, and its name in messages. */
const REQUIREMENT_DECORATORS: readonly [string, string][] = [
  [API_KEYS_SCOPE_METADATA, "RequireScope"],
  [API_KEYS_ENVIRONMENT_METADATA, "RequireEnvironment"],
  [API_KEYS_RATE_LIMIT_METADATA, "RateLimit"],
];

/**
 * Whether a `RateLimit` value only turns counting off (`RateLimit(false)` without a cost, the
 * admin controller's default): it asks nothing of a key, so it is no requirement.
 */
export function onlyUncounted(rateLimit: RouteRequirements): boolean {
  return rateLimit.rateLimits === false && rateLimit.cost === undefined;
}

/**
 * The requirement decorators (`RequireScope`, ...) on `target` itself, a method or a class; a
 * `RateLimit` that only turns counting off is none (`onlyUncounted`).
 */
export function ownRequirements(target: object): string[] {
  return REQUIREMENT_DECORATORS.filter(([key]) => {
    const value = Reflect.getOwnMetadata(key, target);
    return key === API_KEYS_RATE_LIMIT_METADATA
      ? value !== undefined && !onlyUncounted(value)
      : value !== undefined;
  }).map(([, name]) => name);
}

/**
 * Whether `SkipApiKey` exempts the route: the nearest of the handler, its controller and the
 * controller's parent classes with a skip or a requirement of its own has the skip. A requirement
 * nearer the route than the skip keeps the key check (fail closed).
 */
function skipped(handler: Target, controller: Target): boolean {
  const targets: object[] = [handler];
  for (let type: object | null = controller; type !== null && type !== Function.prototype;) {
    targets.push(type);
    type = Object.getPrototypeOf(type);
  }
  for (const target of targets) {
    if (Reflect.getOwnMetadata(API_KEYS_SKIP_METADATA, target)) return true;
    if (ownRequirements(target).length > 0) return false;
  }
  return false;
}

/**
 * The route's `RateLimit`, the controller's and the method's merged field by field (the method's
 * `rateLimits` and `cost` win; its `rateLimits: false` drops the controller's cost), as Fetch's
 * `require` merges. Throws a `TypeError` naming the route for a cost under `rateLimits: false`.
 */
function rateLimitOf(reflector: Reflector, handler: Target, controller: Target): RouteRequirements {
  type RateLimit = RouteRequirements | undefined;
  const method = reflector.get<RateLimit>(API_KEYS_RATE_LIMIT_METADATA, handler);
  const merged: RouteRequirements = {
    ...(method?.rateLimits === false
      ? undefined
      : reflector.get<RateLimit>(API_KEYS_RATE_LIMIT_METADATA, controller)),
    ...method,
  };
  assertChargedRoute(merged, `RateLimit on ${controller.name}.${handler.name}`);
  return merged;
}

/**
 * The route's `RequireEnvironment`, `RequireScope` (the method's over the controller's) and
 * `RateLimit` (`rateLimitOf`); `undefined` under `SkipApiKey`, unless a requirement is nearer
 * the route (`skipped`).
 */
export function routeRequirementsOf(
  reflector: Reflector,
  handler: Target,
  controller: Target,
): RouteRequirements | undefined {
  if (skipped(handler, controller)) return undefined;
  const targets = [handler, controller];
  const environment = reflector.getAllAndOverride<Environment | undefined>(
    API_KEYS_ENVIRONMENT_METADATA,
    targets,
  );
  const scope = reflector.getAllAndOverride<RequiredScope | undefined>(
    API_KEYS_SCOPE_METADATA,
    targets,
  );
  const requirements = rateLimitOf(reflector, handler, controller);
  if (environment !== undefined) requirements.requiredEnvironment = environment;
  if (scope !== undefined) requirements.requiredScope = scope;
  return requirements;
}

/** Nest's `GUARDS_METADATA` (`@UseGuards`; stable from Nest 10 to 12, in `@nestjs/common/constants`). */
const NEST_GUARDS_METADATA = "__guards__";

/** Nest's `PATH_METADATA`, which marks a route handler (stable from Nest 10 to 12). */
const NEST_PATH_METADATA = "path";

/** How many routes the warning names before "and N more". */
const NAMED_ROUTES = 5;

/** Whether `guard` (a class or an instance, as Nest takes them) is `type` or a subclass. */
function isGuardOf(type: Target, guard: unknown): boolean {
  return guard instanceof type ||
    (typeof guard === "function" && (guard === type || guard.prototype instanceof type));
}

/** Whether `@UseGuards` on `target` (a controller or a handler) lists a `type` guard. */
function guardedByMetadata(type: Target, target: Target): boolean {
  const guards: unknown[] | undefined = Reflect.getMetadata(NEST_GUARDS_METADATA, target);
  return guards?.some((guard) => isGuardOf(type, guard)) ?? false;
}

/** The route handlers of a controller, its parents' included, by method name. */
function* routeHandlers(controller: Target): Generator<[string, Target]> {
  const seen = new Set<string>(["constructor"]);
  for (
    let prototype = controller.prototype;
    prototype !== null && prototype !== Object.prototype;
    prototype = Object.getPrototypeOf(prototype)
  ) {
    for (const name of Object.getOwnPropertyNames(prototype)) {
      if (seen.has(name)) continue;
      seen.add(name);
      const value = Object.getOwnPropertyDescriptor(prototype, name)?.value;
      if (
        typeof value === "function" && Reflect.getMetadata(NEST_PATH_METADATA, value) !== undefined
      ) {
        yield [name, value];
      }
    }
  }
}

/**
 * `Controller.method` of every route in `modules` with requirements (`routeRequirementsOf`) and
 * no `guard` (`ApiKeysGuard`, passed in: the guard imports this file) on it: none in the app's
 * global guards (`APP_GUARD` providers of any module, `app.useGlobalGuards`, all in `config` once
 * the app is created), none in `@UseGuards` on its controller or method. Every route's
 * requirements are read, guarded or not: a `TypeError` at start for a class's and a method's
 * `RateLimit` that clash (`rateLimitOf`).
 */
export function unguardedRoutes(
  modules: ModulesContainer,
  config: ApplicationConfig,
  guard: Target,
): string[] {
  const global = config.getGlobalGuards().some((global) => isGuardOf(guard, global)) ||
    config.getGlobalRequestGuards().some((wrapper) => isGuardOf(guard, wrapper.metatype));
  const reflector = new Reflector();
  const controllers = new Set<Target>();
  for (const entry of modules.values()) {
    for (const wrapper of entry.controllers.values()) {
      if (typeof wrapper.metatype === "function") controllers.add(wrapper.metatype);
    }
  }
  const found: string[] = [];
  for (const controller of controllers) {
    const guarded = global || guardedByMetadata(guard, controller);
    for (const [name, handler] of routeHandlers(controller)) {
      const requirements = routeRequirementsOf(reflector, handler, controller);
      if (guarded || guardedByMetadata(guard, handler) || requirements === undefined) continue;
      // Any requirement counts, but `rateLimits: false` alone (`onlyUncounted`).
      if (Object.keys(requirements).length > (onlyUncounted(requirements) ? 1 : 0)) {
        found.push(`${controller.name}.${name}`);
      }
    }
  }
  return found;
}

/** The start-up warning naming `routes` (at most `NAMED_ROUTES`) and how to install the guard. */
export function unguardedRoutesLine(routes: readonly string[]): string {
  const named = routes.slice(0, NAMED_ROUTES).join(", ");
  const more = routes.length > NAMED_ROUTES ? ` and ${routes.length - NAMED_ROUTES} more` : "";
  return `ApiKeysModule: ${routes.length} route${routes.length === 1 ? "" : "s"} with ` +
    "RequireScope, RequireEnvironment or RateLimit but no ApiKeysGuard, so served without any " +
    `key check: ${named}${more}; install the guard for every route (in the root module, ` +
    "providers: [{ provide: APP_GUARD, useExisting: ApiKeysGuard }]) or per controller " +
    "(@UseGuards(ApiKeysGuard))";
}
