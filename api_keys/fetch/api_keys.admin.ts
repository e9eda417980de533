/**
 * The admin routes (`./api-keys/admin`) over a Web `Request`, mounted at a
 * path prefix.
 *
 * @module
 */
import { createApiKeysAdminHandler } from "../admin/handler.ts";
import { pathOfSegments, routeMethod } from "../admin/_binding.ts";
import type { ApiKeysAdminOptions } from "../admin/types.ts";
import { readBounded } from "./_bounded_body.ts";
import { fetchRequestTarget } from "../../telemetry/_fetch_target.ts";

/**
 * Options of `createApiKeysAdminFetchHandler`: the admin options (the hooks
 * receive the `Request`) and where the routes are mounted.
 *
 * @example
 * ```ts
 * import type { ApiKeysAdminFetchOptions } from "@saferoute/api-kit/api-keys/fetch";
 * declare const options: ApiKeysAdminFetchOptions;
 * options.prefix; // "/api-keys"
 * ```
 */
export interface ApiKeysAdminFetchOptions extends ApiKeysAdminOptions<Request> {
  /** Path the routes are mounted at, such as `/api-keys` (no trailing `/`). */
  prefix: string;
}

const PREFIX = /^(\/[A-Za-z0-9._~-]+)+$/;

/**
 * `path` with each segment percent-decoded, as Express and Fastify decode a
 * route's `:id` (the element sends a key id through `encodeURIComponent`);
 * `undefined` (no route) for a malformed escape or a segment holding a `/`
 * (`pathOfSegments`).
 */
function decodedPath(path: string): string | undefined {
  try {
    return pathOfSegments(path.split("/").map(decodeURIComponent));
  } catch {
    return undefined;
  }
}

/**
 * The admin routes of docs/settings-page.md as a Fetch handler: a request
 * below `prefix` that is one of the routes gets its answer, any other
 * `undefined` with its body unread (the app answers it). A route's body is
 * read up to one byte past `maxBodyBytes` (the rest is never read); a body
 * that cannot be read (an upload failing mid-way) is a 400
 * `api_key_invalid_input` on `body`, never read as empty; `HEAD` is answered
 * as `GET` without the body. Behind
 * `ApiKeyAuthorizer.protect`, give the authorizer `rateLimits: false`
 * (`require({ rateLimits: false })`) so the routes count no rate limit and
 * spend no credits of the caller's key, as Nest's admin controller. Throws a
 * `TypeError` naming a bad option.
 *
 * @example
 * ```ts
 * import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { createApiKeysAdminFetchHandler } from "@saferoute/api-kit/api-keys/fetch";
 *
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const sessions = new Map<string, string>(); // session cookie -> tenant (the app's own login)
 * const admin = createApiKeysAdminFetchHandler({
 *   prefix: "/api-keys",
 *   service,
 *   scopes: ["projects:read", "projects:write"],
 *   tenantOf: (request) => sessions.get(request.headers.get("cookie") ?? "") ?? null,
 *   canManage: () => true,
 *   policy: () => null, // people, not keys, manage here: the offered scopes bound what they get
 * });
 *
 * Deno.serve(async (request) => (await admin(request)) ?? new Response(null, { status: 404 }));
 * ```
 */
export function createApiKeysAdminFetchHandler(
  options: ApiKeysAdminFetchOptions,
): (request: Request) => Promise<Response | undefined> {
  const prefix = options?.prefix;
  if (typeof prefix !== "string" || !PREFIX.test(prefix) || prefix.length > 200) {
    throw new TypeError('options.prefix must be a path such as "/api-keys"');
  }
  const handle = createApiKeysAdminHandler<Request>(options);
  const limit = handle.maxBodyBytes + 1;
  return async (request: Request) => {
    // The target as sent (a Host holding a path or a query never moves into it).
    // A Host that is no host[:port]: the target cannot be read, so no route of the admin's.
    const target = fetchRequestTarget(request);
    if (target === undefined) return undefined;
    // Joined, not resolved: a target of `//host/…` stays a path of this origin.
    const url = new URL(`http://localhost${target}`);
    if (!url.pathname.startsWith(`${prefix}/`)) return undefined;
    const path = decodedPath(url.pathname.slice(prefix.length));
    if (path === undefined || !handle.hasRoute(path)) return undefined;
    let body: Uint8Array | undefined = new Uint8Array(0);
    if (request.method !== "GET" && request.method !== "HEAD") {
      // A body that fails mid-read (a reset upload) is unread, never empty.
      body = await readBounded(request.body, limit).catch(() => undefined);
    }
    const answer = await handle({
      method: routeMethod(request.method),
      path,
      query: (name) => url.searchParams.has(name) ? url.searchParams.getAll(name).join(",") : null,
      headers: (name) => request.headers.get(name),
      body,
    }, request);
    // HEAD is answered as GET: the server drops the body and keeps its Content-Length, as Express
    // and Fastify do (RFC 9110, 8.6).
    return answer === undefined
      ? undefined
      : new Response(answer.body, { status: answer.status, headers: answer.headers });
  };
}
