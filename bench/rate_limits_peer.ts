/**
 * Benchmark 12: rate limits beside `rate-limiter-flexible` 11.4.0 (pinned in
 * deno.json, a dependency of this bench only), in one process, alternating
 * rounds, timed as process CPU per operation (the machine is shared: wall
 * time would count the other processes' turns; `alternateCpu`: 21 rounds after
 * 3 untimed ones, each round starting with the other side, a row's ratio the
 * median of the rounds' ratios; the memory rows once untimed first, so the JIT's
 * background work of a new process is not counted). Ours is `limiter.check`
 * with a compiled policy, its store given the client (or pool) itself as an
 * application passes it (no counting wrapper); the peer's is `consume`.
 * Rows, ours ÷ peer (target ≤ 1.0, `MISSED` past it, never a failure): an
 * allowed check, a refused check (on a remote store with `refusalMemory: 0`:
 * every refusal through the store, as the peer's; see `rememberedRows` for the
 * defaults), and one policy + credits in one
 * check against the peer's two consumes (a limit and a points balance), on
 * memory and, with `REDIS_URL` / `DATABASE_URL`, on Redis (`RateLimiterRedis`)
 * and PostgreSQL (`RateLimiterPostgres`), one check at a time, at 100 and
 * 100,000 active subjects (both sizes of a case timed in the same rounds, after
 * an untimed pass per store); then the cost at 100,000 ÷ the cost at 100 per
 * store (the median of the rounds' ratios), ours beside the peer's (target:
 * ours ≤ the peer's, or flat: at most `FLAT`, as two costs that do not grow
 * compare only the rounds' noise). A store that cannot serve the limiter yet
 * is said and skipped. On
 * each of them too, the neighbour row: a victim's p50 while 4 connections
 * flood an exhausted key ÷ its p50 alone (our flooders' refusals not
 * remembered: the store's own isolation), ours beside the peer's (target:
 * ours ≤ 1.5 × the peer's). Then, on each remote store, a subject refused
 * before checked again with our defaults (no target; see `rememberedRows`),
 * an allowed check with a deadline on both sides (no target; see
 * `deadlineRows`), an allowed check beside a bare round trip on its store (no
 * target; see `floorRows`), and an allowed check with 16 callers at once, ours beside
 * the peer's (no target; see `concurrentRows`). On Redis, the server's µs per check too,
 * ours beside the peer's (no target; see `serverRows`).
 *
 * Run: `deno run -A bench/rate_limits_peer.ts [--quick]`.
 *
 * @module
 */
import process from "node:process";
import pg from "pg";
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
  RLWrapperTimeouts,
} from "rate-limiter-flexible";
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
/** Our limiters' `timeoutMs` on a remote store (and the peer's deadline where it has one). */
const TIMEOUT_MS = 5_000;

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
  /** Our limiter, its store able to hold `n` subjects on every row (`refusalMemory` as given). */
  limiter(n: number, refusalMemory?: number): RateLimiter;
  /** The peer with `points` per hour, its keys under `keyPrefix` (`extra`: more of its options). */
  peer(points: number, keyPrefix: string, extra?: object): Promise<Peer>;
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

/** The median over the rounds of `x` ÷ `y` (each round times both, one after the other). */
const roundsRatio = (x: Timing, y: Timing) => median(x.rounds.map((us, r) => us / y.rounds[r]));

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

/** One size of a case: ours and the peer's check, and the subjects they cycle through. */
interface Side {
  ours: (subject: string) => Promise<unknown>;
  peer: (subject: string) => Promise<unknown>;
  subjects: readonly string[];
}

/**
 * One case on `kind` at every size of `sides`: every subject goes through
 * `ours` and `peer` once (so they are active; `fillers` of them at once), then
 * every size's two sides are timed in the same alternating rounds, cycling
 * through the subjects in order (a growth row divides two timings of the same
 * rounds, not two phases of the run minutes apart).
 */
async function rowsOf(
  kind: Engine["kind"],
  label: string,
  sides: readonly Side[],
  timing: typeof CPU_TIMING,
  fillers: number,
): Promise<Row[]> {
  for (const { ours, peer, subjects } of sides) {
    await Promise.all(Array.from({ length: fillers }, async (_, w) => {
      for (let i = w; i < subjects.length; i += fillers) {
        await ours(subjects[i]);
        await peer(subjects[i]);
      }
    }));
  }
  const ops = sides.flatMap(({ ours, peer, subjects }) => {
    const [a, b] = [cycle(subjects), cycle(subjects)];
    return [() => ours(a()), () => peer(b())];
  });
  const timings = await alternateCpu(ops, timing);
  return sides.map(({ subjects }, k) => {
    const [ours, peer] = [timings[2 * k], timings[2 * k + 1]];
    return { kind, label, subjects: subjects.length, ours, peer, ratio: roundsRatio(ours, peer) };
  });
}

/**
 * Untimed rounds of a warm-up pass: process CPU counts the JIT's background
 * compilation, which runs for the first seconds of a process.
 */
const WARM_UP = { rounds: 3, roundMs: CPU_TIMING.roundMs, warmup: 1 };

/**
 * The three cases on `engine`, each at every size of `sizes` in the same
 * rounds (`timing`: `WARM_UP` for the untimed pass); each size and case its
 * own limiter, peer and subjects (a remote store keeps them).
 */
async function engineRows(
  engine: Engine,
  sizes: readonly number[],
  timing = CPU_TIMING,
): Promise<Row[]> {
  const stamp = Date.now();
  const subjectsFor = (label: string, n: number) =>
    engine.kind === "memory"
      ? subjectsOf(n)
      : subjectsOf(n).map((s) => `${s}:${label}:${n}:${stamp}`);
  const peer = (points: number, label: string, n: number) =>
    engine.peer(points, `${label}${n}:${stamp}`);
  const cases: [string, (n: number) => Promise<Omit<Side, "subjects">>][] = [
    ["allowed check", async (n) => {
      const [ours, theirs] = [engine.limiter(n), await peer(ROOMY_LIMIT, "allowed", n)];
      return { ours: (s) => ours.check(s, ROOMY), peer: (s) => theirs.consume(s) };
    }],
    ["refused check", async (n) => {
      // Every refused check through the store, as the peer's (see `rememberedRows`).
      const [ours, theirs] = [engine.limiter(n, 0), await peer(1, "refused", n)];
      return { ours: (s) => ours.check(s, ONE), peer: (s) => settle(theirs.consume(s)) };
    }],
    ["policy + credits (peer: two consumes)", async (n) => {
      const ours = engine.limiter(n);
      const [limit, credits] = [
        await peer(ROOMY_LIMIT, "limit", n),
        await peer(ROOMY_LIMIT, "credits", n),
      ];
      return {
        ours: (s) => ours.check(s, ROOMY, { credits: CREDITS }),
        peer: async (s) => {
          await limit.consume(s);
          await credits.consume(s);
        },
      };
    }],
  ];
  const rows: Row[] = [];
  for (const [label, make] of cases) {
    const sides: Side[] = [];
    for (const n of sizes) sides.push({ ...await make(n), subjects: subjectsFor(label, n) });
    rows.push(...await rowsOf(engine.kind, label, sides, timing, engine.fillers));
  }
  return rows;
}

/** The peer on a real service: one connection (Redis) or pool (PostgreSQL), peers made on it. */
async function peerOn(kind: StoreKind, url: string) {
  if (kind === "redis") {
    const client = await connectRedis(url);
    const make = (points: number, keyPrefix: string, extra?: object): Promise<Peer> =>
      Promise.resolve(
        new RateLimiterRedis({
          storeClient: client,
          useRedisPackage: true,
          points,
          duration: HOUR_MS / 1000,
          keyPrefix,
          ...extra,
        }),
      );
    return { make, close: () => client.close() };
  }
  const pool = new pg.Pool({ connectionString: url, max: 5 });
  pool.on("error", () => {});
  const make = (points: number, keyPrefix: string, extra?: object) =>
    new Promise<Peer>((resolve, reject) => {
      const made: RateLimiterPostgres = new RateLimiterPostgres({
        storeClient: pool,
        points,
        duration: HOUR_MS / 1000,
        tableName: "bench_peer_rate_limits",
        keyPrefix,
        ...extra,
      }, (error?: Error) => error ? reject(error) : resolve(made));
    });
  return { make, close: () => pool.end() };
}

/** Ours and the peer on `kind` (one check at a time, subjects made active 32 at once), or why it is skipped. */
async function remoteEngine(kind: StoreKind): Promise<Engine | string> {
  const variable = kind === "redis" ? "REDIS_URL" : "DATABASE_URL";
  const url = process.env[variable];
  if (!url) return `${kind}: ${variable} is not set, skipped`;
  const real = await openStore(kind, url, 5, undefined, false);
  const limiter = (_n?: number, refusalMemory?: number) =>
    createRateLimiter({
      ...quiet,
      store: real.store as RateLimitStore,
      timeoutMs: TIMEOUT_MS,
      refusalMemory,
    });
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

/** Callers at once in the concurrency table: a server's requests in flight. */
const CALLERS = 16;

/** Redis's µs per check of each of `ops` (`CALLERS` checks a call), ours / the peer's: `INFO commandstats` around 100 calls. */
async function serverPerCheck(ops: readonly (() => Promise<unknown>)[]): Promise<string> {
  const client = await connectRedis(process.env.REDIS_URL!);
  try {
    const us: string[] = [];
    for (const op of ops) {
      const before = await scriptStats(client);
      for (let i = 0; i < 100; i++) await op();
      us.push(fmt(((await scriptStats(client)).usec - before.usec) / (100 * CALLERS)));
    }
    return us.join(" / ");
  } finally {
    client.destroy();
  }
}

/** A row of `row` on each remote store (each its own engine, closed after), or why it is skipped. */
async function perRemoteStore(
  row: (engine: Engine, kind: StoreKind, stamp: number) => Promise<string[]>,
): Promise<(string[] | string)[]> {
  const rows: (string[] | string)[] = [];
  for (const kind of ["redis", "postgres"] as const) {
    const engine = await remoteEngine(kind);
    if (typeof engine === "string") {
      rows.push(engine);
      continue;
    }
    try {
      rows.push(await row(engine, kind, Date.now()));
    } finally {
      await engine.close();
    }
  }
  return rows;
}

/**
 * An allowed check with `CALLERS` callers at once on each remote store, ours
 * beside the peer's (no target: the rows above are one check at a
 * time): process CPU per check in alternating rounds, each call of a side
 * starting `CALLERS` checks of distinct subjects (100 active) and awaiting
 * them. Our door sends at most 4 calls at once and sends the checks waiting
 * behind them as one batch; node-redis writes the commands of one turn
 * together, and the peer's PostgreSQL pool holds 5 connections. On Redis, the
 * server's µs per check too (`INFO commandstats`: a batch is one script run).
 */
const concurrentRows = () =>
  perRemoteStore(async (engine, kind, stamp) => {
    const subjects = subjectsOf(100).map((s) => `${s}:callers:${stamp}`);
    const [ours, peer] = [engine.limiter(100), await engine.peer(ROOMY_LIMIT, `callers${stamp}`)];
    const sides = [(s: string) => ours.check(s, ROOMY), (s: string) => peer.consume(s)];
    for (const side of sides) for (const s of subjects) await side(s);
    const ops = sides.map((side) => {
      const next = cycle(subjects);
      return () => Promise.all(Array.from({ length: CALLERS }, () => side(next())));
    });
    const [a, b] = await alternateCpu(ops, CPU_TIMING);
    return [
      `allowed check, ${CALLERS} callers at once (${kind})`,
      fmt(a.us / CALLERS),
      fmt(b.us / CALLERS),
      fmt(roundsRatio(a, b)),
      kind === "redis" ? await serverPerCheck(ops) : "-",
      "none (shown)",
    ];
  });

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
  const stores = await Promise.all(
    [0, 1, 2, 3, 4].map(() => openStore(kind, url, 1, undefined, false)),
  );
  const peers = await Promise.all([0, 1, 2, 3, 4].map(async () => {
    const on = await peerOn(kind, url);
    return { peer: await on.make(1, `neighbour${stamp}`), close: on.close };
  }));
  try {
    // Refusals not remembered: every flooded check reaches the store, as the peer's do.
    const limiters = stores.map(({ store }) =>
      createRateLimiter({
        ...quiet,
        store: store as RateLimitStore,
        timeoutMs: TIMEOUT_MS,
        refusalMemory: 0,
      })
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

/**
 * A row of three sides (ours, then two of the peer's) timed in the same
 * alternating rounds over `subjects`, each subject through every side
 * `passes` times first: µs per check of each, and ours ÷ each of the peer's.
 */
async function threeSides(
  label: string,
  subjects: readonly string[],
  sides: readonly ((subject: string) => Promise<unknown>)[],
  passes: number,
): Promise<string[]> {
  for (const side of sides) {
    for (let pass = 0; pass < passes; pass++) for (const s of subjects) await side(s);
  }
  const [a, b, c] = await alternateCpu(
    sides.map((side) => {
      const next = cycle(subjects);
      return () => side(next());
    }),
    CPU_TIMING,
  );
  return [
    label,
    fmt(a.us),
    fmt(b.us),
    fmt(c.us),
    fmt(roundsRatio(a, b)),
    fmt(roundsRatio(a, c)),
    "none (shown)",
  ];
}

/**
 * A subject refused before, checked again, on each remote store (no target:
 * the refused rows above send every refusal to the store): ours with
 * the defaults (the limiter remembers the refusal until the policy can have
 * room, `refusalMemory`) beside the peer's default (every consume through the
 * store) and the peer's in-memory block (`inMemoryBlockOnConsumed`, off by
 * default), 100 subjects each refused once before the rounds (two passes: the
 * first exhausts them), process CPU per check.
 */
const rememberedRows = () =>
  perRemoteStore(async (engine, kind, stamp) => {
    const ours = engine.limiter(100);
    const peer = await engine.peer(1, `again${stamp}`);
    const blocking = await engine.peer(1, `againblock${stamp}`, { inMemoryBlockOnConsumed: 1 });
    return await threeSides(
      `refused again (${kind})`,
      subjectsOf(100).map((s) => `${s}:again:${stamp}`),
      [
        (s) => ours.check(s, ONE),
        (s) => settle(peer.consume(s)),
        (s) => settle(blocking.consume(s)),
      ],
      2,
    );
  });

/**
 * An allowed check with a deadline on both sides, on each remote store (no
 * target: the allowed rows above time the peer's default, which waits
 * for its store as long as it takes): ours as there (the door bounds every
 * store call by `timeoutMs`, always) beside the peer's default and the peer in
 * its own deadline wrapper (`RLWrapperTimeouts`, the same `TIMEOUT_MS`), 100
 * subjects, process CPU per check.
 */
const deadlineRows = () =>
  perRemoteStore(async (engine, kind, stamp) => {
    const ours = engine.limiter(100);
    const peer = await engine.peer(ROOMY_LIMIT, `deadline${stamp}`);
    const bounded = new RLWrapperTimeouts({
      limiter: await engine.peer(ROOMY_LIMIT, `deadlinebound${stamp}`) as RateLimiterAbstract,
      timeoutMs: TIMEOUT_MS,
    });
    return await threeSides(
      `allowed check (${kind})`,
      subjectsOf(100).map((s) => `${s}:deadline:${stamp}`),
      [(s) => ours.check(s, ROOMY), (s) => peer.consume(s), (s) => bounded.consume(s)],
      1,
    );
  });

/**
 * An allowed check beside the floor of any check on each remote store (no
 * target): ours and the peer's as in the allowed rows, and a bare round trip
 * on a connection of its own (Redis: `PING` through node-redis `sendCommand`,
 * the path our store sends its script on; PostgreSQL: `SELECT 1`), 100
 * subjects, process CPU per call. One check at a time is one round trip on
 * either side: what the client and the kernel spend on it bounds how far below
 * the peer's a check can be.
 */
const floorRows = () =>
  perRemoteStore(async (engine, kind, stamp) => {
    const ours = engine.limiter(100);
    const peer = await engine.peer(ROOMY_LIMIT, `floor${stamp}`);
    const url = process.env[kind === "redis" ? "REDIS_URL" : "DATABASE_URL"]!;
    let roundTrip: () => Promise<unknown>;
    let close: () => Promise<unknown>;
    if (kind === "redis") {
      const client = await connectRedis(url);
      roundTrip = () => client.sendCommand(["PING"]);
      close = () => client.close();
    } else {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      pool.on("error", () => {});
      roundTrip = () => pool.query("SELECT 1");
      close = () => pool.end();
    }
    try {
      return await threeSides(
        `allowed check (${kind})`,
        subjectsOf(100).map((s) => `${s}:floor:${stamp}`),
        [(s) => ours.check(s, ROOMY), (s) => peer.consume(s), roundTrip],
        1,
      );
    } finally {
      await close();
    }
  });

/** Calls and µs of Redis's script commands so far (`INFO commandstats`: `evalsha`, and `eval` after a reload). */
async function scriptStats(client: Awaited<ReturnType<typeof connectRedis>>) {
  const info = String(await client.info("commandstats"));
  let calls = 0;
  let usec = 0;
  for (const [, c, u] of info.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+),usec=(\d+),/gm)) {
    calls += Number(c);
    usec += Number(u);
  }
  return { calls, usec };
}

/**
 * The Redis server's µs per check, ours beside the peer's (`INFO commandstats`
 * read before and after `n` sequential checks of one side; 5 alternating
 * rounds, medians), for an allowed and a refused check of 100 subjects. No
 * target: it shows what a check costs the one thread every client of the
 * Redis waits for (ours reads `TIME`, `GET`s the counter and `SETRANGE`s its newest slot;
 * the peer's fixed window `SET NX`, `INCRBY` and `PTTL`), which the rows above,
 * timed as the client's CPU, leave out.
 */
async function serverRows(): Promise<string[][] | string> {
  const url = process.env.REDIS_URL;
  if (!url) return "redis server time: REDIS_URL is not set, skipped";
  const stamp = Date.now();
  const real = await openStore("redis", url, 5, undefined, false);
  const peers = await peerOn("redis", url);
  const client = await connectRedis(url);
  try {
    // Refusals not remembered: every refused check runs the script.
    const limiter = createRateLimiter({
      ...quiet,
      store: real.store as RateLimitStore,
      refusalMemory: 0,
    });
    const rows: string[][] = [];
    for (
      const [label, policies, points] of [["allowed", ROOMY, ROOMY_LIMIT], [
        "refused",
        ONE,
        1,
      ]] as const
    ) {
      const peer = await peers.make(points, `server${label}:${stamp}`);
      const subjects = subjectsOf(100).map((s) => `${s}:server:${label}:${stamp}`);
      const sides = [
        (s: string) => limiter.check(s, policies),
        (s: string) => settle(peer.consume(s)),
      ];
      for (const side of sides) for (const s of subjects) await side(s); // active, and refused from here
      const n = QUICK ? 1_000 : 3_000;
      const us: number[][] = [[], []];
      for (let round = 0; round < 5; round++) {
        for (const k of round % 2 === 0 ? [0, 1] : [1, 0]) {
          const before = await scriptStats(client);
          for (let i = 0; i < n; i++) await sides[k](subjects[i % subjects.length]);
          const after = await scriptStats(client);
          us[k].push((after.usec - before.usec) / (after.calls - before.calls));
        }
      }
      const [ours, theirs] = us.map(median);
      rows.push([
        `${label} check (redis)`,
        fmt(ours),
        fmt(theirs),
        fmt(ours / theirs),
        "none (shown)",
      ]);
    }
    return rows;
  } finally {
    client.destroy();
    await peers.close();
    await real.close();
  }
}

const rows: Row[] = [];
await engineRows(MEMORY, SIZES.slice(0, 1), WARM_UP); // both sides' code compiled before any row is timed
rows.push(...await engineRows(MEMORY, SIZES));
const skipped: string[] = [];
for (const kind of ["redis", "postgres"] as const) {
  const engine = await remoteEngine(kind).catch((e) => `${kind}: failed (${(e as Error).message})`);
  if (typeof engine === "string") {
    skipped.push(engine);
    continue;
  }
  try {
    await engineRows(engine, SIZES.slice(0, 1), WARM_UP); // the client paths compiled first
    rows.push(...await engineRows(engine, SIZES));
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

/** Prints the rows `made` (a failure said as `what: failed`), the lines said among them first. */
async function printRows(
  what: string,
  made: () => Promise<(string[] | string)[]>,
  title: string,
  header: string[],
): Promise<void> {
  const rows: string[][] = [];
  for (const row of await made().catch((e) => [`${what}: failed (${(e as Error).message})`])) {
    if (typeof row === "string") console.log(row);
    else rows.push(row);
  }
  if (rows.length > 0) printTable(title, header, rows);
}

await printRows(
  "refused again",
  rememberedRows,
  "A subject refused before, checked again (ours: the defaults, refusals remembered), same rounds: CPU per check",
  [
    "case",
    "ours µs",
    "peer µs",
    "peer µs, inMemoryBlockOnConsumed",
    "ours ÷ peer",
    "ours ÷ peer with block",
    "target",
  ],
);
await printRows(
  "with a deadline",
  deadlineRows,
  `An allowed check with a deadline on both sides (the peer's: RLWrapperTimeouts, ${
    TIMEOUT_MS.toLocaleString("en-US")
  } ms), same rounds: CPU per check`,
  [
    "case",
    "ours µs",
    "peer µs",
    "peer µs, RLWrapperTimeouts",
    "ours ÷ peer",
    "ours ÷ peer with deadline",
    "target",
  ],
);
await printRows(
  "beside a round trip",
  floorRows,
  "An allowed check beside a bare round trip on its store (PING / SELECT 1), same rounds: CPU per call",
  [
    "case",
    "ours µs",
    "peer µs",
    "round trip µs",
    "ours ÷ peer",
    "ours ÷ round trip",
    "target",
  ],
);
await printRows(
  "concurrent callers",
  concurrentRows,
  `Allowed checks with ${CALLERS} callers at once (a server's requests in flight), same rounds: CPU per check`,
  ["case", "ours µs", "peer µs", "ours ÷ peer", "Redis µs per check, ours / peer", "target"],
);

const server = await serverRows().catch((e) =>
  `redis server time: failed (${(e as Error).message})`
);
if (typeof server === "string") console.log(server);
else {
  printTable(
    "Redis server time per check (INFO commandstats), same rounds: what the one thread spends",
    ["case", "ours µs", "peer µs", "ours ÷ peer", "target"],
    server,
  );
}

/**
 * A growth that is no growth: the cost at 100,000 subjects within 5 % of the
 * cost at 100 (one remote check's rounds differ by more than that).
 */
const FLAT = 1.05;
const [small, large] = SIZES;
printTable(
  `Growth: cost at ${large.toLocaleString("en-US")} active subjects ÷ cost at ${small}`,
  ["case", "ours", "peer", "target"],
  rows.filter((r) => r.subjects === large).map((at) => {
    const from = rows.find((r) =>
      r.kind === at.kind && r.label === at.label && r.subjects === small
    )!;
    // Median over the rounds (both sizes timed in each) of the cost at `large` ÷ at `small`.
    const [ours, peer] = [roundsRatio(at.ours, from.ours), roundsRatio(at.peer, from.peer)];
    return [
      caseOf(at),
      `${fmt(ours)}×`,
      `${fmt(peer)}×`,
      `${verdict(ours <= Math.max(peer, FLAT))} (ours ≤ peer's or ≤ ${FLAT}×)`,
    ];
  }),
);
