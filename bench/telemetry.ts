/**
 * Benchmark: what the OpenTelemetry bridge (`./telemetry`) costs. Deno only; times are the main
 * thread's CPU time (on this shared 2-core machine wall time counts other processes' turns).
 *
 * - **Bridge off costs nothing.** The library as shipped, never instrumented, against a baseline
 *   copy of the same sources where every tap read (the `taps.x` the bridge would set) is replaced
 *   by the constant `undefined`: the program without the bridge. One row, a request's hot path
 *   (a cached authorize with a rate-limit check, then a success envelope): both load in this
 *   process and run in {@link OFF_ROUNDS} alternating rounds (ABBA: baseline, shipped, shipped,
 *   baseline); each round gives a ratio shipped / baseline, and the row prints their median, a
 *   95 % confidence interval of it, and the same between two identical baseline copies (A/A, the
 *   noise floor). `MISSED` when the median lies outside ±{@link BOUND_PCT} %.
 * - **Bridge on: added cost per request, verify, check and reply.** A copy of the shipped
 *   sources instrumented on a real SDK (a `MeterProvider` with a reader, a `BasicTracerProvider`
 *   without an exporter) against the bridge off, in the same ABBA rounds: the added µs per
 *   operation (mostly the SDK's own work: attribute sets, histograms, span ids).
 *
 * Run: `deno run -A bench/telemetry.ts [--quick]` (or through `deno task bench`).
 *
 * @module
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import * as shipped from "./lib/telemetry_subjects.ts";
import type { instrumentTelemetry } from "../telemetry/mod.ts";
import {
  batchSize,
  type Case,
  fmt,
  median,
  printTable,
  QUICK,
  runtimeName,
} from "./lib/harness.ts";

/**
 * The bound of the bridge-off row, in percent: the noise floor its A/A measures. Two identical
 * copies of the same code differ by a few % on a request (code placement and the JIT's feedback
 * are per copy; a lone 0.1 µs reply, by up to 30 %), their intervals reaching about ±5 %
 * (BENCHMARKS.md): a difference within ±5 % cannot be told from a copy's own.
 */
const BOUND_PCT = 5;
/** Rounds per comparison and ms per batch (each round runs four batches). */
const TIMING = QUICK ? { rounds: 15, roundMs: 15 } : { rounds: 61, roundMs: 25 };
/** Rounds of the bridge-off row and of its A/A. */
const OFF_ROUNDS = QUICK ? 15 : 151;

class Reader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const ROOT = new URL("../", import.meta.url).pathname;
/** The library's folders a baseline copy holds (what the subjects reach). */
const LIBRARY = ["api_keys", "rate_limits", "safe_response", "client", "telemetry"];
/** The module built from each copy. */
const SUBJECTS = "bench/lib/telemetry_subjects.ts";
/** A tap read: `taps.x`, `s.taps.x`, `this.#s.taps?.x`, `this.#taps.x`. */
const TAP_READ = /(?<![\w#$.])(?:this\.|s\.)?(?:#s\.)?#?taps\??\.[A-Za-z_]\w*/g;

/**
 * A copy of the library under a temporary folder; with `strip`, every tap read replaced by
 * `undefined` (outside `telemetry/`, which sets them). Answers its folder and the number of
 * reads replaced.
 */
function copyLibrary(strip: boolean): { dir: string; replaced: number } {
  // Inside the repository, so deno.json's imports resolve the copy's bare specifiers.
  const dir = mkdtempSync(join(ROOT, "bench/.baseline-"));
  let replaced = 0;
  for (const folder of LIBRARY) cpSync(join(ROOT, folder), join(dir, folder), { recursive: true });
  cpSync(join(ROOT, SUBJECTS), join(dir, SUBJECTS));
  const walk = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const file = join(path, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (file.endsWith(".ts") && !file.startsWith(join(dir, "telemetry/"))) {
        const text = readFileSync(file, "utf8");
        const stripped = text.replace(TAP_READ, () => (replaced++, "undefined"));
        if (stripped !== text) writeFileSync(file, stripped);
      }
    }
  };
  if (strip) { for (const folder of LIBRARY) walk(join(dir, folder)); }
  return { dir, replaced };
}

type Subjects = typeof shipped;
type Built = Awaited<ReturnType<Subjects["build"]>>;

/** The operations of one build: a request's hot path, then a verify, a check and a reply. */
function operations(built: Built, label: string): Case[] {
  return [
    { name: `${label} request`, op: built.request },
    { name: `${label} verify`, op: () => built.service.authorize(built.key) },
    { name: `${label} check`, op: () => built.limiter.check("k", shipped.POLICY) },
    { name: `${label} reply`, op: built.reply, sync: true },
  ];
}
const OPERATIONS = [
  "request (authorize with a check, then reply)",
  "verify (cached authorize)",
  "check (limiter, memory store)",
  "reply (envelope)",
];

/**
 * The calling thread's CPU time in ms (Linux `CLOCK_THREAD_CPUTIME_ID` through FFI): on a loaded
 * machine, wall time counts the time other processes hold the core, CPU time does not. Falls
 * back to `performance.now()` where libc cannot be opened.
 */
function threadClock(): { now: () => number; kind: string } {
  try {
    const libc = Deno.dlopen("libc.so.6", {
      clock_gettime: { parameters: ["i32", "buffer"], result: "i32" },
    });
    const CLOCK_THREAD_CPUTIME_ID = 3;
    const ts = new BigInt64Array(2);
    return {
      now: () => {
        libc.symbols.clock_gettime(CLOCK_THREAD_CPUTIME_ID, ts);
        return Number(ts[0]) * 1e3 + Number(ts[1]) / 1e6;
      },
      kind: "thread CPU time",
    };
  } catch {
    return { now: () => performance.now(), kind: "wall time" };
  }
}
const clock = threadClock();

/** µs per operation of `n` calls of `c` (then one untimed turn of the event loop). */
async function batch(c: Case, n: number): Promise<number> {
  const { op } = c;
  const start = clock.now();
  if (c.sync) { for (let i = 0; i < n; i++) op(); }
  else for (let i = 0; i < n; i++) await op();
  const us = ((clock.now() - start) * 1_000) / n;
  await new Promise((resolve) => setTimeout(resolve, 0));
  return us;
}

/** Calls of `c` per batch of about `TIMING.roundMs` (doubling; also the warm-up). */
const calibrate = (c: Case) =>
  batchSize(async (n) => ((await batch(c, n)) * n) / 1_000, TIMING.roundMs, 64);

/**
 * `b` against `a` in ABBA rounds (a, b, b, a; the same batch size for both): the median of the
 * per-round ratios b / a, a 95 % confidence interval of that median (order statistics
 * n/2 ± 1.96·√n/2, the binomial interval) and each side's median µs per operation.
 */
async function compare(a: Case, b: Case, rounds = TIMING.rounds) {
  const n = Math.min(await calibrate(a), await calibrate(b));
  for (let i = 0; i < 3; i++) await batch(a, n), await batch(b, n);
  const ratios: number[] = [];
  const as: number[] = [];
  const bs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const a1 = await batch(a, n);
    const b1 = await batch(b, n);
    const b2 = await batch(b, n);
    const a2 = await batch(a, n);
    ratios.push((b1 + b2) / (a1 + a2));
    as.push(a1, a2);
    bs.push(b1, b2);
  }
  const sorted = [...ratios].sort((x, y) => x - y);
  const half = Math.ceil((1.96 * Math.sqrt(sorted.length)) / 2);
  const mid = Math.floor(sorted.length / 2);
  return {
    ratio: median(ratios),
    low: sorted[Math.max(0, mid - half)],
    high: sorted[Math.min(sorted.length - 1, mid + half)],
    aUs: median(as),
    bUs: median(bs),
  };
}

const pct = (ratio: number) => `${ratio >= 1 ? "+" : ""}${fmt((ratio - 1) * 100, 1)} %`;

// Two baselines (A/A), and a copy of the shipped sources for the bridge on: its code (and the
// JIT's feedback on it) apart from the bridge-off instance's, as in an app running one or the other.
const copies = [copyLibrary(true), copyLibrary(true), copyLibrary(false)];
try {
  const url = (dir: string, path: string) => pathToFileURL(join(dir, path)).href;
  const [baseA, baseB, onCopy] = await Promise.all(
    copies.map(({ dir }) => import(url(dir, SUBJECTS)) as Promise<Subjects>),
  );
  const bridge = await import(url(copies[2].dir, "telemetry/mod.ts")) as {
    instrumentTelemetry: typeof instrumentTelemetry;
  };
  const baseline = operations(await baseA.build(), "baseline");
  const twin = operations(await baseB.build(), "baseline'");
  const off = operations(await shipped.build(), "off");
  const onBuilt = await onCopy.build();
  bridge.instrumentTelemetry({
    meterProvider: new MeterProvider({ readers: [new Reader()] }),
    tracerProvider: new BasicTracerProvider(),
    service: onBuilt.service,
    limiter: onBuilt.limiter,
    responder: onBuilt.responder,
  });
  const on = operations(onBuilt, "on");

  // Bridge off: the request's hot path (one row: a lone 0.1 µs operation differs by up to 30 %
  // between two identical copies, a whole request by a few %).
  const noise = await compare(baseline[0], twin[0], OFF_ROUNDS);
  const offRow = await compare(baseline[0], off[0], OFF_ROUNDS);
  const within = (x: number) => Math.abs(x - 1) * 100 <= BOUND_PCT;
  const nothing = [[
    OPERATIONS[0],
    fmt(offRow.aUs, 3),
    fmt(offRow.bUs, 3),
    `${pct(offRow.ratio)} [${pct(offRow.low)}, ${pct(offRow.high)}]`,
    `${pct(noise.ratio)} [${pct(noise.low)}, ${pct(noise.high)}]`,
    within(offRow.ratio) ? "ok" : "MISSED",
  ]];
  const added: string[][] = [];
  for (let i = 0; i < OPERATIONS.length; i++) {
    const onRow = await compare(off[i], on[i]);
    added.push([
      OPERATIONS[i],
      fmt(onRow.aUs, 3),
      fmt(onRow.bUs, 3),
      fmt(onRow.bUs - onRow.aUs, 3),
      pct(onRow.ratio),
    ]);
  }
  const copy = copies.slice(0, 2).map((c) => c.replaced).join(", ");
  printTable(
    `Telemetry bridge off costs nothing (${runtimeName()}; ${clock.kind}; the shipped sources ` +
      `never instrumented vs a copy without tap reads (${copy} reads replaced); ${OFF_ROUNDS} ` +
      `ABBA rounds, median of the per-round ratios [95 % CI]; A/A: two identical baseline ` +
      `copies; target: median within ±${BOUND_PCT} %)`,
    ["operation", "baseline µs", "bridge off µs", "off / baseline", "A/A noise", "target"],
    nothing,
  );
  printTable(
    `Telemetry bridge on: added cost (${runtimeName()}; ${clock.kind}; a real SDK, no ` +
      `exporter; µs per operation, median of ${TIMING.rounds} ABBA rounds)`,
    ["operation", "bridge off µs", "bridge on µs", "added µs", "on / off"],
    added,
  );
} finally {
  for (const { dir } of copies) rmSync(dir, { recursive: true, force: true });
}
