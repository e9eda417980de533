/**
 * Benchmark 3: HTTP on Express and Fastify, loopback, each variant of
 * `bench/http/apps.ts` in its own server process, loaded in alternating
 * rounds by the Node load generator (autocannon, 16 connections). Reports
 * req/s, p50/p99 latency and the server's CPU µs per request, each as the
 * median of the rounds with its spread, and the ratios against the bare app
 * and against each variant's floor.
 *
 * Run: `deno run -A bench/http.ts [--quick] [--platform express|fastify]`.
 *
 * @module
 */
import process from "node:process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_PATH, needsKey, type Variant, VARIANTS } from "./http/apps.ts";
import { fmt, median, printTable, QUICK, runtimeName, spreadPct } from "./lib/harness.ts";
import { type BenchServer, measure } from "./lib/servers.ts";
import { startServer } from "./lib/servers.ts";

const ROUNDS = QUICK ? 2 : 4;
const SECONDS = QUICK ? 1 : 1.2;
const WARM_SECONDS = 0.5;
const PATH = BENCH_PATH;

/** Each variant's floor: the same app without the part under test. */
const FLOOR: Partial<Record<Variant, Variant>> = {
  "noop-interceptor": "bare",
  envelope: "noop-interceptor",
  floor: "bare",
  "envelope-all": "floor",
  "noop-guard": "bare",
  "noop-guard+interceptor": "noop-guard",
  "guard-cached": "noop-guard",
  "guard-uncached": "noop-guard",
  "guard+envelope": "noop-guard+interceptor",
};

interface Sample {
  rps: number;
  mean: number;
  p50: number;
  p99: number;
  cpu: number;
}

async function runPlatform(platform: string, dir: string) {
  const servers = new Map<Variant, BenchServer>();
  const keyFiles = new Map<Variant, string>();
  await Promise.all(VARIANTS.map(async (variant) => {
    const extra: string[] = [];
    if (needsKey(variant)) {
      const file = join(dir, `${platform}-${variant}.keys`);
      keyFiles.set(variant, file);
      extra.push("--keys", "1", "--keys-file", file);
    }
    servers.set(variant, await startServer(platform, variant, extra));
  }));
  const samples = new Map<Variant, Sample[]>(VARIANTS.map((v) => [v, []]));
  const run = async (variant: Variant, seconds: number) => {
    const keysFile = keyFiles.get(variant);
    const r = await measure(servers.get(variant)!, { duration: seconds, keysFile }, PATH);
    if (r.bad > 0) throw new Error(`${platform}/${variant}: ${r.bad} failed requests`);
    return r;
  };
  try {
    for (const variant of VARIANTS) await run(variant, WARM_SECONDS);
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < VARIANTS.length; i++) {
        const variant = VARIANTS[(i + round * 3) % VARIANTS.length];
        const r = await run(variant, SECONDS);
        samples.get(variant)!.push({
          rps: r.rps,
          mean: r.mean,
          p50: r.p50,
          p99: r.p99,
          cpu: r.cpuUsPerRequest,
        });
      }
    }
  } finally {
    for (const server of servers.values()) await server.close();
  }
  const med = (variant: Variant, key: keyof Sample) =>
    median(samples.get(variant)!.map((s) => s[key]));
  const rows = VARIANTS.map((variant) => {
    const s = samples.get(variant)!;
    const floor = FLOOR[variant];
    // Median over rounds of the ratio within each round (both measured in the same round).
    const perRound = (other: Variant, key: keyof Sample) =>
      median(s.map((x, round) => x[key] / samples.get(other)![round][key]));
    const ratio = (other: Variant | undefined) =>
      other === undefined ? ["", ""] : [fmt(perRound(other, "rps")), fmt(perRound(other, "cpu"))];
    return [
      variant,
      fmt(med(variant, "rps"), 0),
      `±${fmt(spreadPct(s.map((x) => x.rps)), 1)}%`,
      `${fmt(med(variant, "mean"))} / ${fmt(med(variant, "p50"), 0)} / ${
        fmt(med(variant, "p99"), 0)
      }`,
      fmt(med(variant, "cpu"), 1),
      `±${fmt(spreadPct(s.map((x) => x.cpu)), 1)}%`,
      ...ratio(variant === "bare" ? undefined : "bare"),
      floor ?? "",
      ...ratio(floor),
    ];
  });
  printTable(
    `Benchmark 3 — HTTP, ${platform}, server on ${runtimeName()}: medians of ${ROUNDS} ` +
      `alternating rounds of ${SECONDS} s, 16 connections, GET ${PATH}` + (QUICK ? " (quick)" : ""),
    [
      "variant",
      "req/s",
      "spread",
      "mean/p50/p99 ms",
      "CPU µs/req",
      "spread",
      "req/s vs bare",
      "CPU vs bare",
      "floor",
      "req/s vs floor",
      "CPU vs floor",
    ],
    rows,
  );
}

const began = performance.now();
const only = process.argv.indexOf("--platform");
const platforms = only === -1 ? ["express", "fastify"] : [process.argv[only + 1]];
const dir = mkdtempSync(join(tmpdir(), "saferoute-bench-"));
try {
  for (const platform of platforms) await runPlatform(platform, dir);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  "\nspread = (max - min) / median over the rounds; ratios are medians of the per-round ratios. " +
    "Loopback with the load generator on the same cores: treat differences within the spread as noise.",
);
console.log(`finished in ${fmt((performance.now() - began) / 1000, 1)} s`);
