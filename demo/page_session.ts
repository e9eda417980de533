/**
 * What the demo page's `<api-keys-manager>` authenticates with: the seeded
 * admin key, handed to the page at `/page-session` because the demo has no
 * login, and only while it listens on loopback. A real app's `getToken`
 * returns the signed-in user's own token instead, never a key served to
 * anyone who asks.
 *
 * @module
 */
import { DEMO_USAGE } from "./admin/admin_routes.ts";
import type { DemoKeys } from "./seed.ts";

/** Where the page reads its session. */
export const PAGE_SESSION_PATH = "/page-session";

/** The page's session, filled once the demo keys are seeded. */
export interface PageSession {
  /** The seeded admin key (`keys:write`); `undefined` without seeded keys or off loopback. */
  adminKey: string | undefined;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "::1", "localhost"]);

/** The key the page gets: the seeded admin key when the demo listens on loopback `host` only. */
export function pageAdminKey(host: string, keys: DemoKeys | undefined): string | undefined {
  return LOOPBACK_HOSTS.has(host) ? keys?.admin.key : undefined;
}

/**
 * The JSON body of {@link PAGE_SESSION_PATH}: `token` (`null` without
 * `adminKey`) and `usageFlushMs`, after which the page reloads the list to show a
 * request's "last used" and usage.
 */
export function pageSessionBody(session: PageSession): string {
  return JSON.stringify({
    token: session.adminKey ?? null,
    usageFlushMs: DEMO_USAGE.flushIntervalMs,
  });
}
