/**
 * Benchmark 9: rate limits. The in-memory check with 1 and 3 policies and a
 * credits spend (alone: at most 0.5×; inside an `authorize`: at most 1.5×; also
 * spending a tenant's pool beside the key's own balance: at most 1.5× plus what the
 * second balance costs the store, a spend of both less a spend of one, with the
 * options kept as `authorize` keeps them, per round), the limit's added cost in
 * `authorize` (a key with 1 policy less a key without: at most 0.5×) and the
 * `authorize` of a key without limits or credits (no target: its own work) against a
 * cached `verify` timed in the same rounds as process CPU (`alternateCpu`: a
 * shared machine's other processes do not count; each ratio the median of the
 * rounds' ratios; `MISSED` past the target, never a failure); the in-memory check per policy; round trips per
 * check on Redis (counted by the server's `INFO commandstats`) and statements
 * per check on PostgreSQL (counted at the pool), for 1 and 3 policies and for
 * 3 policies with a credit balance spent in the same check; p50/p99
 * latency of a check on loopback. On Redis every command a client sends counts
 * as one round trip; the server's count of scripts run confirms it. Then the
 * checks per second one hot key sustains against a new key per check (200
 * callers, default options; PostgreSQL `MISSED` under 2,000/s), and the ms
 * until a check is counted again after an outage (the test's own
 * redis-server killed and restarted; PostgreSQL backends terminated). The stores need `REDIS_URL` and
 * `DATABASE_URL` (scripts/start_redis.sh, scripts/start_postgres.sh); a missing
 * one is said and skipped.
 *
 * Run: `deno run -A bench/rate_limits.ts [--quick]`.
 *
 * @module
 */
import { ApiKeysService } from "../api_keys/service.ts";
import { createRateLimiter } from "../rate_limits/limiter.ts";
import { compileRateLimitPolicies } from "../rate_limits/policy.ts";
import type { RateLimitStore } from "../rate_limits/store.ts";
import { connectRedis, openStore } from "../tests/limits/_services.ts";
import { creditedKey, CreditedStorage } from "../tests/api_keys/credited_storage.ts";
import { READ_ORDERS } from "../tests/api_keys/helpers.ts";
import {
  alternateCpu,
  fmt,
  median,
  printTable,
  QUICK,
  type Timing,
  verdict,
} from "./lib/harness.ts";

const N = QUICK ? 500 : 3_000;
/**
 * Never exhausted in a run, and a small integer in V8 (as real limits and
 * balances are: 10^12 would make every `remaining` a boxed double), as in
 * bench/rate_limits_peer.ts.
 */
const ROOMY = 1e9;
const ALL = [
  { name: "burst", limit: ROOMY, windowMs: 1_000 },
  { name: "minute", limit: ROOMY, windowMs: 60_000 },
  { name: "hour", limit: ROOMY, windowMs: 3_600_000 },
];
const quiet = { logger: () => {}, timeoutMs: 60_000 };

/** A balance no bench run exhausts. */
const CREDITS = { initial: ROOMY };

/**
 * 100 subjects, made once: a server's subject is a string it keeps (a key's
 * id), hashed once, as the cached verify's key is.
 */
const SUBJECTS = Array.from({ length: 100 }, (_, i) => `bench:${i}`);

/** Latencies in ms of `n` sequential checks of `policies` (cost 1), spending `credits` when given. */
async function latencies(
  store: RateLimitStore | undefined,
  policies: typeof ALL,
  n: number,
  credits?: typeof CREDITS,
) {
  const limiter = createRateLimiter({ ...quiet, store });
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await limiter.check(SUBJECTS[i % 100], policies, { credits });
    out.push(performance.now() - start);
  }
  return out.sort((a, b) => a - b);
}
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

/** Scripts the server ran (`EVALSHA` and `EVAL` in INFO commandstats). */
async function redisCalls(client: Awaited<ReturnType<typeof connectRedis>>): Promise<number> {
  const info = await client.info("commandstats");
  let calls = 0;
  for (const match of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)) {
    calls += Number(match[2]);
  }
  return calls;
}

/**
 * The in-memory check with 1 and 3 policies, a credits spend alone and an
 * `authorize` spending credits, next to a cached `verify`, timed alternately.
 */
async function againstCachedVerify(): Promise<void> {
  const storage = new CreditedStorage();
  const limiter = createRateLimiter(quiet);
  const service = new ApiKeysService({
    peppers: { 1: "bench-pepper-of-at-least-thirty-two-bytes" },
    storage,
    cache: { ttlMs: 60_000 },
    limiter,
  });
  const { key } = await creditedKey(service, storage, { remaining: CREDITS.initial });
  await service.verify(key);
  const plain = await service.create({ tenantId: "t1", name: "plain", scopes: READ_ORDERS });
  const limited = await service.create({
    tenantId: "t1",
    name: "limited",
    scopes: READ_ORDERS,
    rateLimits: [{ name: "minute", limit: ROOMY, windowMs: 60_000 }],
  });
  const pooled = await creditedKey(service, storage, {
    remaining: CREDITS.initial,
    pool: { remaining: CREDITS.initial, updatedAt: new Date(0) },
  });
  for (const k of [plain.key, limited.key, pooled.key]) await service.authorize(k);
  const one = compileRateLimitPolicies(ALL.slice(0, 1));
  const three = compileRateLimitPolicies(ALL);
  // A key's balance, and with it its tenant's pool, as `authorize` keeps them: frozen, checked
  // once for the key.
  const NO_POLICIES = Object.freeze([]);
  const own = Object.freeze({ credits: Object.freeze({ ...CREDITS }) });
  const both = Object.freeze({
    credits: Object.freeze([own.credits, Object.freeze({ ...CREDITS, subject: "bench-pool" })]),
  });
  let i = 0;
  const [verify, ...rest] = await alternateCpu([
    () => service.verify(key),
    () => limiter.check(SUBJECTS[i++ % 100], one),
    () => limiter.check(SUBJECTS[i++ % 100], three),
    () => limiter.check(SUBJECTS[i++ % 100], [], { credits: CREDITS }),
    () => service.authorize(key),
    () => service.authorize(pooled.key),
    () => service.authorize(plain.key), // no limit
    () => service.authorize(limited.key), // 1 policy
    () => limiter.check(SUBJECTS[0], NO_POLICIES, own), // one key's requests, as the pool row's
    () => limiter.check(SUBJECTS[0], NO_POLICIES, both),
  ]);
  const [ownSpend, bothSpend] = rest.splice(-2, 2);
  const unlimited = rest.splice(-2, 1)[0];
  // The limit's cost inside authorize: a key with 1 policy less a key without any, per round.
  const withPolicy = rest.at(-1)!;
  const added = withPolicy.rounds.map((us, r) => us - unlimited.rounds[r]);
  rest[rest.length - 1] = { us: median(added), rounds: added };
  /** Median over the rounds of a case's µs ÷ the cached verify's of the same round. */
  const ratioOf = (t: Timing) => median(t.rounds.map((us, r) => us / verify.rounds[r]));
  // The store's cost of a second balance, per round: what the pool row may add to 1.5×.
  const second = bothSpend.rounds.map((us, r) => us - ownSpend.rounds[r]);
  const poolTarget = Number((1.5 + Math.max(0, ratioOf({ us: median(second), rounds: second })))
    .toFixed(2));
  const targets = [
    ["check, 1 policy", 0.5],
    ["check, 3 policies", 0.5],
    ["credits spend per request in memory", 0.5],
    ["authorize with a credits spend (cached)", 1.5],
    ["authorize with its own and the tenant's pool spent (cached)", poolTarget],
    ["the limit's added cost in authorize (1 policy)", 0.5],
  ] as const;
  printTable("In-memory check and credits spend against a cached verify (same rounds, CPU)", [
    "case",
    "CPU µs",
    "× cached verify",
    "target",
  ], [
    ["cached verify", fmt(verify.us), "1.00", "-"],
    [
      "authorize, a key without limits or credits (cached)",
      fmt(unlimited.us),
      fmt(ratioOf(unlimited)),
      "-",
    ],
    ...rest.map((t, n) => {
      const [label, target] = targets[n];
      const ratio = ratioOf(t);
      return [label, fmt(t.us), fmt(ratio), `${verdict(ratio <= target)} (≤ ${target}×)`];
    }),
    ["a key's balance spent (options kept)", fmt(ownSpend.us), fmt(ratioOf(ownSpend)), "-"],
    [
      "its tenant's pool beside it (the pool row's target: 1.5× + the difference)",
      fmt(bothSpend.us),
      fmt(ratioOf(bothSpend)),
      "-",
    ],
  ]);
}

await againstCachedVerify();
const rows: string[][] = [];
await latencies(undefined, ALL, N); // warm up the JIT
const SHAPES = [
  { count: 1, label: "1" },
  { count: 3, label: "3" },
  { count: 3, label: "3 + credits", credits: CREDITS },
];
for (const { count, label, credits } of SHAPES) {
  const sorted = await latencies(undefined, ALL.slice(0, count), N * 10, credits);
  rows.push([
    "memory",
    label,
    `${fmt(pct(sorted, 0.5) * 1000 / (count + (credits ? 1 : 0)))} µs/counter (p50)`,
    "-",
    fmt(pct(sorted, 0.5) * 1000),
    fmt(pct(sorted, 0.99) * 1000),
  ]);
}
for (const kind of ["redis", "postgres"] as const) {
  const url = Deno.env.get(kind === "redis" ? "REDIS_URL" : "DATABASE_URL");
  if (!url) {
    console.log(`${kind}: ${kind === "redis" ? "REDIS_URL" : "DATABASE_URL"} is not set, skipped`);
    continue;
  }
  const real = await openStore(kind);
  const info = kind === "redis" ? await connectRedis(url) : undefined;
  try {
    for (const { count, label, credits } of SHAPES) {
      await latencies(real.store, ALL.slice(0, count), 50, credits); // warm: connections, script cache
      const sentBefore = real.sent();
      const serverBefore = info ? await redisCalls(info) : 0;
      const sorted = await latencies(real.store, ALL.slice(0, count), N, credits);
      const sent = (real.sent() - sentBefore) / N;
      const scripts = info ? (await redisCalls(info) - serverBefore) / N : sent;
      if (sent !== 1 || scripts !== 1) throw new Error(`${kind} ${label}: ${sent} sent per check`);
      rows.push([
        kind,
        label,
        "-",
        info
          ? `${fmt(sent)} sent, ${fmt(scripts)} scripts run (server)`
          : `${fmt(sent)} statements`,
        fmt(pct(sorted, 0.5) * 1000),
        fmt(pct(sorted, 0.99) * 1000),
      ]);
    }
  } finally {
    await real.close();
    info?.destroy();
  }
}
printTable(`Rate limits: ${N} checks per store row (memory ×10), cost 1`, [
  "store",
  "policies",
  "in-memory cost",
  "round trips per check",
  "p50 µs",
  "p99 µs",
], rows);

// ---- One hot key against cold keys, and outage recovery (issue 40) ----

/** Hot-key target on PostgreSQL: sustained checks per second of one key (default options). */
const HOT_TARGET_PER_S = 2_000;
/** Recovery target after an outage (the limits suite's hard bound is 15 s). */
const RECOVERY_TARGET_MS = 2_000;

/**
 * Checks per second sustained by 200 concurrent callers for `ms` through a
 * limiter with default options: every check on one subject (`hot`) or each on
 * a subject of its own (cold); with the answers given by the failure policy.
 */
async function sustained(store: RateLimitStore, hot: boolean, ms: number) {
  const limiter = createRateLimiter({ store, logger: () => {} });
  const policy = [{ name: "sustained", limit: ROOMY, windowMs: 60_000 }];
  const run = crypto.randomUUID();
  let counted = 0;
  let byPolicy = 0;
  let n = 0;
  const until = performance.now() + ms;
  await Promise.all(Array.from({ length: 200 }, async () => {
    while (performance.now() < until) {
      const subject = hot ? `hot:${run}` : `cold:${run}:${n++}`;
      const result = await limiter.check(subject, policy);
      if (result.outcome === "store") counted++;
      else byPolicy++;
    }
  }));
  return { perS: counted / (ms / 1_000), byPolicy };
}

/** Ms from `restore()` until a check is counted again (polled every 20 ms, at most 15 s; -1 past it). */
async function recovery(store: RateLimitStore, restore: () => Promise<void>): Promise<number> {
  const limiter = createRateLimiter({ store, logger: () => {} });
  const policy = [{ name: "recovery", limit: ROOMY, windowMs: 60_000 }];
  await restore();
  const start = performance.now();
  while (performance.now() - start < 15_000) {
    if ((await limiter.check("recovery", policy)).outcome === "store") {
      return performance.now() - start;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return -1;
}

const hotRows: string[][] = [];
const SUSTAIN_MS = QUICK ? 1_000 : 3_000;
for (const kind of ["postgres", "redis"] as const) {
  if (!Deno.env.get(kind === "redis" ? "REDIS_URL" : "DATABASE_URL")) continue;
  const real = await openStore(kind, undefined, 10);
  try {
    await sustained(real.store, false, 300); // warm: connections, script cache, plans
    const hot = await sustained(real.store, true, SUSTAIN_MS);
    const cold = await sustained(real.store, false, SUSTAIN_MS);
    const pass = kind === "redis" || hot.perS >= HOT_TARGET_PER_S;
    hotRows.push([
      kind,
      fmt(hot.perS, 0),
      fmt(cold.perS, 0),
      fmt(hot.perS / cold.perS),
      `${hot.byPolicy} / ${cold.byPolicy}`,
      kind === "postgres" ? `${verdict(pass)} (hot ≥ ${HOT_TARGET_PER_S}/s)` : "-",
    ]);
  } finally {
    await real.close();
  }
}
printTable(
  `Sustained checks per second, 200 callers × ${SUSTAIN_MS} ms, default options (one hot key vs a new key per check)`,
  ["store", "hot key /s", "cold keys /s", "hot ÷ cold", "by failure policy (hot / cold)", "target"],
  hotRows,
);

const recoveryRows: string[][] = [];
const { hasRedisServer, startOwnRedis } = await import("../tests/limits/_own_redis.ts");
if (hasRedisServer()) {
  const own = await startOwnRedis();
  const client = await connectRedis(own.url, 2_000, undefined, false);
  const { createRedisRateLimitStore } = await import("../rate_limits/redis/mod.ts");
  const store = createRedisRateLimitStore({ client, logger: () => {} });
  try {
    const ms = await recovery(store, async () => {
      await own.kill();
      await new Promise((resolve) => setTimeout(resolve, 500));
      await own.restart();
    });
    recoveryRows.push([
      "redis (killed, restarted)",
      fmt(ms, 0),
      verdict(ms >= 0 && ms <= RECOVERY_TARGET_MS),
    ]);
  } finally {
    store.close();
    client.destroy();
    await own.stop();
  }
}
const databaseUrl = Deno.env.get("DATABASE_URL");
if (databaseUrl) {
  const { default: pg } = await import("pg");
  const { createPostgresRateLimitStore } = await import("../rate_limits/postgres/mod.ts");
  const name = `bench-${crypto.randomUUID().slice(0, 8)}`;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 3, application_name: name });
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const store = createPostgresRateLimitStore({ pool, logger: () => {} });
  try {
    await sustained(store, false, 200);
    const ms = await recovery(store, async () => {
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        [name],
      );
    });
    recoveryRows.push([
      "postgres (backends terminated)",
      fmt(ms, 0),
      verdict(ms >= 0 && ms <= RECOVERY_TARGET_MS),
    ]);
  } finally {
    store.close();
    await Promise.all([pool.end(), admin.end()]);
  }
}
printTable(
  `Outage recovery: ms until a check is counted again (target ≤ ${RECOVERY_TARGET_MS} ms)`,
  [
    "store",
    "recovery ms",
    "verdict",
  ],
  recoveryRows,
);
