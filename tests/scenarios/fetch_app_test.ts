/**
 * The scenario suite on the plain Fetch handler: `Deno.serve` on Deno, and
 * on Node (the npm build's run) the same handler under `@hono/node-server`.
 */
import { fetchScenarioApp } from "./fetch_app.ts";
import { RUNTIME, serve } from "./_serve.ts";
import { FETCH_CAPABILITIES } from "./spec.ts";
import { scenarioSuite } from "./suite.ts";

scenarioSuite(
  `scenarios: Fetch handler on ${RUNTIME === "deno" ? "Deno.serve" : "Node"}`,
  FETCH_CAPABILITIES,
  async (mode) => {
    const { keys, handler } = await fetchScenarioApp(mode);
    const server = await serve(handler);
    return { ...server, keys };
  },
);
