/**
 * Benchmark 4: memory of the guard + envelope app (Express) under 100,000
 * requests cycling through 10,000 distinct API keys. The server reports RSS
 * and V8 heap after a full GC at checkpoints. Two cache bounds, 10,000 (the
 * default: every key fits) and 1,000 (keys keep evicting each other), show
 * that the heap levels off after warm-up and that the cache's share follows
 * its bound, not the number of keys or requests.
 *
 * Run: `deno run -A bench/memory.ts [--quick]`.
 *
 * @module
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_PATH } from "./http/apps.ts";
import { fmt, printTable, QUICK, runtimeName } from "./lib/harness.ts";
import { load, type ServerStats, startServer } from "./lib/servers.ts";

const KEYS = 10_000;
const TOTAL = QUICK ? 30_000 : 100_000;
const CHECKPOINTS = QUICK ? [10_000, 20_000, 30_000] : [20_000, 60_000, 100_000];
const BOUNDS = [10_000, 1_000];

const mb = (bytes: number) => fmt(bytes / 1024 / 1024, 1);

async function run(bound: number, dir: string) {
  const keysFile = join(dir, `keys-${bound}.txt`);
  const server = await startServer("express", "guard+envelope", [
    "--keys",
    String(KEYS),
    "--keys-file",
    keysFile,
    "--cache-max",
    String(bound),
  ]);
  const points: { requests: number; stats: ServerStats }[] = [];
  try {
    points.push({ requests: 0, stats: await server.memory() });
    let sent = 0;
    let failed = 0;
    for (const checkpoint of CHECKPOINTS) {
      const r = await load({
        url: server.url + BENCH_PATH,
        amount: checkpoint - sent,
        connections: 16,
        keysFile,
      });
      failed += r.bad;
      sent = checkpoint;
      points.push({ requests: sent, stats: await server.memory() });
    }
    if (failed > 0) throw new Error(`${failed} failed requests`);
  } finally {
    await server.close();
  }
  return points;
}

const began = performance.now();
const dir = mkdtempSync(join(tmpdir(), "saferoute-mem-"));
const rows: string[][] = [];
try {
  for (const bound of BOUNDS) {
    const points = await run(bound, dir);
    const warm = points[1].stats.heapUsed;
    for (const { requests, stats } of points) {
      rows.push([
        bound.toLocaleString("en"),
        requests.toLocaleString("en"),
        mb(stats.heapUsed),
        mb(stats.heapTotal),
        mb(stats.rss),
        requests > CHECKPOINTS[0] ? `${fmt(((stats.heapUsed - warm) / warm) * 100, 1)}%` : "",
      ]);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
printTable(
  `Benchmark 4 — memory, guard + envelope (Express) on ${runtimeName()}: ${
    TOTAL.toLocaleString("en")
  } requests over ${KEYS.toLocaleString("en")} distinct keys, after a full GC` +
    (QUICK ? " (quick)" : ""),
  ["cache bound", "requests", "heap used MB", "heap total MB", "RSS MB", "heap vs warm-up"],
  rows,
);
console.log(
  "\nwarm-up = the first checkpoint (every key verified at least once). The 10,000-key stored set " +
    "itself is part of every row.",
);
console.log(`finished in ${fmt((performance.now() - began) / 1000, 1)} s`);
