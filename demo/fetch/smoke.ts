/**
 * `--smoke` of the Fetch demo: starts it on an ephemeral port (plus a second
 * instance with problem details on), runs the Nest demo's tour without its
 * OpenAPI and `ValidationPipe` steps (with its leaked-key steps), prints each
 * step, and returns the exit code: 0 when every answer was the expected one.
 *
 * @module
 */
import { loadPageAssets, type PageAssets } from "../page_assets.ts";
import type { DemoPeppers } from "../peppers.ts";
import { runSmokeTour } from "../smoke/run_smoke.ts";
import { startFetchDemoServer } from "./server.ts";

/** Runs the smoke tour; resolves to the process exit code. */
export function runFetchSmoke(options: {
  host: string;
  peppers: DemoPeppers;
  log?: (line: string) => void;
}): Promise<number> {
  let assets: Promise<PageAssets> | undefined;
  return runSmokeTour(
    async (problemDetails) =>
      await startFetchDemoServer({
        host: options.host,
        peppers: options.peppers,
        port: 0,
        pageAssets: await (assets ??= loadPageAssets()),
        problemDetails,
      }),
    "Deno.serve with the Fetch bindings",
    options.log ?? ((line: string) => console.log(line)),
    { openapi: false, validationPipe: false },
  );
}
