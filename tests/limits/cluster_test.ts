/**
 * The Redis store on a real Redis Cluster (3 masters + 3 replicas on
 * loopback, `bash scripts/start_redis.sh --cluster`, `REDIS_CLUSTER_URLS`):
 * a check whose counters have several subjects lands in one slot by its
 * `slot`; a tenant's shared credit pool through the API-key service is exact
 * across 4 processes; a master killed mid-run fails over, nothing counted twice.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { createCluster } from "redis";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { createRedisRateLimitStore, type RedisScriptClient } from "../../rate_limits/redis/mod.ts";
import { databaseReady } from "../postgres/prisma_client.ts";
import { freshSubject } from "./_services.ts";

const URLS = process.env.REDIS_CLUSTER_URLS?.split(",").filter(Boolean) ?? [];

/** A connected cluster client as the docs set it up (no offline queue). */
async function connectCluster() {
  const cluster = createCluster({
    rootNodes: URLS.map((url) => ({ url })),
    defaults: {
      disableOfflineQueue: true,
      socket: { connectTimeout: 1_000, reconnectStrategy: 100 },
    },
  });
  cluster.on("error", () => {});
  return await cluster.connect();
}

/** Runs 4 cluster_fire.ts processes × 250 checks at one wall-clock time; returns their answers. */
async function fireProcesses(tenant: string, mode?: string) {
  const children = [0, 1, 2, 3].map(() =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "tests/limits/cluster_fire.ts", tenant, "250", ...(mode ? [mode] : [])],
      cwd: new URL("../..", import.meta.url).pathname,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn()
  );
  const readers = children.map((c) => c.stdout.pipeThrough(new TextDecoderStream()).getReader());
  const line = async (reader: ReadableStreamDefaultReader<string>) => {
    let seen = "";
    while (!seen.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    return seen.trim();
  };
  assert.deepEqual(await Promise.all(readers.map(line)), Array(4).fill("ready"));
  const at = `${Date.now() + 300}\n`;
  for (const child of children) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(at));
    await writer.close();
  }
  const outputs = (await Promise.all(readers.map(line))).map((out) =>
    JSON.parse(out) as { allowed: number; unavailable: number; refusedByPool: number }
  );
  for (const child of children) assert.equal((await child.status).code, 0);
  return outputs;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

if (
  databaseReady(
    "rate limits on Redis Cluster",
    URLS.length === 6
      ? undefined
      : "REDIS_CLUSTER_URLS is not set (scripts/start_redis.sh --cluster)",
  )
) {
  describe("the Redis store on a Redis Cluster (3 masters + 3 replicas)", () => {
    it("a key's policy, its tenant's shared policy and its predecessor's balance in one slot: exact; without the slot, CROSSSLOT is the failure policy's", async () => {
      const cluster = await connectCluster();
      const store = createRedisRateLimitStore({
        client: cluster as unknown as RedisScriptClient,
        clustered: true,
      });
      try {
        const limiter = createRateLimiter({ store, onStoreError: "closed", timeoutMs: 2_000 });
        await limiter.ready();
        const tenant = `tenant:${freshSubject("t")}`;
        const keys = [`key:${freshSubject("a")}`, `key:${freshSubject("b")}`];
        const predecessor = `key:${freshSubject("p")}`;
        const policies = [
          { name: "key", limit: 30, windowMs: 60_000 },
          { name: "shared", limit: 40, windowMs: 60_000 },
        ];
        const answers = await Promise.all(
          Array.from({ length: 100 }, (_, i) => {
            const key = keys[i % 2];
            return limiter.check(key, policies, {
              subjects: [key, tenant],
              slot: tenant,
              credits: { subject: predecessor, initial: 35 },
            });
          }),
        );
        assert.ok(answers.every((a) => !a.unavailable), "every check answered by the cluster");
        // The balance (35) binds first: exactly 35 admitted, each counted once on every counter.
        assert.equal(answers.filter((a) => a.allowed).length, 35);
        const [read] = await limiter.readCredits([
          { subject: predecessor, credits: { initial: 35, slot: tenant } },
        ]);
        assert.equal(read.remaining, 0);
        const after = await limiter.check(keys[0], policies, {
          subjects: [keys[0], tenant],
          slot: tenant,
          cost: 0,
        });
        assert.equal(after.policies[1].remaining, 40 - 35);

        // Without a slot these counters span slots: Redis refuses (CROSSSLOT), closed refuses.
        const spread = await limiter.check(keys[0], policies, { subjects: [keys[0], tenant] });
        assert.equal(spread.unavailable, true);
        assert.equal(spread.allowed, false);
      } finally {
        store.close();
        await cluster.close();
      }
    });

    it("exact across 4 processes: a tenant's shared policy (100) beside each key's, a predecessor's balance (150), one slot", async () => {
      const tenant = `tenant:${freshSubject("exact")}`;
      const outputs = await fireProcesses(tenant);
      console.log(`cluster exactness: allowed per process ${outputs.map((o) => o.allowed)}`);
      assert.deepEqual(outputs.map((o) => o.unavailable), [0, 0, 0, 0]);
      assert.equal(outputs.reduce((a, o) => a + o.allowed, 0), 100);
      const cluster = await connectCluster();
      const store = createRedisRateLimitStore({
        client: cluster as unknown as RedisScriptClient,
        clustered: true,
      });
      try {
        const limiter = createRateLimiter({ store, logger: () => {} });
        const [balance] = await limiter.readCredits([
          { subject: `${tenant}:predecessor`, credits: { initial: 150, slot: tenant } },
        ]);
        assert.equal(balance.remaining, 50, "each admitted check spent once");
      } finally {
        store.close();
        await cluster.close();
      }
    });

    it("through the API-key service: 4 processes' keys of one tenant (own balance 1,000 each, the tenant's pool 100) × 250 authorizes accept exactly 100, every refusal the pool's", async () => {
      const tenant = freshSubject("apikey-pool");
      const outputs = await fireProcesses(tenant, "apikey-pool");
      console.log(`cluster API-key pool: authorized per process ${outputs.map((o) => o.allowed)}`);
      assert.deepEqual(outputs.map((o) => o.unavailable), [0, 0, 0, 0]);
      assert.equal(outputs.reduce((a, o) => a + o.allowed, 0), 100);
      assert.deepEqual(outputs.map((o) => o.refusedByPool), outputs.map((o) => 250 - o.allowed));
    });

    it("a master killed mid-run: the failure policy answers meanwhile, counting resumes on the promoted replica, nothing counted twice", async () => {
      const cluster = await connectCluster();
      const store = createRedisRateLimitStore({
        client: cluster as unknown as RedisScriptClient,
        clustered: true,
      });
      const limiter = createRateLimiter({ store, onStoreError: "closed", timeoutMs: 500 });
      const tenant = `tenant:${freshSubject("failover")}`;
      const policies = [{ name: "api", limit: 1_000_000, windowMs: 600_000 }];
      const check = () => limiter.check(tenant, policies, { slot: tenant });
      try {
        await limiter.ready();
        for (let i = 0; i < 20; i++) assert.equal((await check()).allowed, true);
        // The master serving the tenant's slot.
        const master = await cluster.getNodeClientForKey(`{${tenant}}`, false);
        const pid = Number(String(await master.info("server")).match(/process_id:(\d+)/)![1]);
        process.kill(pid, "SIGKILL");
        let allowed = 20;
        let refused = 0;
        const until = Date.now() + 30_000;
        let resumed = false;
        while (Date.now() < until && !resumed) {
          const answer = await check();
          if (answer.allowed) {
            allowed++;
            resumed = !answer.unavailable;
          } else {
            assert.equal(answer.unavailable, true, "closed: only the failure policy refuses");
            refused++;
            await sleep(100);
          }
        }
        assert.ok(resumed, `counting resumed after the failover (${refused} refused meanwhile)`);
        assert.ok(refused > 0, "the failure policy answered while the master was down");
        // Replicas got every acknowledged write? Redis replication is asynchronous: the
        // promoted replica holds at most what was acknowledged, never more (nothing twice).
        const now = await limiter.check(tenant, policies, { slot: tenant, cost: 0 });
        assert.ok(
          now.policies[0].remaining >= 1_000_000 - allowed,
          String(now.policies[0].remaining),
        );
      } finally {
        store.close();
        await cluster.close().catch(() => {});
      }
    });
  });
}
