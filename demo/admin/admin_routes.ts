/**
 * The demo's admin routes are the library's (`./api-keys/admin`), mounted at
 * `/admin` by both demos: the caller is an API key with `keys:write`, so the
 * tenant and the caller's key come from the key check, the library's default
 * policy (no escalation) applies, and the CSRF header is off (no browser
 * sends an API key by itself).
 *
 * @module
 */
import type { ApiKeyContext, ApiKeyUsageOptions } from "../../api_keys/mod.ts";
import type { ApiKeysAdminOptions } from "../../api_keys/admin/mod.ts";

/** Where both demos mount the admin routes. */
export const DEMO_ADMIN_PREFIX = "/admin";

/**
 * The scopes offered to `create`; the policy keeps each key within its
 * caller's (the seeded admin key lacks `billing:read`, so asking for it is refused).
 */
export const DEMO_ADMIN_SCOPES: readonly string[] = Object.freeze([
  "projects:read",
  "projects:write",
  "feed:read",
  "billing:read",
  "keys:write",
]);

/**
 * The `usage` option of both demos' key service, so the admin routes serve
 * each key's usage and the page charts it: counts flushed every 2 s (the
 * library's default is 10 s), so a chart fills within seconds.
 */
export const DEMO_USAGE: ApiKeyUsageOptions = Object.freeze({ flushIntervalMs: 2_000 });

/** The admin options of both demos, over each one's reader of the verified key. */
export function demoAdminOptions<R extends object>(
  apiKeyOf: (request: R) => ApiKeyContext | undefined,
): Omit<ApiKeysAdminOptions<R>, "service"> {
  return {
    scopes: DEMO_ADMIN_SCOPES,
    csrf: false,
    tenantOf: (request) => apiKeyOf(request)?.tenantId,
    callerKeyIdOf: (request) => apiKeyOf(request)?.keyId,
    canManage: () => true,
  };
}
