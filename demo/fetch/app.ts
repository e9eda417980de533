/**
 * The Fetch demo's application: the same routes and keys as the Nest demo,
 * with `./api-keys/fetch` (key checks, the client IP behind the loopback
 * proxy) and `./safe-response/fetch` (envelopes) around plain handlers, and
 * a small router. The routes' work is the demo's shared, framework-free code
 * (`demo/resources/projects.ts`, `demo/resources/feed.ts`,
 * `demo/leaks/handlers.ts`); the admin routes are the library's
 * (`createApiKeysAdminFetchHandler`, options and the `usage` option in
 * `demo/admin/admin_routes.ts`).
 *
 * @module
 */
import {
  type ApiKeyContext,
  ApiKeysService,
  type ApiKeyStorage,
  type SecretScanningPublicKey,
} from "../../api_keys/mod.ts";
import {
  type ApiKeyRequirements,
  createApiKeyAuthorizer,
  createApiKeysAdminFetchHandler,
  createLeakReportFetchHandler,
  getApiKeyContext,
  getRateLimitHeaders,
  peerAddress,
  trustedProxyClientIp,
} from "../../api_keys/fetch/mod.ts";
import {
  createSafeFetch,
  type SafeContext,
  type SafeRouteOptions,
} from "../../safe_response/fetch/mod.ts";
import { DEMO_ADMIN_PREFIX, DEMO_USAGE, demoAdminOptions } from "../admin/admin_routes.ts";
import { DemoErrors } from "../errors.ts";
import { createDemoLeakHandlers, LEAK_ROUTES } from "../leaks/handlers.ts";
import {
  createLeakReportLimiter,
  LEAK_REPORT_REFUSAL,
  type LeakReportLimits,
} from "../leaks/report_limits.ts";
import { DemoHttpError } from "../http_error.ts";
import { createDemoKeyLimiter, DEFAULT_RATE_LIMIT, PING_LIMIT } from "../limits.ts";
import type { PageAssets } from "../page_assets.ts";
import {
  PAGE_SESSION_PATH,
  PAGE_SESSION_REFUSAL,
  type PageSession,
  pageSessionBody,
  pageSessionServes,
} from "../page_session.ts";
import type { DemoPeppers } from "../peppers.ts";
import { DEMO_TRUSTED_PROXIES } from "../proxies.ts";
import { FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, feedPage } from "../resources/feed.ts";
import type { ProjectStatus } from "../resources/project.ts";
import type { CursorPaginationQuery, OffsetPaginationQuery } from "../../safe_response/mod.ts";
import {
  archiveProject,
  findProject,
  LEGACY_DEPRECATION,
  listProjects,
  PROJECT_NOT_FOUND_TYPE,
  PROJECTS_DEFAULT_LIMIT,
  PROJECTS_MAX_LIMIT,
} from "../resources/projects.ts";
import { ProjectsStore } from "../resources/projects.store.ts";
import { whoAmI } from "../resources/whoami.ts";
import { DEMO_API_VERSION, PROBLEM_BASE_URL } from "../safe_response_options.ts";
import { jsonBody, oneOf, queryOf } from "./input.ts";
import { RateLimiter } from "./rate_limit.ts";

/** What the Fetch demo is built from. */
export interface FetchDemoOptions {
  /** Key storage (in memory or PostgreSQL). */
  storage: ApiKeyStorage;
  /** Peppers by version. */
  peppers: DemoPeppers;
  /** Errors as RFC 9457 problem details. */
  problemDetails: boolean;
  /** The web page's files. */
  pageAssets: PageAssets;
  /** The page's session, filled once the keys are seeded. */
  pageSession: PageSession;
  /** Secret-scanning public keys the partner route trusts (default none). */
  secretScanningKeys?: readonly SecretScanningPublicKey[];
  /** Limits of the public leak-report route (default `LEAK_REPORT_LIMITS`). */
  leakReportLimits?: LeakReportLimits;
}

/** The demo's handler (give it `Deno.serve`'s info) and its key service. */
export interface FetchDemoApp {
  /** Answers every request. */
  handler: (request: Request, info: unknown) => Promise<Response>;
  /** The key service (to seed the demo keys; `close()` it on shutdown). */
  service: ApiKeysService;
}

/** A route handler: the request, its response context, the path's parameters, the server's info. */
type Handler = (
  request: Request,
  context: SafeContext,
  params: Record<string, string>,
  info: unknown,
) => unknown;

interface Route {
  method: string;
  pattern: URLPattern;
  run: (request: Request, info: unknown, params: Record<string, string>) => Promise<Response>;
}

const PAGE_HEADERS = { "Cache-Control": "no-store" };

/** The path of a route that no route matches, as Nest's router says it. */
class RouteNotFound extends Error {
  constructor(method: string, path: string) {
    super(`Cannot ${method} ${path}`);
  }
  getStatus(): number {
    return 404;
  }
  getResponse(): { message: string } {
    return { message: this.message };
  }
}

/** Builds the demo's handler. */
export function createFetchDemoApp(options: FetchDemoOptions): FetchDemoApp {
  const service = new ApiKeysService({
    peppers: options.peppers,
    storage: options.storage,
    limiter: createDemoKeyLimiter(),
    usage: DEMO_USAGE,
  });
  const safe = createSafeFetch({
    requestId: true,
    responseTime: true,
    rateLimit: { standard: true },
    responseHeaders: getRateLimitHeaders,
    problemDetails: options.problemDetails ? { baseUrl: PROBLEM_BASE_URL } : false,
    errorCatalog: DemoErrors,
    version: DEMO_API_VERSION,
  });
  // As the Nest demo's framework trust does: X-Forwarded-For is honoured only from the loopback
  // proxy; without it the connection's peer is the client.
  const behindProxy = trustedProxyClientIp({ trustedProxies: [...DEMO_TRUSTED_PROXIES] });
  const clientIp = (request: Request, info: unknown) =>
    request.headers.has("x-forwarded-for") ? behindProxy(request, info) : peerAddress(info);
  const apiKeys = createApiKeyAuthorizer(service, { clientIp, onError: safe.errorResponse });
  const limiter = new RateLimiter();
  const store = new ProjectsStore();
  const routes: Route[] = [];

  /** A key-checked, rate-limited, enveloped route. */
  const route = (
    method: string,
    path: string,
    requirements: ApiKeyRequirements,
    settings: SafeRouteOptions & { limit?: number },
    handler: Handler,
  ) => {
    const { limit = DEFAULT_RATE_LIMIT, ...routeOptions } = settings;
    const name = `${method} ${path}`;
    const wrapped = safe.route(
      { route: name, ...routeOptions },
      (request, context, info: unknown, params: Record<string, string>) => {
        limiter.hit(`key:${getApiKeyContext(request)!.keyId}:${name}`, limit, context);
        return handler(request, context, params, info);
      },
    );
    routes.push({
      method,
      pattern: new URLPattern({ pathname: path }),
      run: apiKeys.require(requirements).protect(wrapped),
    });
  };
  /** The page's files: sent as they are (`body` read at each request). */
  const file = (path: string, type: string, body: () => string) =>
    routes.push({
      method: "GET",
      pattern: new URLPattern({ pathname: path }),
      run: () =>
        Promise.resolve(
          new Response(body(), { headers: { ...PAGE_HEADERS, "Content-Type": type } }),
        ),
    });
  const apiKeyOf = (request: Request): ApiKeyContext => getApiKeyContext(request)!;
  const scope = (resource: string, level: "read" | "write"): ApiKeyRequirements => ({
    requiredScope: { resource, level },
  });
  const liveWrite = { ...scope("projects", "write"), requiredEnvironment: "live" as const };

  const { html, script, client, elements } = options.pageAssets;
  const javascript = "text/javascript; charset=utf-8";
  file("/", "text/html; charset=utf-8", () => html);
  file("/page.js", javascript, () => script);
  file("/client.js", javascript, () => client);
  file("/elements.js", javascript, () => elements);
  routes.push({
    method: "GET",
    pattern: new URLPattern({ pathname: PAGE_SESSION_PATH }),
    run: (request) => {
      const { headers } = request;
      const served = pageSessionServes(
        options.pageSession,
        headers.get("host"),
        headers.get("origin"),
      );
      return Promise.resolve(
        new Response(
          served
            ? pageSessionBody(options.pageSession)
            : JSON.stringify({ error: PAGE_SESSION_REFUSAL }),
          {
            status: served ? 200 : 403,
            headers: { ...PAGE_HEADERS, "Content-Type": "application/json" },
          },
        ),
      );
    },
  });

  // The leaked-key routes read the raw body themselves and sit outside the key check; the public
  // one is limited per client and globally first.
  const leaks = createDemoLeakHandlers(service, options.secretScanningKeys ?? []);
  const reportLimiter = createLeakReportLimiter(options.leakReportLimits);
  const report = createLeakReportFetchHandler(leaks.report);
  const leakRoute = (path: string, run: Route["run"]) =>
    routes.push({ method: "POST", pattern: new URLPattern({ pathname: path }), run });
  leakRoute(
    LEAK_ROUTES.report,
    safe.route(
      { route: `POST ${LEAK_ROUTES.report}`, rawResponse: true },
      async (request, context, info: unknown) => {
        const refusal = await reportLimiter.admit(clientIp(request, info));
        if (refusal === undefined) return report(request);
        for (const [name, value] of Object.entries(refusal)) context.headers.set(name, value);
        throw new DemoHttpError(429, LEAK_REPORT_REFUSAL);
      },
    ),
  );
  leakRoute(LEAK_ROUTES.partner, createLeakReportFetchHandler(leaks.partner));

  route(
    "GET",
    "/api/projects",
    scope("projects", "read"),
    {
      paginated: {
        maxLimit: PROJECTS_MAX_LIMIT,
        defaultLimit: PROJECTS_DEFAULT_LIMIT,
        links: true,
      },
      sortMeta: true,
      filterMeta: true,
      fieldSelection: true,
    },
    (request, context) => {
      const query = queryOf(request);
      const { page, limit } = context.pagination as OffsetPaginationQuery;
      return listProjects(store, apiKeyOf(request).tenantId, {
        page,
        limit,
        sort: oneOf(query("sort"), ["name", "createdAt"] as const),
        order: oneOf(query("order"), ["asc", "desc"] as const),
        status: oneOf(query("status"), ["active", "archived"] as const),
        q: query("q")?.slice(0, 100) || undefined,
      });
    },
  );
  route(
    "GET",
    "/api/projects/:id",
    scope("projects", "read"),
    { problemType: PROJECT_NOT_FOUND_TYPE },
    (request, _context, params) => findProject(store, apiKeyOf(request).tenantId, params.id),
  );
  route(
    "POST",
    "/api/projects/:id/archive",
    liveWrite,
    { successCode: "PROJECT_ARCHIVED" },
    (request, _context, params) => archiveProject(store, apiKeyOf(request).tenantId, params.id),
  );
  route(
    "POST",
    "/api/projects",
    liveWrite,
    { statusCode: 201, successCode: "PROJECT_CREATED", responseMessage: "Project created" },
    async (request) => {
      const body = await jsonBody<{ name: string; status?: string }>(request, {
        name: "string",
        status: "string?",
      });
      const status = oneOf(body.status, ["active", "archived"] as const);
      return store.add(apiKeyOf(request).tenantId, body.name, status ?? "active" as ProjectStatus);
    },
  );
  route(
    "GET",
    "/api/feed",
    scope("feed", "read"),
    {
      cursorPaginated: { maxLimit: FEED_MAX_LIMIT, defaultLimit: FEED_DEFAULT_LIMIT, links: true },
    },
    (_request, context) => feedPage(context.pagination as CursorPaginationQuery),
  );
  route(
    "GET",
    "/api/v0/projects",
    scope("projects", "read"),
    { deprecated: LEGACY_DEPRECATION },
    (request) => store.all(apiKeyOf(request).tenantId).slice(0, 5),
  );
  route("GET", "/api/whoami", {}, {}, (request, _context, _params, info) => {
    return whoAmI(apiKeyOf(request), clientIp(request, info));
  });
  route("GET", "/api/ping", {}, { limit: PING_LIMIT }, () => ({ pong: true }));

  // The library's admin routes, behind the same key check and per-key throttler as every route;
  // like the Nest demo's, they count none of the key's rate limits (`rateLimits: false`).
  const adminRoutes = createApiKeysAdminFetchHandler({
    prefix: DEMO_ADMIN_PREFIX,
    service,
    ...demoAdminOptions(getApiKeyContext),
  });
  const adminKeys = apiKeys.require({ ...scope("keys", "write"), rateLimits: false });
  const admin = adminKeys.protect(safe.route(
    { route: `${DEMO_ADMIN_PREFIX}/*`, rawResponse: true },
    async (request, context) => {
      limiter.hit(`key:${apiKeyOf(request).keyId}:admin`, DEFAULT_RATE_LIMIT, context);
      return (await adminRoutes(request)) ??
        safe.errorResponse(
          new RouteNotFound(request.method, new URL(request.url).pathname),
          request,
        );
    },
  ));

  const handler = (request: Request, info: unknown): Promise<Response> => {
    // HEAD runs the GET route, as Nest's routers do (Deno.serve sends no body to a HEAD)
    const method = request.method === "HEAD" ? "GET" : request.method;
    for (const candidate of routes) {
      if (candidate.method !== method) continue;
      const match = candidate.pattern.exec(request.url);
      if (match === null) continue;
      const params = { ...match.pathname.groups } as Record<string, string>;
      return candidate.run(request, info, params);
    }
    const path = new URL(request.url).pathname;
    if (path.startsWith(`${DEMO_ADMIN_PREFIX}/`)) return admin(request, info);
    return Promise.resolve(
      safe.errorResponse(new RouteNotFound(request.method, path), request),
    );
  };
  return { handler, service };
}
