/**
 * Benchmark 9: rate limits. The in-memory check with 1 and 3 policies and a
 * credits spend (alone: at most 0.5×; inside an `authorize`: at most 1.5×) against a
 * cached `verify` timed in the same rounds (`MISSED` past the target, never a
 * failure); the in-memory check per policy; round trips per
 * check on Redis (counted by the server's `INFO commandstats`) and statements
 * per check on PostgreSQL (counted at the pool), for 1 and 3 policies and for
 * 3 policies with a credit balance spent in the same check; p50/p99
 * latency of a check on loopback. On Redis every command a client sends counts
 * as one round trip; the server's count of scripts run confirms it. The stores need `REDIS_URL` and
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
import { alternate, fmt, printTable, QUICK, verdict } from "./lib/harness.ts";

const N = QUICK ? 500 : 3_000;
const ALL = [
  { name: "burst", limit: 1e12, windowMs: 1_000 },
  { name: "minute", limit: 1e12, windowMs: 60_000 },
  { name: "hour", limit: 1e12, windowMs: 3_600_000 },
];
const quiet = { logger: () => {}, timeoutMs: 60_000 };

/** A balance no bench run exhausts. */
const CREDITS = { initial: 1e15 };

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
    await limiter.check(`bench:${i % 100}`, policies, { credits });
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
  const one = compileRateLimitPolicies(ALL.slice(0, 1));
  const three = compileRateLimitPolicies(ALL);
  let i = 0;
  const [verify, ...rest] = await alternate([
    { name: "cached verify", op: () => service.verify(key) },
    { name: "check, 1 policy", op: () => limiter.check(`bench:${i++ % 100}`, one) },
    { name: "check, 3 policies", op: () => limiter.check(`bench:${i++ % 100}`, three) },
    {
      name: "credits spend",
      op: () => limiter.check(`bench:${i++ % 100}`, [], { credits: CREDITS }),
    },
    { name: "authorize, credits spend", op: () => service.authorize(key) },
  ]);
  const targets = [
    ["check, 1 policy", 0.5],
    ["check, 3 policies", 0.5],
    ["credits spend per request in memory", 0.5],
    ["authorize with a credits spend (cached)", 1.5],
  ] as const;
  printTable("In-memory check and credits spend against a cached verify (same rounds)", [
    "case",
    "µs",
    "× cached verify",
    "target",
  ], [
    ["cached verify", fmt(verify.us), "1.00", "-"],
    ...rest.map((t, n) => {
      const [label, target] = targets[n];
      const ratio = t.us / verify.us;
      return [label, fmt(t.us), fmt(ratio), `${verdict(ratio <= target)} (≤ ${target}×)`];
    }),
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
