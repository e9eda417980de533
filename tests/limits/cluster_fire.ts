/**
 * One process of the Redis Cluster exactness test: connects to the cluster
 * (`REDIS_CLUSTER_URLS`), prints `ready`, reads a wall-clock time (ms) on
 * stdin and fires `count` concurrent checks at that time, each of a key
 * (`<tenant>:a` or `:b`) against its own policy and its tenant's shared policy
 * (limit 100), spending its predecessor's balance (150), all in the tenant's
 * slot; with `apikey-pool`, `authorize` of an API key of this process
 * (tenant `<tenant>`) spending its own balance (1,000) and the tenant's pool
 * (100); prints `{"allowed":N,"unavailable":N,"refusedByPool":N}`.
 *
 *   deno run -A tests/limits/cluster_fire.ts <tenant subject> <count> [apikey-pool]
 */
import process from "node:process";
import { createCluster } from "redis";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { createRedisRateLimitStore, type RedisScriptClient } from "../../rate_limits/redis/mod.ts";
import { connectWithin } from "./_connect_within.ts";
import { pooledKey } from "./_pooled_key.ts";

const [tenant, count, mode] = process.argv.slice(2);
const cluster = createCluster({
  rootNodes: (process.env.REDIS_CLUSTER_URLS ?? "").split(",").map((url) => ({ url })),
  defaults: { disableOfflineQueue: true, socket: { connectTimeout: 2_000 } },
});
cluster.on("error", () => {});
await connectWithin(cluster, 10_000, "the Redis Cluster", "is every node up?");
const store = createRedisRateLimitStore({
  client: cluster as unknown as RedisScriptClient,
  clustered: true,
  logger: () => {},
});
const limiter = createRateLimiter({ store, timeoutMs: 30_000, logger: () => {} });
await limiter.ready();
const policies = [
  { name: "key", limit: 1_000, windowMs: 60_000 },
  { name: "shared", limit: 100, windowMs: 60_000 },
];
const check = (key: string, cost?: number) =>
  limiter.check(key, policies, {
    cost,
    subjects: [key, tenant],
    slot: tenant,
    credits: { subject: `${tenant}:predecessor`, initial: 150 },
  });
await check(`${tenant}:a`, 0); // warms the connections (cost 0: nothing counted)
const pooled = mode === "apikey-pool" ? await pooledKey(store, tenant, 1_000, 100) : undefined;
console.log("ready");
const go = await new Promise<string>((resolve) => process.stdin.once("data", resolve));
process.stdin.pause();
await new Promise((resolve) => setTimeout(resolve, Number(String(go).trim()) - Date.now()));
const results = await Promise.all(
  Array.from(
    { length: Number(count) },
    (_, i) => pooled?.spend() ?? check(`${tenant}:${i % 2 ? "a" : "b"}`),
  ),
);
store.close();
await cluster.close();
console.log(JSON.stringify({
  allowed: results.filter((r) => r.allowed).length,
  unavailable: results.filter((r) => r.unavailable).length,
  refusedByPool: results.filter((r) => r.balances?.[1]?.allowed === false).length,
}));
