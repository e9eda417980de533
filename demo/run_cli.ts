/**
 * The command line both demo servers share (`demo/main.ts`, Nest;
 * `demo/fetch/main.ts`, Fetch bindings): flags and environment, peppers,
 * storage, the start banner, shutdown on SIGINT/SIGTERM, and exit codes.
 *
 * @module
 */
import process from "node:process";
import { formatBanner } from "./banner.ts";
import { DemoCliError, type DemoCliOptions, parseDemoArgs } from "./cli.ts";
import type { DemoKeys } from "./seed.ts";
import { type DemoPeppers, loadPeppers } from "./peppers.ts";
import { PortInUseError } from "./server.ts";
import { type DemoStorage, openMemoryStorage, openPostgresStorage } from "./storage.ts";

/** Exit code of a bad flag or environment value. */
export const EXIT_USAGE = 2;

/** Exit code when the server cannot start (port taken, database down...). */
export const EXIT_START_FAILED = 1;

/** A running demo server, as the command line sees it. */
interface RunningDemo {
  url: string;
  storageKind: DemoStorage["kind"];
  keys: DemoKeys | undefined;
  close(): Promise<void>;
}

/** What differs between the two demos. */
export interface DemoCliSpec {
  /** The task name used in messages (`demo`, `demo:fetch`). */
  name: string;
  /** The `--help` text. */
  usage: string;
  /** Throws a `DemoCliError` for flags this demo refuses. */
  checkArgs?: (args: string[]) => void;
  /** The platform named in the banner. */
  adapterLabel: (options: DemoCliOptions) => string;
  /** Whether it serves Swagger UI and the OpenAPI document (named in the banner). */
  openapi: boolean;
  /** Starts the server. */
  start: (
    options: DemoCliOptions & { peppers: DemoPeppers; storage: DemoStorage; seed: boolean },
  ) => Promise<RunningDemo>;
  /** Runs the smoke tour; resolves to the exit code. */
  smoke: (options: DemoCliOptions & { peppers: DemoPeppers }) => Promise<number>;
}

async function serve(args: string[], spec: DemoCliSpec): Promise<number> {
  const env = process.env;
  spec.checkArgs?.(args);
  const options = parseDemoArgs(args, env);
  if (options.help) {
    console.log(spec.usage);
    return 0;
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  const { peppers, source } = loadPeppers(env.API_KEY_PEPPERS, databaseUrl !== undefined);
  if (options.smoke) return await spec.smoke({ ...options, peppers });

  const storage: DemoStorage = databaseUrl === undefined
    ? openMemoryStorage()
    : await openPostgresStorage(databaseUrl);
  const server = await spec.start({
    ...options,
    peppers,
    storage,
    seed: storage.kind === "memory" || options.seed,
  });
  // Listen for signals before the banner: whoever reads it may stop us at once. The listeners
  // stay until the process exits (`runDemoCli`): a terminal's Ctrl+C sends SIGINT twice (to the
  // process group, and forwarded by `deno task` or `npm start`), and a signal with no listener
  // kills us, also between "Stopped." and the exit. A listener gets the signal's name; a repeat
  // resolves nothing.
  let onSignal!: (signal: NodeJS.Signals) => void;
  const stopSignal = new Promise<string>((resolve) => (onSignal = resolve));
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  console.log(formatBanner({
    url: server.url,
    adapter: spec.adapterLabel(options),
    storageKind: server.storageKind,
    problemDetails: options.problemDetails,
    keys: server.keys,
    pepperSource: source,
    openapi: spec.openapi,
  }));

  const signal = await stopSignal;
  console.log(`\n${signal}: shutting down...`);
  await server.close();
  console.log("Stopped.");
  return 0;
}

/** Runs a demo's command line with `args` and exits the process with its code. */
export async function runDemoCli(args: string[], spec: DemoCliSpec): Promise<never> {
  let code: number;
  try {
    code = await serve(args, spec);
  } catch (error) {
    if (error instanceof DemoCliError) {
      console.error(`${spec.name}: ${error.message}\n\n${spec.usage}`);
      code = EXIT_USAGE;
    } else if (error instanceof PortInUseError) {
      console.error(`${spec.name}: ${error.message}`);
      code = EXIT_START_FAILED;
    } else {
      console.error(`${spec.name}: could not start:`, error);
      code = EXIT_START_FAILED;
    }
  }
  process.exit(code);
}
