/**
 * Timing and printing helpers shared by the benchmark scripts. Plain code over
 * `node:` modules, so the same scripts run on Deno (against the sources) and
 * on Node (bundled against `npm/`, see `bench/node_build.ts`).
 *
 * @module
 */
import process from "node:process";

/** One operation under measurement; may return a promise (then it is awaited). */
export type Op = () => unknown;

/** A measured case: a name, its operation, and whether it is synchronous. */
export interface Case {
  /** Label in the table. */
  name: string;
  /** The operation. */
  op: Op;
  /** Synchronous: timed in a plain loop without awaits. */
  sync?: boolean;
}

/** Command-line flags common to every script. */
export const QUICK: boolean = process.argv.includes("--quick");

/** Rounds and round length used by {@link alternate}. */
export const TIMING = QUICK ? { rounds: 3, roundMs: 60 } : { rounds: 7, roundMs: 150 };

/** `Deno 2.x.y` or `Node v20.x.y`. */
export function runtimeName(): string {
  const deno = (globalThis as { Deno?: { version: { deno: string } } }).Deno;
  return deno !== undefined ? `Deno ${deno.version.deno}` : `Node ${process.version}`;
}

/** Whether the script runs on Deno. */
export const ON_DENO: boolean = "Deno" in globalThis;

/** Median of `values` (upper median for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Spread of `values` as (max - min) / median, in percent. */
export function spreadPct(values: readonly number[]): number {
  const m = median(values);
  return m === 0 ? 0 : ((Math.max(...values) - Math.min(...values)) / m) * 100;
}

async function runBatch(c: Case, n: number): Promise<number> {
  const { op } = c;
  const start = performance.now();
  if (c.sync) { for (let i = 0; i < n; i++) op(); }
  else for (let i = 0; i < n; i++) await op();
  const us = ((performance.now() - start) * 1000) / n;
  // Untimed: one turn of the event loop, as a server has between requests. Deno keeps a
  // `Response` built with headers until a macrotask runs; without this turn a batch's
  // garbage piles up and slows the cases measured after it.
  await new Promise((resolve) => setTimeout(resolve, 0));
  return us;
}

/**
 * A batch size such that one batch takes about `roundMs`, from `n` up:
 * `timeBatch(n)` (ms of a batch of `n`) doubled until a batch takes a quarter
 * of it, each size timed twice and the faster kept. A pause only lengthens a
 * batch (a collection of a setup's garbage, another process's turn): timed
 * once, the case calibrated first after a setup got a batch 100× too small,
 * each batch's fixed costs (a turn of the event loop, a cold cache after the
 * other case's batch) spread over 100 operations instead of 100,000.
 *
 * @example
 * ```ts
 * const n = await batchSize(async (n) => n * 0.001, 100); // 1 µs per operation
 * n; // 100_000
 * ```
 */
export async function batchSize(
  timeBatch: (n: number) => Promise<number>,
  roundMs: number,
  n = 1,
): Promise<number> {
  for (;;) {
    const ms = Math.min(await timeBatch(n), await timeBatch(n));
    if (ms >= roundMs / 4 || n >= 1 << 22) {
      return Math.max(1, Math.round((n * roundMs) / Math.max(ms, 0.01)));
    }
    n *= 2;
  }
}

/** Wall ms of `run()`. */
async function wallMs(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

/** Result of one case in {@link alternate}: median and per-round µs per operation. */
export interface Timing {
  /** Median µs per operation. */
  us: number;
  /** µs per operation of each round. */
  rounds: number[];
}

/**
 * Times `cases` in alternating rounds (round r runs a batch of each case in
 * turn), after a calibration that doubles as warm-up.
 */
export async function alternate(cases: readonly Case[], timing = TIMING): Promise<Timing[]> {
  const sizes: number[] = [];
  for (const c of cases) {
    sizes.push(await batchSize((n) => wallMs(() => runBatch(c, n)), timing.roundMs));
  }
  const rounds: number[][] = cases.map(() => []);
  for (let r = 0; r < timing.rounds; r++) {
    for (let i = 0; i < cases.length; i++) rounds[i].push(await runBatch(cases[i], sizes[i]));
  }
  return rounds.map((values) => ({ us: median(values), rounds: values }));
}

/** Process CPU time in µs (user + system): what a loaded, shared machine cannot inflate by descheduling. */
export function cpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** Rounds, round length and untimed warm-up rounds of {@link alternateCpu}. */
export const CPU_TIMING = QUICK
  ? { rounds: 7, roundMs: 60, warmup: 2 }
  : { rounds: 21, roundMs: 100, warmup: 3 };

/**
 * Times `ops` in alternating rounds as process CPU µs per operation (the
 * median over the rounds), so other processes' turns on a shared machine do
 * not count: batches sized to about `roundMs` of wall time, `warmup` untimed
 * rounds first, and each round starting one case further along (every case
 * takes every place in the order: none is always timed first, after the idle
 * turn). Each batch ends with one turn of the event loop (timers run there).
 */
export async function alternateCpu(
  ops: readonly Op[],
  timing = CPU_TIMING,
): Promise<Timing[]> {
  const batch = async (op: Op, n: number) => {
    const start = cpuUs();
    for (let i = 0; i < n; i++) await op();
    const us = (cpuUs() - start) / n;
    await new Promise((resolve) => setTimeout(resolve, 0));
    return us;
  };
  const sizes: number[] = [];
  for (const op of ops) {
    sizes.push(await batchSize((n) => wallMs(() => batch(op, n)), timing.roundMs, 64));
  }
  const rounds: number[][] = ops.map(() => []);
  for (let r = -timing.warmup; r < timing.rounds; r++) {
    for (let k = 0; k < ops.length; k++) {
      const i = (k + Math.max(r, 0)) % ops.length;
      const us = await batch(ops[i], sizes[i]);
      if (r >= 0) rounds[i].push(us);
    }
  }
  return rounds.map((values) => ({ us: median(values), rounds: values }));
}

/** Result of {@link paired}: median µs of each side and median of the chunk ratios b/a. */
export interface PairedTiming {
  /** Median µs per operation of `a`. */
  aUs: number;
  /** Median µs per operation of `b`. */
  bUs: number;
  /** Median over chunks of (time of b) / (time of a). */
  ratio: number;
}

/**
 * Times two async operations interleaved one by one (a, b, then b, a, ...),
 * each call timed on its own, so both see the same machine state: the way to
 * compare operations whose latency is bimodal (a Web Crypto call's depends on
 * whether the runtime's worker thread is awake).
 */
export async function paired(a: Op, b: Op, chunks = QUICK ? 9 : 31, perChunk = 300) {
  const as: number[] = [];
  const bs: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < 50; i++) {
    await a();
    await b();
  }
  for (let c = 0; c < chunks; c++) {
    let ta = 0;
    let tb = 0;
    for (let i = 0; i < perChunk; i++) {
      const aFirst = (i & 1) === 0;
      const t0 = performance.now();
      await (aFirst ? a() : b());
      const t1 = performance.now();
      await (aFirst ? b() : a());
      const t2 = performance.now();
      if (aFirst) {
        ta += t1 - t0;
        tb += t2 - t1;
      } else {
        tb += t1 - t0;
        ta += t2 - t1;
      }
    }
    as.push((ta * 1000) / perChunk);
    bs.push((tb * 1000) / perChunk);
    ratios.push(tb / ta);
  }
  return { aUs: median(as), bUs: median(bs), ratio: median(ratios) } satisfies PairedTiming;
}

/** Result of {@link slowerShare}. */
export interface SlowerShare {
  /** Share (0-1) of the untied rounds in which `b` was the slower. */
  share: number;
  /** Rounds counted (ties excluded). */
  counted: number;
  /** Tied rounds (excluded). */
  ties: number;
  /** Median µs of `a` and of `b`. */
  aUs: number;
  bUs: number;
}

/**
 * Paired rounds in random order: each round times one call of `a` and one of
 * `b`, each on its own, in an order drawn at random; tied rounds are
 * excluded. A share far from 50 % means one operation is systematically the
 * slower, however small the difference next to the noise.
 */
export async function slowerShare(a: Op, b: Op, rounds: number): Promise<SlowerShare> {
  for (let i = 0; i < 2_000; i++) {
    await a();
    await b();
  }
  const as: number[] = [];
  const bs: number[] = [];
  let slower = 0;
  let ties = 0;
  for (let r = 0; r < rounds; r++) {
    const bFirst = Math.random() < 0.5;
    const t0 = performance.now();
    await (bFirst ? b() : a());
    const t1 = performance.now();
    await (bFirst ? a() : b());
    const t2 = performance.now();
    const ta = bFirst ? t2 - t1 : t1 - t0;
    const tb = bFirst ? t1 - t0 : t2 - t1;
    as.push(ta * 1000);
    bs.push(tb * 1000);
    if (ta === tb) ties++;
    else if (tb > ta) slower++;
  }
  const counted = rounds - ties;
  return { share: slower / counted, counted, ties, aUs: median(as), bUs: median(bs) };
}

/** Prints a table with a header row and aligned columns. */
export function printTable(title: string, header: string[], rows: string[][]): void {
  console.log(`\n${title}\n`);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  for (const line of [header, widths.map((w) => "-".repeat(w)), ...rows]) {
    console.log(line.map((cell, i) => (cell ?? "").padEnd(widths[i])).join("  ").trimEnd());
  }
}

/** Formats a number with `digits` decimals. */
export function fmt(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : String(value);
}

/** `ok` or `MISSED`, for a target column. */
export function verdict(pass: boolean): string {
  return pass ? "ok" : "MISSED";
}
