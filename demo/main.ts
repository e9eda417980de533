/**
 * The demo server: `deno task demo` (README's `npm start` runs it too).
 *
 * Starts a Nest app using both components on 127.0.0.1:3000 (see
 * `demo/cli.ts` for flags and environment), prints the demo keys once with
 * `curl` lines, and stops cleanly on SIGINT/SIGTERM. `--smoke` runs the
 * scripted tour against itself instead and exits non-zero on any unexpected
 * answer.
 *
 * @module
 */
import "reflect-metadata";
import process from "node:process";
import { formatBanner } from "./banner.ts";
import { DemoCliError, parseDemoArgs, USAGE } from "./cli.ts";
import { loadPeppers } from "./peppers.ts";
import { PortInUseError, startDemoServer } from "./server.ts";
import { runSmoke } from "./smoke/run_smoke.ts";
import { type DemoStorage, openMemoryStorage, openPostgresStorage } from "./storage.ts";

/** Exit code of a bad flag or environment value. */
export const EXIT_USAGE = 2;

/** Exit code when the server cannot start (port taken, database down...). */
export const EXIT_START_FAILED = 1;

async function serve(args: string[]): Promise<number> {
  const env = process.env;
  const options = parseDemoArgs(args, env);
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  const { peppers, source } = loadPeppers(env.API_KEY_PEPPERS, databaseUrl !== undefined);
  if (options.smoke) return await runSmoke({ ...options, peppers });

  const storage: DemoStorage = databaseUrl === undefined
    ? openMemoryStorage()
    : await openPostgresStorage(databaseUrl);
  const server = await startDemoServer({
    ...options,
    peppers,
    storage,
    seed: storage.kind === "memory" || options.seed,
    log: (line) => console.log(`[keys] ${line}`),
  });
  // Listen for signals before the banner: whoever reads it may stop us at once.
  const stopSignal = new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  console.log(formatBanner({
    url: server.url,
    adapter: options.adapter,
    storageKind: server.storageKind,
    problemDetails: options.problemDetails,
    keys: server.keys,
    pepperSource: source,
  }));

  const signal = await stopSignal;
  console.log(`\n${signal}: shutting down...`);
  await server.close();
  console.log("Stopped.");
  return 0;
}

if (import.meta.main) {
  let code: number;
  try {
    code = await serve(process.argv.slice(2));
  } catch (error) {
    if (error instanceof DemoCliError) {
      console.error(`demo: ${error.message}\n\n${USAGE}`);
      code = EXIT_USAGE;
    } else if (error instanceof PortInUseError) {
      console.error(`demo: ${error.message}`);
      code = EXIT_START_FAILED;
    } else {
      console.error("demo: could not start:", error);
      code = EXIT_START_FAILED;
    }
  }
  process.exit(code);
}
