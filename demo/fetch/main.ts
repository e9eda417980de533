/**
 * The Fetch demo: `deno task demo:fetch`. The Nest demo's routes and keys on
 * `Deno.serve`, with `./api-keys/fetch` and `./safe-response/fetch` and no
 * Nest. Flags and environment as `deno task demo` (without `--adapter`);
 * `--smoke` runs the tour against itself and exits non-zero on any
 * unexpected answer.
 *
 * @module
 */
import process from "node:process";
import { formatBanner } from "../banner.ts";
import { DemoCliError, parseDemoArgs } from "../cli.ts";
import { loadPeppers } from "../peppers.ts";
import { type DemoStorage, openMemoryStorage, openPostgresStorage } from "../storage.ts";
import { startFetchDemoServer } from "./server.ts";
import { runFetchSmoke } from "./smoke.ts";

/** Usage text printed by `--help` and after a bad flag. */
export const FETCH_USAGE = `Usage: deno task demo:fetch [options]

The Nest demo's routes and keys on Deno.serve with the Fetch bindings (no OpenAPI, no
ValidationPipe). Options and environment as \`deno task demo\`, without --adapter:
  --port N, --host H, --problem-details, --seed, --smoke, --help
  PORT, DATABASE_URL, API_KEY_PEPPERS`;

async function serve(args: string[]): Promise<number> {
  const env = process.env;
  if (args.some((arg) => arg === "--adapter" || arg.startsWith("--adapter="))) {
    throw new DemoCliError("the Fetch demo has no --adapter: it runs on Deno.serve");
  }
  const options = parseDemoArgs(args, env);
  if (options.help) {
    console.log(FETCH_USAGE);
    return 0;
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  const { peppers, source } = loadPeppers(env.API_KEY_PEPPERS, databaseUrl !== undefined);
  if (options.smoke) return await runFetchSmoke({ host: options.host, peppers });

  const storage: DemoStorage = databaseUrl === undefined
    ? openMemoryStorage()
    : await openPostgresStorage(databaseUrl);
  const server = await startFetchDemoServer({
    ...options,
    peppers,
    storage,
    seed: storage.kind === "memory" || options.seed,
  });
  const stopSignal = new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  console.log(formatBanner({
    url: server.url,
    adapter: "Deno.serve (Fetch bindings)",
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
      console.error(`demo:fetch: ${error.message}\n\n${FETCH_USAGE}`);
      code = 2;
    } else {
      console.error("demo:fetch: could not start:", error);
      code = 1;
    }
  }
  process.exit(code);
}
