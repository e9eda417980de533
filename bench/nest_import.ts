/**
 * Benchmark 13: the import cost of `./api-keys/nest` (the npm build) inside
 * a Node process that already loaded `reflect-metadata`, `@nestjs/core` and
 * `@nestjs/common`, ÷ that of `@nestjs/throttler` in the same conditions,
 * with `require` (CommonJS) and `import()` (ESM). Each sample is a fresh
 * Node process (the median of them is kept); the row also prints how many
 * library files the import loaded. Target: at most 2×, `MISSED` otherwise
 * (printed, never thrown; tests/api_keys/nest/mod_test.ts bounds the file
 * count).
 *
 * Run: `deno run -A bench/nest_import.ts` (or through `deno task bench`;
 * Deno only: it spawns Node on `npm/`, which `bench/run.ts` rebuilds when it
 * is older than the sources).
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fmt, median, printTable, QUICK, verdict } from "./lib/harness.ts";
import { ROOT } from "./node_build.ts";

const TARGET_RATIO = 2;
const SAMPLES = QUICK ? 5 : 15;
const NPM = join(ROOT, "npm");

/** Node code timing one import after the Nest packages; prints `{ ms, files }`. */
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
    `const start = performance.now();`,
    `${load};`,
    `const ms = performance.now() - start;`,
    `const files = Object.keys(require.cache).filter((f) => !before.has(f) && f.includes("/npm/cjs/")).length;`,
    `console.log(JSON.stringify({ ms, files }));`,
  ].join("\n");
}

function sample(mode: "require" | "import", target: string): { ms: number; files: number } {
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
            `let port; export function initialize(d) { port = d.port; } export async function resolve(s, c, n) { const r = await n(s, c); if (r.url.includes("/npm/esm/")) port.postMessage(r.url); return r; }`,
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

if (!existsSync(join(NPM, "esm/api_keys/nest/mod.js"))) {
  throw new Error("npm/ is missing: run `deno task build:npm` first");
}

const rows: string[][] = [];
for (const mode of ["require", "import"] as const) {
  const ours = mode === "require"
    ? join(NPM, "cjs/api_keys/nest/mod.js")
    : new URL(`file://${join(NPM, "esm/api_keys/nest/mod.js")}`).href;
  const theirs = "@nestjs/throttler";
  const oursMs: number[] = [];
  const theirsMs: number[] = [];
  let files = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const a = sample(mode, ours);
    files = a.files;
    oursMs.push(a.ms);
    theirsMs.push(sample(mode, theirs).ms);
  }
  if (mode === "import") files = esmFiles(ours);
  const ratio = median(oursMs) / median(theirsMs);
  rows.push([
    mode === "require" ? "require()" : "import()",
    String(files),
    fmt(median(oursMs)),
    fmt(median(theirsMs)),
    `${fmt(ratio)}×`,
    verdict(ratio <= TARGET_RATIO),
  ]);
}
printTable(
  `./api-keys/nest import cost in a Nest app (Node, npm build; median of ${SAMPLES} fresh processes), target ≤ 2× @nestjs/throttler`,
  ["load", "library files", "./api-keys/nest ms", "@nestjs/throttler ms", "ratio", "target"],
  rows,
);
