/**
 * What the demo page's `<api-keys-manager>` authenticates with: the seeded
 * admin key, handed to the page at `/page-session` because the demo has no
 * login, and only while it listens on loopback. A real app's `getToken`
 * returns the signed-in user's own token instead, never a key served to
 * anyone who asks. The route answers only a request whose `Host` is a loopback
 * name with the demo's port (and whose `Origin`, when sent, is that address):
 * a DNS-rebinding page reaches the port under its own name and gets a 403.
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
  /** The port the demo listens on, set once it listens; the route refuses every request before. */
  port?: number;
}

/** The `Host` names the route answers (with the demo's port). */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/**
 * Whether the route answers a request with these `Host` and `Origin` headers:
 * `Host` is `localhost`, `127.0.0.1` or `[::1]` with the demo's port, and
 * `Origin`, when present, is `http://` + that `Host`.
 */
export function pageSessionServes(
  session: PageSession,
  host: string | null | undefined,
  origin: string | null | undefined,
): boolean {
  if (session.port === undefined || typeof host !== "string") return false;
  const name = host.toLowerCase();
  if (!LOOPBACK_NAMES.some((loopback) => name === `${loopback}:${session.port}`)) return false;
  return origin === null || origin === undefined || origin.toLowerCase() === `http://${name}`;
}

/** The answer to a request {@link pageSessionServes} refuses. */
export const PAGE_SESSION_REFUSAL = {
  code: "FORBIDDEN_HOST",
  message: "the page session is served on the demo's loopback address only",
} as const;

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
