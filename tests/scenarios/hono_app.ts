/**
 * The scenario app on Hono (from npm): the routes of `fetch_routes.ts`
 * registered on a `Hono` app, Hono's router and its `notFound`; the server's
 * info is Hono's `c.env`.
 *
 * @module
 */
import { Hono } from "hono";
import { buildFetchScenarioApp } from "./fetch_routes.ts";
import { ROUTES, type ScenarioKeys, type ScenarioMode } from "./spec.ts";

/** The Hono app of `mode` and its keys. */
export async function honoScenarioApp(
  mode: ScenarioMode,
): Promise<{ keys: ScenarioKeys; app: Hono }> {
  const scenario = await buildFetchScenarioApp(mode);
  const app = new Hono();
  for (const [name, spec] of Object.entries(ROUTES)) {
    const handler = scenario.routes[name as keyof typeof ROUTES];
    app.on(spec.method, spec.path, (c) => handler(c.req.raw, c.env, c.req.param()));
  }
  app.notFound((c) => scenario.notFound(c.req.raw));
  return { keys: scenario.keys, app };
}
