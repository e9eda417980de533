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
import { USAGE } from "./cli.ts";
import { runDemoCli } from "./run_cli.ts";
import { startDemoServer } from "./server.ts";
import { runSmoke } from "./smoke/run_smoke.ts";

if (import.meta.main) {
  await runDemoCli(process.argv.slice(2), {
    name: "demo",
    usage: USAGE,
    adapterLabel: (options) => options.adapter,
    openapi: true,
    start: (options) =>
      startDemoServer({ ...options, log: (line) => console.log(`[keys] ${line}`) }),
    smoke: runSmoke,
  });
}
