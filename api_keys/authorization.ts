/**
 * The request-level checks of `ApiKeysService.authorize`: IP allowlist,
 * environment, scope, in that order.
 *
 * @module
 */
import type { ApiKeyErrorCode } from "./errors.ts";
import { isIpAllowed } from "./ip_allowlist.ts";
import { scopeSatisfies } from "./scopes.ts";
import type { ApiKeyContext, Environment, RequiredScope } from "./types.ts";

/**
 * Request-level checks of `authorize`, applied after verification in this order:
 * IP allowlist, environment, scope.
 *
 * @example
 * ```ts
 * import type { AuthorizeOptions } from "./service.ts";
 * const options: AuthorizeOptions = {
 *   clientIp: "203.0.113.7", requiredEnvironment: "live",
 *   requiredScope: { resource: "orders", level: "read" },
 * };
 * ```
 */
export interface AuthorizeOptions {
  /** Client address; an allowlisted key refuses an unknown address. */
  clientIp?: string;
  /** Environment the route requires. */
  requiredEnvironment?: Environment;
  /** Scope the route requires. */
  requiredScope?: RequiredScope;
}

/** The code of the first check of `options` that a verified `context` fails, if any. */
export function authorizationFailure(
  context: ApiKeyContext,
  options: AuthorizeOptions,
): ApiKeyErrorCode | undefined {
  const { requiredEnvironment, requiredScope } = options;
  if (!isIpAllowed(options.clientIp, context.allowedIpCidrs)) {
    return "api_key_ip_not_allowed";
  }
  if (requiredEnvironment !== undefined && context.environment !== requiredEnvironment) {
    return "api_key_environment_mismatch";
  }
  if (
    requiredScope !== undefined &&
    !scopeSatisfies(context.scopes, requiredScope.resource, requiredScope.level)
  ) {
    return "api_key_scope_insufficient";
  }
  return undefined;
}
