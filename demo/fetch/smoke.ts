/**
 * `--smoke` of the Fetch demo: starts it on an ephemeral port (plus a second
 * instance with problem details on), runs the Nest demo's tour without its
 * OpenAPI and `ValidationPipe` steps (with its leaked-key steps), prints each
 * step, and returns the exit code: 0 when every answer was the expected one.
 *
 * @module
 */
import { loadPageAssets } from "../page_assets.ts";
import type { DemoPeppers } from "../peppers.ts";
import { runTour } from "../smoke/tour.ts";
import { type FetchDemoServer, startFetchDemoServer } from "./server.ts";

/** Runs the smoke tour; resolves to the process exit code. */
export async function runFetchSmoke(options: {
  host: string;
  peppers: DemoPeppers;
  log?: (line: string) => void;
}): Promise<number> {
  const log = options.log ?? ((line: string) => console.log(line));
  const servers: FetchDemoServer[] = [];
  try {
    const pageAssets = await loadPageAssets();
    const common = { host: options.host, peppers: options.peppers, port: 0, pageAssets };
    const envelope = await startFetchDemoServer(common);
    servers.push(envelope);
    const problem = await startFetchDemoServer({ ...common, problemDetails: true });
    servers.push(problem);
    log(
      `smoke tour: ${envelope.url} (error envelope), ${problem.url} (problem details), ` +
        "Deno.serve with the Fetch bindings",
    );
    const summary = await runTour(
      { url: envelope.url, keys: envelope.keys!, signer: envelope.signer },
      { url: problem.url, keys: problem.keys! },
      log,
      { openapi: false, validationPipe: false },
    );
    log(`smoke tour: ${summary.passed} passed, ${summary.failed} failed`);
    return summary.failed === 0 ? 0 : 1;
  } catch (error) {
    log(`smoke tour: could not run: ${(error as Error).stack ?? error}`);
    return 1;
  } finally {
    for (const server of servers) await server.close().catch(() => {});
  }
}
