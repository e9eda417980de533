/**
 * Benchmark 12: rate limits beside `rate-limiter-flexible` 11.4.0 (pinned in
 * deno.json, a dependency of this bench only), in one process, alternating
 * rounds, timed as process CPU per operation (the machine is shared: wall
 * time would count the other processes' turns; `alternateCpu`: 21 rounds after
 * 3 untimed ones, each round starting with the other side, a row's ratio the
 * median of the rounds' ratios; the memory rows once untimed first, so the JIT's
 * background work of a new process is not counted). Ours is `limiter.check` with a compiled policy; the peer's is
 * `consume`. Rows, ours ÷ peer (target ≤ 1.0, `MISSED` past it, never a
 * failure): an allowed check, a refused check, and one policy + credits in one
 * check against the peer's two consumes (a limit and a points balance), on
 * memory at 100 and 100,000 active subjects; then the cost at 100,000 ÷ the
 * cost at 100, ours beside the peer's (target: ours ≤ the peer's). With
 * `REDIS_URL` or `DATABASE_URL`, an allowed check at 100 subjects on Redis
 * (`RateLimiterRedis`) and PostgreSQL (`RateLimiterPostgres`), one check at a
 * time; a store that cannot serve the limiter yet is said and skipped. On
 * each of them too, the neighbour row: a victim's p50 while 4 connections
 * flood an exhausted key ÷ its p50 alone, ours beside the peer's (target:
 * ours ≤ 1.5 × the peer's).
 *
 * Run: `deno run -A bench/rate_limits_peer.ts [--quick]`.
 *
 * @module
 */
import process from "node:process";
import pg from "pg";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis } from "rate-limiter-flexible";
import { createRateLimiter } from "../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../rate_limits/memory_store.ts";
import { compileRateLimitPolicies } from "../rate_limits/policy.ts";
import type { RateLimitStore } from "../rate_limits/store.ts";
import { connectRedis, openStore, type StoreKind } from "../tests/limits/_stores.ts";
import {
  alternateCpu,
  CPU_TIMING,
  fmt,
  median,
  printTable,
  QUICK,
  type Timing,
  verdict,
} from "./lib/harness.ts";

const SIZES = QUICK ? [100, 10_000] : [100, 100_000];
const HOUR_MS = 3_600_000;
/**
 * Never exhausted in a run; the same limit as the peer's `points`, a small
 * integer in V8 on both sides (as real limits are: 10^12 would make every
 * `remaining` a boxed double on our side only).
 */
const ROOMY_LIMIT = 1e9;
const ROOMY = compileRateLimitPolicies([{ name: "roomy", limit: ROOMY_LIMIT, windowMs: HOUR_MS }]);
/** Exhausted by the first check of each subject. */
const ONE = compileRateLimitPolicies([{ name: "one", limit: 1, windowMs: HOUR_MS }]);
const CREDITS = { initial: ROOMY_LIMIT };
const quiet = { logger: () => {} };

const subjectsOf = (n: number) => Array.from({ length: n }, (_, i) => `bench:${i}`);

/** A cycling picker over `subjects`. */
function cycle(subjects: readonly string[]): () => string {
  let i = 0;
  return () => subjects[i++ % subjects.length];
}

/** Our limiter over a fresh memory store able to hold `n` subjects on every row. */
const ourLimiter = (n: number) =>
  createRateLimiter({
    ...quiet,
    store: createMemoryRateLimitStore({ maxCounters: n * 3 + 1_000 }),
  });

/** The peer's memory limiter (`points` per hour). */
const peerMemory = (points: number, keyPrefix: string) =>
  new RateLimiterMemory({ points, duration: HOUR_MS / 1000, keyPrefix });

/** A peer's `consume` as a plain promise: a refusal (its rejection with a result) resolves. */
const settle = (promise: Promise<unknown>) => promise.catch((e) => e);

interface Row {
  label: string;
  subjects: number;
  ours: Timing;
  peer: Timing;
  /** Median over the rounds of ours ÷ peer (each round times both, one after the other). */
  ratio: number;
}

/**
 * One row: every subject of `subjects` goes through `ours` and `peer` once
 * (so they are active), then both are timed in alternating rounds, cycling
 * through the subjects in order.
 */
async function row(
  label: string,
  subjects: readonly string[],
  ours: (subject: string) => Promise<unknown>,
  peer: (subject: string) => Promise<unknown>,
  timing = CPU_TIMING,
): Promise<Row> {
  for (const s of subjects) {
    await ours(s);
    await peer(s);
  }
  const [a, b] = [cycle(subjects), cycle(subjects)];
  const [oursT, peerT] = await alternateCpu([() => ours(a()), () => peer(b())], timing);
  const ratio = median(oursT.rounds.map((us, r) => us / peerT.rounds[r]));
  return { label, subjects: subjects.length, ours: oursT, peer: peerT, ratio };
}

/**
 * Untimed rounds of a warm-up pass: process CPU counts the JIT's background
 * compilation, which runs for the first seconds of a process.
 */
const WARM_UP = { rounds: 3, roundMs: CPU_TIMING.roundMs, warmup: 1 };

/** The three memory rows at `n` active subjects (`timing`: `WARM_UP` for the untimed pass). */
async function memoryRows(n: number, timing = CPU_TIMING): Promise<Row[]> {
  const subjects = subjectsOf(n);
  const allowed = ourLimiter(n);
  const peerAllowed = peerMemory(ROOMY_LIMIT, "allowed");
  const refused = ourLimiter(n);
  const peerRefused = peerMemory(1, "refused");
  const credited = ourLimiter(n);
  const peerLimit = peerMemory(ROOMY_LIMIT, "limit");
  const peerCredits = peerMemory(ROOMY_LIMIT, "credits");
  return [
    await row(
      "allowed check",
      subjects,
      (s) => allowed.check(s, ROOMY),
      (s) => peerAllowed.consume(s),
      timing,
    ),
    await row(
      "refused check",
      subjects,
      (s) => refused.check(s, ONE),
      (s) => settle(peerRefused.consume(s)),
      timing,
    ),
    await row(
      "policy + credits (peer: two consumes)",
      subjects,
      (s) => credited.check(s, ROOMY, { credits: CREDITS }),
      async (s) => {
        await peerLimit.consume(s);
        await peerCredits.consume(s);
      },
      timing,
    ),
  ];
}

/** The peer on a real service, or a reason it is skipped. */
async function peerOn(kind: StoreKind, url: string, points = ROOMY_LIMIT) {
  if (kind === "redis") {
    const client = await connectRedis(url);
    const peer = new RateLimiterRedis({
      storeClient: client,
      useRedisPackage: true,
      points,
      duration: HOUR_MS / 1000,
      keyPrefix: `peer${Date.now()}`,
    });
    return { peer, close: () => client.close() };
  }
  const pool = new pg.Pool({ connectionString: url, max: 5 });
  pool.on("error", () => {});
  const peer = await new Promise<RateLimiterPostgres>((resolve, reject) => {
    const made: RateLimiterPostgres = new RateLimiterPostgres({
      storeClient: pool,
      points,
      duration: HOUR_MS / 1000,
      tableName: "bench_peer_rate_limits",
      keyPrefix: `peer${Date.now()}`,
    }, (error?: Error) => error ? reject(error) : resolve(made));
  });
  return { peer, close: () => pool.end() };
}

/** An allowed check at 100 subjects on `kind`, ours beside the peer's, or why it is skipped. */
async function remoteRow(kind: StoreKind): Promise<Row | string> {
  const variable = kind === "redis" ? "REDIS_URL" : "DATABASE_URL";
  const url = process.env[variable];
  if (!url) return `${kind}: ${variable} is not set, skipped`;
  const real = await openStore(kind, url);
  let limiter;
  try {
    limiter = createRateLimiter({
      ...quiet,
      store: real.store as RateLimitStore,
      timeoutMs: 5_000,
    });
    await limiter.ready();
  } catch (error) {
    await real.close();
    return `${kind}: the store cannot serve the limiter yet (${(error as Error).message}), skipped`;
  }
  const { peer, close } = await peerOn(kind, url);
  try {
    const subjects = subjectsOf(100).map((s) => `${s}:${Date.now()}`);
    return await row(
      `allowed check (${kind})`,
      subjects,
      (s) => limiter.check(s, ROOMY),
      (s) => peer.consume(s),
    );
  } finally {
    await close();
    await real.close();
  }
}

/** Median wall ms of `n` sequential calls of `op`. */
async function p50(op: () => Promise<unknown>, n = QUICK ? 100 : 300): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await op();
    times.push(performance.now() - started);
  }
  return median(times);
}

/**
 * A victim's p50 under a flood ÷ quiet: sequential checks of fresh keys, alone
 * and while 4 connections check an exhausted key at full speed (50 in flight
 * each); `flooders` are the 4 connections' checks of the hot key.
 */
async function floodRatio(
  victim: () => Promise<unknown>,
  flooders: readonly (() => Promise<unknown>)[],
): Promise<number> {
  const quietP50 = await p50(victim);
  let flooding = true;
  const flood = flooders.map(async (hit) => {
    while (flooding) await Promise.all(Array.from({ length: 50 }, hit));
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const floodP50 = await p50(victim);
  flooding = false;
  await Promise.all(flood);
  return floodP50 / quietP50;
}

/** The neighbour row on `kind`: our ratio beside the peer's, or why it is skipped. */
async function neighbourRow(kind: StoreKind): Promise<string[] | string> {
  const variable = kind === "redis" ? "REDIS_URL" : "DATABASE_URL";
  const url = process.env[variable];
  if (!url) return `${kind} neighbour: ${variable} is not set, skipped`;
  const stamp = Date.now();
  const hot = `hot:${stamp}`;
  const stores = await Promise.all([0, 1, 2, 3, 4].map(() => openStore(kind, url, 1)));
  const peers = await Promise.all([0, 1, 2, 3, 4].map(() => peerOn(kind, url, 1)));
  try {
    const limiters = stores.map(({ store }) =>
      createRateLimiter({ ...quiet, store: store as RateLimitStore, timeoutMs: 5_000 })
    );
    await limiters[0].check(hot, ONE);
    await settle(peers[0].peer.consume(hot));
    let i = 0;
    const ours = await floodRatio(
      () => limiters[4].check(`victim:${stamp}:${i++}`, ONE),
      limiters.slice(0, 4).map((limiter) => () => limiter.check(hot, ONE)),
    );
    const peer = await floodRatio(
      () => settle(peers[4].peer.consume(`victim:${stamp}:${i++}`)),
      peers.slice(0, 4).map(({ peer }) => () => settle(peer.consume(hot))),
    );
    return [
      `victim p50 under flood ÷ quiet (${kind})`,
      `${fmt(ours)}×`,
      `${fmt(peer)}×`,
      `${verdict(ours <= 1.5 * peer)} (≤ 1.5 × peer's)`,
    ];
  } finally {
    for (const { close } of peers) await close();
    for (const { close } of stores) await close();
  }
}

const rows: Row[] = [];
await memoryRows(SIZES[0], WARM_UP); // both sides' code compiled before any row is timed
for (const n of SIZES) rows.push(...await memoryRows(n));
const skipped: string[] = [];
for (const kind of ["redis", "postgres"] as const) {
  const row = await remoteRow(kind).catch((e) => `${kind}: failed (${(e as Error).message})`);
  if (typeof row === "string") skipped.push(row);
  else rows.push(row);
}

printTable(
  "Rate limits beside rate-limiter-flexible 11.4.0 (memory: RateLimiterMemory), same rounds",
  ["case", "active subjects", "ours µs", "peer µs", "ours ÷ peer", "target"],
  rows.map(({ label, subjects, ours, peer, ratio }) => {
    return [
      label,
      subjects.toLocaleString("en-US"),
      fmt(ours.us),
      fmt(peer.us),
      fmt(ratio),
      `${verdict(ratio <= 1)} (≤ 1.0)`,
    ];
  }),
);
for (const line of skipped) console.log(line);

const neighbours: string[][] = [];
for (const kind of ["redis", "postgres"] as const) {
  const row = await neighbourRow(kind).catch((e) =>
    `${kind} neighbour: failed (${(e as Error).message})`
  );
  if (typeof row === "string") console.log(row);
  else neighbours.push(row);
}
if (neighbours.length > 0) {
  printTable(
    "No noisy neighbour: 4 connections flood an exhausted key; a victim's p50 under flood ÷ quiet",
    ["store", "ours", "peer", "target"],
    neighbours,
  );
}

const [small, large] = SIZES;
printTable(
  `Growth: cost at ${large.toLocaleString("en-US")} active subjects ÷ cost at ${small}`,
  ["case", "ours", "peer", "target"],
  ["allowed check", "refused check", "policy + credits (peer: two consumes)"].map((label) => {
    const at = (n: number) => rows.find((r) => r.label === label && r.subjects === n)!;
    const ours = at(large).ours.us / at(small).ours.us;
    const peer = at(large).peer.us / at(small).peer.us;
    return [label, `${fmt(ours)}×`, `${fmt(peer)}×`, `${verdict(ours <= peer)} (ours ≤ peer's)`];
  }),
);
