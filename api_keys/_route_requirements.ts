/**
 * A route's key requirements (scope, environment), checked once when the
 * route is declared: by the Nest decorators (`RequireScope`,
 * `RequireEnvironment`) and by the Fetch binding's authorizers. A bad value
 * is a programmer error: a `TypeError` naming where it was given.
 *
 * @module
 */
import { assertScopeLevel, assertScopeResource } from "./scopes.ts";
import type { Environment, RequiredScope } from "./types.ts";

/**
 * The frozen scope requirement of `resource` at `level`; throws a `TypeError`
 * starting with `who` for a resource no key can hold (outside the rule
 * `create` applies: `assertScopeResource`) or a level other than
 * `"read"`/`"write"`.
 */
export function requiredScopeOf(resource: unknown, level: unknown, who: string): RequiredScope {
  assertScopeResource(resource, `${who}: resource`);
  assertScopeLevel(level, `${who}: level`);
  return Object.freeze({ resource, level });
}

/** `environment` when it is `"live"` or `"test"`; else throws a `TypeError` starting with `who`. */
export function requiredEnvironmentOf(environment: unknown, who: string): Environment {
  if (environment !== "live" && environment !== "test") {
    throw new TypeError(`${who}: environment must be "live" or "test"`);
  }
  return environment;
}
