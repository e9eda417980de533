/**
 * What the demo page's `<api-keys-manager>` authenticates with: the seeded
 * admin key, handed to the page at `/page-session` because the demo has no
 * login and listens on loopback. A real app's `getToken` returns the
 * signed-in user's own token instead, never a key served to anyone who asks.
 *
 * @module
 */
import { DEMO_USAGE } from "./admin/admin_routes.ts";

/** Where the page reads its session. */
export const PAGE_SESSION_PATH = "/page-session";

/** The page's session, filled once the demo keys are seeded. */
export interface PageSession {
  /** The seeded admin key (`keys:write`), `undefined` when the demo seeded no keys. */
  adminKey: string | undefined;
}

/**
 * The JSON body of {@link PAGE_SESSION_PATH}: `token` (`null` without seeded
 * keys) and `usageFlushMs`, after which the page reloads the list to show a
 * request's "last used" and usage.
 */
export function pageSessionBody(session: PageSession): string {
  return JSON.stringify({
    token: session.adminKey ?? null,
    usageFlushMs: DEMO_USAGE.flushIntervalMs,
  });
}
