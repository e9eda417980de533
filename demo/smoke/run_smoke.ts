/**
 * `--smoke`: starts the demo on an ephemeral port (plus a second instance
 * with problem details on), runs the tour, prints each step, and returns the
 * exit code: 0 when every answer was the expected one.
 *
 * @module
 */
import type { DemoAdapter } from "../cli.ts";
import type { DemoSigner } from "../leaks/test_signer.ts";
import { loadPageAssets, type PageAssets } from "../page_assets.ts";
import type { DemoPeppers } from "../peppers.ts";
import { startDemoServer } from "../server.ts";
import type { DemoKeys } from "../seed.ts";
import { runTour, type TourFeatures } from "./tour.ts";

/** How the smoke run starts its servers. */
export interface SmokeOptions {
  /** Interface to listen on. */
  host: string;
  /** Port of the error-envelope server (0: a free one); the problem-details one takes a free one. */
  port?: number;
  /** HTTP platform. */
  adapter: DemoAdapter;
  /** Peppers by version. */
  peppers: DemoPeppers;
  /** Where lines go (default `console.log`). */
  log?: (line: string) => void;
}

/** A demo server the tour runs against. */
export interface SmokeServer {
  /** `http://host:port`. */
  url: string;
  /** Its seeded keys. */
  keys: DemoKeys | undefined;
  /** The signer its partner route trusts. */
  signer: DemoSigner;
  /** Stops it. */
  close(): Promise<void>;
}

/**
 * Starts an error-envelope and a problem-details server with `start`, runs
 * the tour (`features`) against them, closes them; resolves to the exit code.
 * `what` names the stack in the first line.
 */
export async function runSmokeTour(
  start: (problemDetails: boolean) => Promise<SmokeServer>,
  what: string,
  log: (line: string) => void,
  features?: TourFeatures,
): Promise<number> {
  const servers: SmokeServer[] = [];
  try {
    const envelope = await start(false);
    servers.push(envelope);
    const problem = await start(true);
    servers.push(problem);
    log(
      `smoke tour: ${envelope.url} (error envelope), ${problem.url} (problem details), ${what}`,
    );
    const summary = await runTour(
      { url: envelope.url, keys: envelope.keys!, signer: envelope.signer },
      { url: problem.url, keys: problem.keys! },
      log,
      features,
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

/** Runs the smoke tour; resolves to the process exit code. */
export function runSmoke(options: SmokeOptions): Promise<number> {
  const log = options.log ?? ((line: string) => console.log(line));
  let assets: Promise<PageAssets> | undefined;
  return runSmokeTour(
    async (problemDetails) =>
      await startDemoServer({
        host: options.host,
        adapter: options.adapter,
        peppers: options.peppers,
        port: problemDetails ? 0 : options.port ?? 0,
        seed: true,
        pageAssets: await (assets ??= loadPageAssets()),
        problemDetails,
        // Its key lifecycle lines (the seeded key's expiry notice, the waiting rotation) join the tour's.
        log: problemDetails ? undefined : (line) => log(`[keys] ${line}`),
      }),
    `adapter ${options.adapter}`,
    log,
  );
}
