/**
 * The scenario app's routes over the Fetch bindings, shared by the plain
 * `Deno.serve` router (`fetch_app.ts`) and the Hono app (`hono_app.ts`):
 * each route is `./api-keys/fetch`'s `protect` (when it needs a key) around
 * `./safe-response/fetch`'s `route`, configured with the plain options of
 * `spec.ts`. Handlers get `(request, context, info, params)`.
 *
 * @module
 */
import {
  ApiKeysService,
  createApiKeyAuthorizer,
  createSafeFetch,
  defineErrors,
  generateKey,
  getApiKeyContext,
  InMemoryApiKeyStorage,
  SafeException,
} from "./_lib.ts";
import {
  BOOM_SECRET,
  CATALOG,
  feedPage,
  findItem,
  limitedHeaders,
  listItems,
  PROFILE,
  type QueryReader,
  ROUTES,
  safeResponseOptions,
  SCENARIO_PEPPER,
  type ScenarioKeys,
  type ScenarioMode,
  seedScenarioKeys,
} from "./spec.ts";

/** Path parameters a router found (`:id`). */
export type Params = Record<string, string>;

/** A scenario route: the request, the server's info, the path parameters. */
export type ScenarioHandler = (
  request: Request,
  info: unknown,
  params: Params,
) => Promise<Response>;

/** The Fetch scenario app of one mode. */
export interface FetchScenarioApp {
  /** The seeded keys. */
  keys: ScenarioKeys;
  /** Handlers by route name of `ROUTES`. */
  routes: Record<keyof typeof ROUTES, ScenarioHandler>;
  /** The answer to a path no route matches. */
  notFound(request: Request): Response;
}

/** What Nest's router throws for an unknown route, in the HTTP-exception shape the core reads. */
class RouteNotFound extends Error {
  constructor(readonly request: Request) {
    super(`Cannot ${request.method} ${new URL(request.url).pathname}`);
  }
  getStatus(): number {
    return 404;
  }
  getResponse(): { message: string } {
    return { message: this.message };
  }
}

const queryOf = (request: Request): QueryReader => {
  const params = new URL(request.url).searchParams;
  return (name) => params.get(name) ?? undefined;
};

/** Builds the routes of `mode` over a fresh in-memory key service. */
export async function buildFetchScenarioApp(mode: ScenarioMode): Promise<FetchScenarioApp> {
  const service = new ApiKeysService({
    peppers: { 1: SCENARIO_PEPPER },
    storage: new InMemoryApiKeyStorage(),
  });
  const keys = await seedScenarioKeys(service, generateKey({ environment: "live" }).raw);
  const safe = createSafeFetch({
    ...safeResponseOptions(mode),
    errorCatalog: defineErrors(CATALOG),
    logger: { warn: () => {}, error: () => {} },
  });
  const apiKeys = createApiKeyAuthorizer(service, { onError: safe.errorResponse });

  /** `protect` around `route` when the route needs a key. */
  const define = (
    name: keyof typeof ROUTES,
    handler: (request: Request, context: { headers: Headers }, params: Params) => unknown,
  ): ScenarioHandler => {
    const spec = ROUTES[name];
    const wrapped = safe.route(
      { route: name, ...spec.options },
      (request, context, _info: unknown, params: Params) => handler(request, context, params),
    );
    if (!("keys" in spec)) return wrapped;
    return apiKeys.require(spec.keys).protect(wrapped);
  };

  const routes: FetchScenarioApp["routes"] = {
    plain: define("plain", () => ({ hello: "world" })),
    items: define("items", (request) => listItems(queryOf(request))),
    item: define("item", (_request, _context, params) => {
      const item = findItem(params.id);
      if (item === undefined) {
        throw new SafeException("ITEM_NOT_FOUND", { details: { id: params.id } });
      }
      return item;
    }),
    create: define("create", async (request) => {
      const body = await request.json() as { name?: unknown };
      return { id: "it_new", name: body.name };
    }),
    feed: define("feed", (request) => feedPage(queryOf(request))),
    legacy: define("legacy", () => findItem("it_01")),
    boom: define("boom", () => {
      throw new Error(BOOM_SECRET);
    }),
    raw: define("raw", () => ({ raw: true })),
    limited: define("limited", (request, context) => {
      const headers = limitedHeaders(queryOf(request));
      for (const [name, value] of headers) context.headers.set(name, value);
      if (headers.some(([name]) => name === "Retry-After")) throw new SafeException("SLOW_DOWN");
      return { ok: true };
    }),
    profile: define("profile", () => PROFILE),
    unselected: define("unselected", () => PROFILE),
    whoami: define("whoami", (request) => {
      const apiKey = getApiKeyContext(request)!;
      return { tenantId: apiKey.tenantId, environment: apiKey.environment, scopes: apiKey.scopes };
    }),
  };
  return {
    keys,
    routes,
    notFound: (request) => safe.errorResponse(new RouteNotFound(request), request),
  };
}
