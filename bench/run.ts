/**
 * `deno task bench`: prints every benchmark table, first on Deno against the
 * sources, then on Node against the npm build (`npm/` when fresh, else a build
 * of this run's own: scripts/npm_build/fresh.ts; the scripts are bundled by
 * `bench/node_build.ts`).
 *
 * ```sh
 * deno task bench                  # everything, about 5-6 minutes per runtime
 * deno task bench --quick          # smoke run, one to two minutes per runtime
 * deno task bench --deno-only      # or --node-only
 * deno task bench --only core,http # any of core, in_process, http, memory, fetch, shared_storage,
 *                                  # expiry, leaks, rate_limits, rate_limits_peer, unknown_prefix,
 *                                  # element_size, telemetry, nest_import, audit
 * ```
 *
 * `shared_storage` runs on Deno only and needs `DATABASE_URL` (it says so and
 * skips otherwise); `rate_limits` and `rate_limits_peer` (beside `rate-limiter-flexible`) run
 * on Deno only and use `DATABASE_URL` and `REDIS_URL`.
 *
 * Benchmarks never fail the test suite: this script is not part of
 * `deno task test`, and a missed target is printed, not thrown.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { buildNodeBench, ROOT } from "./node_build.ts";
import { npmBuild } from "../scripts/npm_build/fresh.ts";

const SCRIPTS = [
  "core",
  "in_process",
  "http",
  "memory",
  "fetch",
  "shared_storage",
  "expiry",
  "leaks",
  "rate_limits",
  "rate_limits_peer",
  "unknown_prefix",
  "element_size",
  "telemetry",
  "nest_import",
  "audit",
];
/**
 * Deno-only scripts: `fetch` (the Fetch bindings against a bare `Deno.serve`),
 * `rate_limits` and `rate_limits_peer` (they open the stores from the tests' helpers),
 * `shared_storage` (it imports the generated Prisma Client, TypeScript),
 * `element_size` (a bundle's size, the same on both runtimes), `telemetry`
 * (the OpenTelemetry SDK is a test dependency, not bundled for Node) and
 * `nest_import` (it spawns Node processes on `npm/` itself), `audit` (the
 * generated Prisma Client).
 */
const DENO_ONLY = new Set([
  "audit",
  "fetch",
  "shared_storage",
  "rate_limits",
  "rate_limits_peer",
  "element_size",
  "telemetry",
  "nest_import",
]);
const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const onlyIndex = argv.indexOf("--only");
const only = onlyIndex === -1 ? SCRIPTS : argv[onlyIndex + 1].split(",");
const runtimes = argv.includes("--deno-only")
  ? ["deno"]
  : argv.includes("--node-only")
  ? ["node"]
  : ["deno", "node"];
const extra = quick ? ["--quick"] : [];

function capture(command: string, args: string[]): string {
  const result = spawnSync(command, args, { encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim() : "unavailable";
}

function run(command: string, args: string[], env?: Record<string, string>): boolean {
  const result = spawnSync(command, args, {
    stdio: "inherit",
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  return result.status === 0;
}

const began = performance.now();
const nodeVersion = capture("node", ["--version"]);
const lscpuModel = capture("sh", ["-c", "lscpu | sed -n 's/^Model name: *//p' | head -1"]);
console.log("saferoute api-kit benchmarks" + (quick ? " (quick)" : ""));
console.log(
  `machine: ${capture("nproc", [])} cores (nproc), ${lscpuModel || cpus()[0]?.model}, ` +
    `${
      (totalmem() / 1024 ** 3).toFixed(1)
    } GiB; Deno ${Deno.version.deno} (V8 ${Deno.version.v8}), ` +
    `Node ${nodeVersion}`,
);
const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");
console.log(`load average at start (1/5/15 min): ${load()}`);
const failures: string[] = [];
/** This run's Node bundles (`bench/node_build.ts`): removed at the end, two runs at once never share them. */
let nodeOut: string | undefined;
try {
  for (const runtime of runtimes) {
    console.log(
      `\n======== ${
        runtime === "deno"
          ? `Deno ${Deno.version.deno}, sources`
          : `Node ${nodeVersion}, npm/esm build`
      } ========`,
    );
    /** This runtime's bundles: on Node, the directory of this run's own. */
    let bundles = "";
    if (runtime === "node") {
      if (nodeVersion === "unavailable") {
        console.log("node is not on PATH: Node tables skipped");
        continue;
      }
      bundles = nodeOut = await buildNodeBench(await npmBuild());
    }
    for (const script of SCRIPTS.filter((s) => only.includes(s))) {
      if (runtime === "node" && DENO_ONLY.has(script)) {
        console.log(`\n${script}: Deno only`);
        continue;
      }
      const ok = runtime === "deno"
        ? run(
          Deno.execPath(),
          ["run", "-A", join(ROOT, `bench/${script}.ts`), ...extra],
          // nest_import runs Node on the npm build: this run's, not one more of its own.
          script === "nest_import" ? { API_KIT_NPM_OUT: await npmBuild() } : undefined,
        )
        : run("node", [join(bundles, `${script}.mjs`), ...extra], {
          SAFEROUTE_BENCH_DIR: join(ROOT, "bench"),
        });
      if (!ok) failures.push(`${runtime}/${script}`);
    }
  }
} finally {
  if (nodeOut !== undefined) rmSync(nodeOut, { recursive: true, force: true });
}
console.log(`\nload average at end (1/5/15 min): ${load()}`);
console.log(`all benchmarks finished in ${((performance.now() - began) / 1000).toFixed(0)} s`);
if (failures.length > 0) {
  console.log(`scripts that failed to run: ${failures.join(", ")}`);
  process.exitCode = 1;
}
