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
 * memory and, with `REDIS_URL` / `DATABASE_URL`, on Redis (`RateLimiterRedis`)
 * and PostgreSQL (`RateLimiterPostgres`), one check at a time, at 100 and
 * 100,000 active subjects; then the cost at 100,000 ÷ the cost at 100 per
 * store, ours beside the peer's (target: ours ≤ the peer's). A store that
 * cannot serve the limiter yet is said and skipped. On
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
import { createRateLimiter, type RateLimiter } from "../rate_limits/limiter.ts";
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

/** A peer limiter: `consume` one point of a key (a refusal rejects). */
interface Peer {
  consume(key: string): Promise<unknown>;
}

/** Where a row runs: ours and the peer's limiters on one store. */
interface Engine {
  /** `memory`, `redis` or `postgres`. */
  readonly kind: "memory" | StoreKind;
  /** Our limiter, its store able to hold `n` subjects on every row. */
  limiter(n: number): RateLimiter;
  /** The peer with `points` per hour, its keys under `keyPrefix`. */
  peer(points: number, keyPrefix: string): Promise<Peer>;
  /** Subjects checked at once while a row's subjects are made active (1: in turn). */
  readonly fillers: number;
  /** Closes what the engine opened. */
  close(): Promise<void>;
}

/** Memory: a fresh store per row, the peer's `RateLimiterMemory`. */
const MEMORY: Engine = {
  kind: "memory",
  limiter: (n) =>
    createRateLimiter({
      ...quiet,
      store: createMemoryRateLimitStore({ maxCounters: n * 3 + 1_000 }),
    }),
  peer: (points, keyPrefix) =>
    Promise.resolve(new RateLimiterMemory({ points, duration: HOUR_MS / 1000, keyPrefix })),
  fillers: 1,
  close: () => Promise.resolve(),
};

/** A peer's `consume` as a plain promise: a refusal (its rejection with a result) resolves. */
const settle = (promise: Promise<unknown>) => promise.catch((e) => e);

interface Row {
  /** The store it ran on. */
  kind: Engine["kind"];
  label: string;
  subjects: number;
  ours: Timing;
  peer: Timing;
  /** Median over the rounds of ours ÷ peer (each round times both, one after the other). */
  ratio: number;
}

/**
 * One row on `kind`: every subject of `subjects` goes through `ours` and
 * `peer` once (so they are active; `fillers` of them at once), then both are timed in alternating rounds, cycling
 * through the subjects in order.
 */
async function row(
  kind: Engine["kind"],
  label: string,
  subjects: readonly string[],
  ours: (subject: string) => Promise<unknown>,
  peer: (subject: string) => Promise<unknown>,
  timing = CPU_TIMING,
  fillers = 1,
): Promise<Row> {
  await Promise.all(Array.from({ length: fillers }, async (_, w) => {
    for (let i = w; i < subjects.length; i += fillers) {
      await ours(subjects[i]);
      await peer(subjects[i]);
    }
  }));
  const [a, b] = [cycle(subjects), cycle(subjects)];
  const [oursT, peerT] = await alternateCpu([() => ours(a()), () => peer(b())], timing);
  const ratio = median(oursT.rounds.map((us, r) => us / peerT.rounds[r]));
  return { kind, label, subjects: subjects.length, ours: oursT, peer: peerT, ratio };
}

/**
 * Untimed rounds of a warm-up pass: process CPU counts the JIT's background
 * compilation, which runs for the first seconds of a process.
 */
const WARM_UP = { rounds: 3, roundMs: CPU_TIMING.roundMs, warmup: 1 };

/**
 * The three rows on `engine` at `n` active subjects (`timing`: `WARM_UP` for
 * the untimed pass); each row's subjects its own (a remote store keeps them).
 */
async function engineRows(engine: Engine, n: number, timing = CPU_TIMING): Promise<Row[]> {
  const stamp = Date.now();
  const subjectsFor = (row: string) =>
    engine.kind === "memory" ? subjectsOf(n) : subjectsOf(n).map((s) => `${s}:${row}:${stamp}`);
  const allowed = engine.limiter(n);
  const peerAllowed = await engine.peer(ROOMY_LIMIT, `allowed${stamp}`);
  const refused = engine.limiter(n);
  const peerRefused = await engine.peer(1, `refused${stamp}`);
  const credited = engine.limiter(n);
  const peerLimit = await engine.peer(ROOMY_LIMIT, `limit${stamp}`);
  const peerCredits = await engine.peer(ROOMY_LIMIT, `credits${stamp}`);
  const rowOn = (
    label: string,
    ours: (s: string) => Promise<unknown>,
    peer: (s: string) => Promise<unknown>,
  ) => row(engine.kind, label, subjectsFor(label), ours, peer, timing, engine.fillers);
  return [
    await rowOn("allowed check", (s) => allowed.check(s, ROOMY), (s) => peerAllowed.consume(s)),
    await rowOn(
      "refused check",
      (s) => refused.check(s, ONE),
      (s) => settle(peerRefused.consume(s)),
    ),
    await rowOn(
      "policy + credits (peer: two consumes)",
      (s) => credited.check(s, ROOMY, { credits: CREDITS }),
      async (s) => {
        await peerLimit.consume(s);
        await peerCredits.consume(s);
      },
    ),
  ];
}

/** The peer on a real service: one connection (Redis) or pool (PostgreSQL), peers made on it. */
async function peerOn(kind: StoreKind, url: string) {
  if (kind === "redis") {
    const client = await connectRedis(url);
    const make = (points: number, keyPrefix: string): Promise<Peer> =>
      Promise.resolve(
        new RateLimiterRedis({
          storeClient: client,
          useRedisPackage: true,
          points,
          duration: HOUR_MS / 1000,
          keyPrefix,
        }),
      );
    return { make, close: () => client.close() };
  }
  const pool = new pg.Pool({ connectionString: url, max: 5 });
  pool.on("error", () => {});
  const make = (points: number, keyPrefix: string) =>
    new Promise<Peer>((resolve, reject) => {
      const made: RateLimiterPostgres = new RateLimiterPostgres({
        storeClient: pool,
        points,
        duration: HOUR_MS / 1000,
        tableName: "bench_peer_rate_limits",
        keyPrefix,
      }, (error?: Error) => error ? reject(error) : resolve(made));
    });
  return { make, close: () => pool.end() };
}

/** Ours and the peer on `kind` (one check at a time, subjects made active 32 at once), or why it is skipped. */
async function remoteEngine(kind: StoreKind): Promise<Engine | string> {
  const variable = kind === "redis" ? "REDIS_URL" : "DATABASE_URL";
  const url = process.env[variable];
  if (!url) return `${kind}: ${variable} is not set, skipped`;
  const real = await openStore(kind, url);
  const limiter = () =>
    createRateLimiter({ ...quiet, store: real.store as RateLimitStore, timeoutMs: 5_000 });
  try {
    await limiter().ready();
  } catch (error) {
    await real.close();
    return `${kind}: the store cannot serve the limiter yet (${(error as Error).message}), skipped`;
  }
  const peers = await peerOn(kind, url);
  return {
    kind,
    limiter,
    peer: peers.make,
    fillers: 32,
    close: async () => {
      await peers.close();
      await real.close();
    },
  };
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
  const peers = await Promise.all([0, 1, 2, 3, 4].map(async () => {
    const on = await peerOn(kind, url);
    return { peer: await on.make(1, `neighbour${stamp}`), close: on.close };
  }));
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
await engineRows(MEMORY, SIZES[0], WARM_UP); // both sides' code compiled before any row is timed
for (const n of SIZES) rows.push(...await engineRows(MEMORY, n));
const skipped: string[] = [];
for (const kind of ["redis", "postgres"] as const) {
  const engine = await remoteEngine(kind).catch((e) => `${kind}: failed (${(e as Error).message})`);
  if (typeof engine === "string") {
    skipped.push(engine);
    continue;
  }
  try {
    for (const n of SIZES) rows.push(...await engineRows(engine, n));
  } catch (error) {
    skipped.push(`${kind}: failed (${(error as Error).message})`);
  } finally {
    await engine.close();
  }
}
/** A row's case, its store named when remote. */
const caseOf = ({ kind, label }: Row) => kind === "memory" ? label : `${label} (${kind})`;

printTable(
  "Rate limits beside rate-limiter-flexible 11.4.0 (memory: RateLimiterMemory), same rounds",
  ["case", "active subjects", "ours µs", "peer µs", "ours ÷ peer", "target"],
  rows.map((r) => {
    const { subjects, ours, peer, ratio } = r;
    return [
      caseOf(r),
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
  rows.filter((r) => r.subjects === large).map((at) => {
    const from = rows.find((r) =>
      r.kind === at.kind && r.label === at.label && r.subjects === small
    )!;
    const ours = at.ours.us / from.ours.us;
    const peer = at.peer.us / from.peer.us;
    return [
      caseOf(at),
      `${fmt(ours)}×`,
      `${fmt(peer)}×`,
      `${verdict(ours <= peer)} (ours ≤ peer's)`,
    ];
  }),
);
