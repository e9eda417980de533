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
import { DemoCliError } from "../cli.ts";
import { runDemoCli } from "../run_cli.ts";
import { startFetchDemoServer } from "./server.ts";
import { runFetchSmoke } from "./smoke.ts";

/** Usage text printed by `--help` and after a bad flag. */
export const FETCH_USAGE = `Usage: deno task demo:fetch [options]

The Nest demo's routes and keys on Deno.serve with the Fetch bindings (no OpenAPI, no
ValidationPipe). Options and environment as \`deno task demo\`, without --adapter:
  --port N, --host H, --problem-details, --seed, --smoke, --help
  PORT, DATABASE_URL, API_KEY_PEPPERS`;

if (import.meta.main) {
  await runDemoCli(process.argv.slice(2), {
    name: "demo:fetch",
    usage: FETCH_USAGE,
    checkArgs: (args) => {
      if (args.some((arg) => arg === "--adapter" || arg.startsWith("--adapter="))) {
        throw new DemoCliError("the Fetch demo has no --adapter: it runs on Deno.serve");
      }
    },
    adapterLabel: () => "Deno.serve (Fetch bindings)",
    openapi: false,
    start: startFetchDemoServer,
    smoke: (options) => runFetchSmoke({ host: options.host, peppers: options.peppers }),
  });
}
