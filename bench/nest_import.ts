/**
 * Benchmark 13: the import cost of `./api-keys/nest` (the npm build) inside
 * a Node process that already loaded `reflect-metadata`, `@nestjs/core` and
 * `@nestjs/common`, ÷ that of `@nestjs/throttler` in the same conditions,
 * with `require` (CommonJS) and `import()` (ESM), as the CPU time the
 * import took (`process.cpuUsage()`: steadier than the wall clock on a busy
 * machine; the target's measure) and as wall-clock time. Each sample is a
 * fresh Node process, ours and theirs alternating (the median of them is
 * kept); the row also prints how many library files the import loaded.
 * Target: at most 2× in CPU time, `MISSED` otherwise (printed, never thrown;
 * tests/api_keys/nest/mod_test.ts bounds the file count).
 *
 * Run: `deno run -A bench/nest_import.ts` (or through `deno task bench`;
 * Deno only: it spawns Node on `npm/`, which `bench/run.ts` rebuilds when it
 * is older than the sources).
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fmt, median, printTable, QUICK, verdict } from "./lib/harness.ts";
import { npmBuild } from "../scripts/npm_build/fresh.ts";

const TARGET_RATIO = 2;
const SAMPLES = QUICK ? 5 : 15;
/** The npm build: `npm/` when fresh, else this run's own (never rebuilt in place). */
const NPM = await npmBuild();

/** Node code timing one import after the Nest packages; prints `{ cpu, ms, files }`. */
function probe(mode: "require" | "import", target: string): string {
  const load = mode === "require"
    ? `require(${JSON.stringify(target)})`
    : `await import(${JSON.stringify(target)})`;
  return [
    `const { createRequire } = await import("node:module");`,
    `const require = createRequire(${JSON.stringify(join(NPM, "probe.cjs"))});`,
    `require("reflect-metadata"); require("@nestjs/core"); require("@nestjs/common");`,
    `await import("@nestjs/core"); await import("@nestjs/common");`,
    `const before = new Set(Object.keys(require.cache));`,
    `const cpuStart = process.cpuUsage();`,
    `const start = performance.now();`,
    `${load};`,
    `const ms = performance.now() - start;`,
    `const used = process.cpuUsage(cpuStart);`,
    `const cpu = (used.user + used.system) / 1000;`,
    `const files = Object.keys(require.cache).filter((f) => !before.has(f) && f.startsWith(${
      JSON.stringify(join(NPM, "cjs/"))
    })).length;`,
    `console.log(JSON.stringify({ cpu, ms, files }));`,
  ].join("\n");
}

interface Sample {
  /** CPU time of the import (user + system), in ms. */
  cpu: number;
  /** Wall-clock time of the import, in ms. */
  ms: number;
  /** Library files it loaded (CommonJS only). */
  files: number;
}

function sample(mode: "require" | "import", target: string): Sample {
  const result = spawnSync("node", ["--input-type=module", "-e", probe(mode, target)], {
    cwd: NPM,
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`node failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split("\n").at(-1)!);
}

/** Counts the library files an ESM import loads, with a resolve hook. */
function esmFiles(target: string): number {
  const code = [
    `const { register } = await import("node:module");`,
    `const { MessageChannel } = await import("node:worker_threads");`,
    `await import("reflect-metadata"); await import("@nestjs/core"); await import("@nestjs/common");`,
    `const seen = new Set();`,
    `const { port1, port2 } = new MessageChannel();`,
    `port1.on("message", (url) => seen.add(url)); port1.unref();`,
    `register(${
      JSON.stringify(
        `data:text/javascript,${
          encodeURIComponent(
            `let port; export function initialize(d) { port = d.port; } export async function resolve(s, c, n) { const r = await n(s, c); if (r.url.includes(${
              JSON.stringify(`${NPM}/esm/`)
            })) port.postMessage(r.url); return r; }`,
          )
        }`,
      )
    }, { data: { port: port2 }, transferList: [port2] });`,
    `await import(${JSON.stringify(target)});`,
    `await new Promise((r) => setTimeout(r, 50));`,
    `console.log(seen.size);`,
  ].join("\n");
  const result = spawnSync("node", ["--input-type=module", "-e", code], {
    cwd: NPM,
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`node failed: ${result.stderr}`);
  return Number(result.stdout.trim().split("\n").at(-1));
}

const rows: string[][] = [];
for (const mode of ["require", "import"] as const) {
  const ours = mode === "require"
    ? join(NPM, "cjs/api_keys/nest/mod.js")
    : new URL(`file://${join(NPM, "esm/api_keys/nest/mod.js")}`).href;
  const theirs = "@nestjs/throttler";
  const oursSamples: Sample[] = [];
  const theirsSamples: Sample[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    // Alternating (and swapping who goes first) so a busy spell hits both alike.
    if (i % 2 === 0) {
      oursSamples.push(sample(mode, ours));
      theirsSamples.push(sample(mode, theirs));
    } else {
      theirsSamples.push(sample(mode, theirs));
      oursSamples.push(sample(mode, ours));
    }
  }
  const files = mode === "import" ? esmFiles(ours) : oursSamples[0].files;
  const load = mode === "require" ? "require()" : "import()";
  for (const measure of ["cpu", "ms"] as const) {
    const oursMedian = median(oursSamples.map((s) => s[measure]));
    const theirsMedian = median(theirsSamples.map((s) => s[measure]));
    const ratio = oursMedian / theirsMedian;
    rows.push([
      load,
      measure === "cpu" ? "CPU time" : "wall clock",
      String(files),
      fmt(oursMedian),
      fmt(theirsMedian),
      `${fmt(ratio)}×`,
      // The target is on CPU time; the wall clock is shown for reference.
      measure === "cpu" ? verdict(ratio <= TARGET_RATIO) : "(info)",
    ]);
  }
}
printTable(
  `./api-keys/nest import cost in a Nest app (Node, npm build; median of ${SAMPLES} fresh processes, alternating), target ≤ 2× @nestjs/throttler in CPU time`,
  [
    "load",
    "measure",
    "library files",
    "./api-keys/nest ms",
    "@nestjs/throttler ms",
    "ratio",
    "target",
  ],
  rows,
);
