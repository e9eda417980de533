/** The scenario suite on a Hono app: under `Deno.serve` on Deno, `@hono/node-server` on Node. */
import { honoScenarioApp } from "./hono_app.ts";
import { RUNTIME, serve } from "./_serve.ts";
import { FETCH_CAPABILITIES } from "./spec.ts";
import { scenarioSuite } from "./suite.ts";

scenarioSuite(
  `scenarios: Hono on ${RUNTIME === "deno" ? "Deno" : "Node"}`,
  FETCH_CAPABILITIES,
  async (mode) => {
    const { keys, app } = await honoScenarioApp(mode);
    const server = await serve((request, info) => app.fetch(request, info));
    return { ...server, keys };
  },
);
