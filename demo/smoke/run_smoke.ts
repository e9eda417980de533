/**
 * `--smoke`: starts the demo on an ephemeral port (plus a second instance
 * with problem details on), runs the tour, prints each step, and returns the
 * exit code: 0 when every answer was the expected one.
 *
 * @module
 */
import type { DemoAdapter } from "../cli.ts";
import { loadPageAssets } from "../page_assets.ts";
import type { DemoPeppers } from "../peppers.ts";
import { type DemoServer, startDemoServer } from "../server.ts";
import { runTour } from "./tour.ts";

/** How the smoke run starts its servers. */
export interface SmokeOptions {
  /** Interface to listen on. */
  host: string;
  /** HTTP platform. */
  adapter: DemoAdapter;
  /** Peppers by version. */
  peppers: DemoPeppers;
  /** Where lines go (default `console.log`). */
  log?: (line: string) => void;
}

/** Runs the smoke tour; resolves to the process exit code. */
export async function runSmoke(options: SmokeOptions): Promise<number> {
  const log = options.log ?? ((line: string) => console.log(line));
  const servers: DemoServer[] = [];
  try {
    const pageAssets = await loadPageAssets();
    const common = {
      host: options.host,
      adapter: options.adapter,
      peppers: options.peppers,
      port: 0,
      seed: true,
      pageAssets,
    };
    // Its key lifecycle lines (the seeded key's expiry notice, the waiting rotation) join the tour's.
    const envelope = await startDemoServer({ ...common, log: (line) => log(`keys: ${line}`) });
    servers.push(envelope);
    const problem = await startDemoServer({ ...common, problemDetails: true });
    servers.push(problem);
    log(
      `smoke tour: ${envelope.url} (error envelope), ${problem.url} (problem details), ` +
        `adapter ${options.adapter}`,
    );
    const summary = await runTour(
      { url: envelope.url, keys: envelope.keys!, signer: envelope.signer },
      { url: problem.url, keys: problem.keys! },
      log,
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
