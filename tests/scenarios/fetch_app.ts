/**
 * The scenario app as a plain Fetch handler (what `Deno.serve` runs): a
 * small router over `fetch_routes.ts`, no framework.
 *
 * @module
 */
import { buildFetchScenarioApp, type Params, type ScenarioHandler } from "./fetch_routes.ts";
import { ROUTES, type ScenarioKeys, type ScenarioMode } from "./spec.ts";

/** The params of `path` against a route `pattern` (`:name` segments), or `undefined`. */
function match(pattern: string, path: string): Params | undefined {
  const want = pattern.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return undefined;
  const params: Params = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(":")) params[want[i].slice(1)] = decodeURIComponent(got[i]);
    else if (want[i] !== got[i]) return undefined;
  }
  return params;
}

/** The app of `mode`: its handler (give it `Deno.serve`'s info) and keys. */
export async function fetchScenarioApp(
  mode: ScenarioMode,
): Promise<
  { keys: ScenarioKeys; handler: (request: Request, info: unknown) => Promise<Response> }
> {
  const app = await buildFetchScenarioApp(mode);
  const table = Object.entries(ROUTES).map(([name, spec]) => ({
    ...spec,
    handler: app.routes[name as keyof typeof ROUTES] as ScenarioHandler,
  }));
  return {
    keys: app.keys,
    handler: (request, info) => {
      const path = new URL(request.url).pathname;
      for (const route of table) {
        if (route.method !== request.method) continue;
        const params = match(route.path, path);
        if (params !== undefined) return route.handler(request, info, params);
      }
      return Promise.resolve(app.notFound(request));
    },
  };
}
