/**
 * The Redis store on a real Redis Cluster (3 masters + 3 replicas on
 * loopback, `bash scripts/start_redis.sh --cluster`, `REDIS_CLUSTER_URLS`):
 * a check whose counters have several subjects lands in one slot by its
 * `slot`; a tenant's shared credit pool through the API-key service is exact
 * across 4 processes; through the service, a rotated key and its successor
 * spend one balance, and `updateCredits` and the summaries set and read
 * balances exactly (the reads writing nothing on any node); a master killed
 * mid-run fails over, nothing counted twice.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { createCluster } from "redis";
import { ApiKeyError, ApiKeysService, InMemoryApiKeyStorage } from "../../api_keys/mod.ts";
import { createApiKeysAdminHandler } from "../../api_keys/admin/mod.ts";
import { creditBalancesOf } from "../../api_keys/metering/_limits.ts";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import type { RateLimitBalance } from "../../rate_limits/mod.ts";
import { createRedisRateLimitStore, type RedisScriptClient } from "../../rate_limits/redis/mod.ts";
import { databaseReady } from "../postgres/prisma_client.ts";
import { connectRedis, freshSubject } from "./_services.ts";

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

/** `balances` read on the cluster through a limiter of its own. */
async function readOnCluster(balances: readonly RateLimitBalance[]) {
  const cluster = await connectCluster();
  const store = createRedisRateLimitStore({
    client: cluster as unknown as RedisScriptClient,
    clustered: true,
  });
  try {
    return await createRateLimiter({ store, logger: () => {} }).readCredits(balances);
  } finally {
    store.close();
    await cluster.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const READ_ORDERS = [{ resource: "orders", level: "read" as const }];

/**
 * An `ApiKeysService` (memory records) whose limiter is the Redis store on the
 * cluster, failing closed (a `CROSSSLOT` is `api_key_rate_limit_unavailable`);
 * `lines` collects what the store and the limiter log.
 */
async function openService(persistIntervalMs?: number) {
  const cluster = await connectCluster();
  const lines: string[] = [];
  const logger = (line: string) => void lines.push(line);
  const store = createRedisRateLimitStore({
    client: cluster as unknown as RedisScriptClient,
    clustered: true,
    logger,
  });
  const limiter = createRateLimiter({ store, onStoreError: "closed", timeoutMs: 2_000, logger });
  await limiter.ready();
  const storage = new InMemoryApiKeyStorage();
  const service = new ApiKeysService({
    peppers: { 1: "cluster-suite-pepper-of-at-least-32-bytes" },
    storage,
    limiter,
    ...(persistIntervalMs === undefined ? {} : { persistIntervalMs }),
  });
  return {
    service,
    storage,
    limiter,
    lines,
    /** Fails when the cluster refused a call or the failure policy answered. */
    assertNoStoreError() {
      assert.ok(!lines.some((line) => /CROSSSLOT|unavailable|failed/.test(line)), lines.join("\n"));
    },
    async close() {
      await service.close();
      store.close();
      await cluster.close();
    },
  };
}

/** `authorize`'s outcome: `ok`, or the refusal's code and whose balance refused. */
const outcome = (service: ApiKeysService, key: string) =>
  service.authorize(key).then(
    () => "ok",
    (error) => {
      if (!(error instanceof ApiKeyError)) throw error;
      return `${error.code}${error.creditBalance ? `:${error.creditBalance}` : ""}`;
    },
  );

/**
 * Per node of the cluster (`nodes`, one client each): the calls of write
 * commands (a script's own commands count too) and of scripts, from `INFO commandstats`.
 */
async function commandCounts(nodes: Awaited<ReturnType<typeof connectRedis>>[]) {
  const writes = new Set(
    (await nodes[0].sendCommand(["COMMAND", "LIST", "FILTERBY", "ACLCAT", "write"]) as string[])
      .map((name) => name.toLowerCase()),
  );
  const counts = await Promise.all(nodes.map(async (node) => {
    const stats = String(await node.sendCommand(["INFO", "commandstats"]));
    let written = 0;
    let scripts = 0;
    for (const [, name, calls] of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      if (writes.has(name)) written += Number(calls);
      if (name.startsWith("eval")) scripts += Number(calls);
    }
    return { written, scripts };
  }));
  return {
    written: counts.map((c) => c.written),
    scripts: counts.reduce((sum, c) => sum + c.scripts, 0),
  };
}

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
      const [balance] = await readOnCluster([
        { subject: `${tenant}:predecessor`, credits: { initial: 150, slot: tenant } },
      ]);
      assert.equal(balance.remaining, 50, "each admitted check spent once");
    });

    it("through the API-key service: 4 processes' keys of one tenant (own balance 1,000 each, the tenant's pool 100) × 250 authorizes accept exactly 100, every refusal the pool's", async () => {
      const tenant = freshSubject("apikey-pool");
      const outputs = await fireProcesses(tenant, "apikey-pool");
      console.log(`cluster API-key pool: authorized per process ${outputs.map((o) => o.allowed)}`);
      assert.deepEqual(outputs.map((o) => o.unavailable), [0, 0, 0, 0]);
      assert.equal(outputs.reduce((a, o) => a + o.allowed, 0), 100);
      assert.deepEqual(outputs.map((o) => o.refusedByPool), outputs.map((o) => 250 - o.allowed));
      // The pool's one counter on the cluster holds what was spent: all of it, once each.
      const pool = creditBalancesOf("", tenant, {
        remaining: 100,
        updatedAt: new Date(),
        sharedBy: "tenant",
      });
      assert.equal((await readOnCluster(pool))[0].remaining, 0);
    });

    it("rotate() with a grace period: the new key and the old one spend one balance (60 after 20 spent) beside the tenant's pool and shared policy: exactly 60 of 100 concurrent authorizes, every refusal the key's balance; updateCredits of the new key feeds both", async () => {
      const { service, storage, assertNoStoreError, close } = await openService();
      try {
        const tenantId = freshSubject("rotate");
        const { id: oldId, key: oldKey } = await service.create({
          tenantId,
          name: "plan",
          scopes: READ_ORDERS,
          rateLimits: [
            { name: "key", limit: 1_000, windowMs: 60_000 },
            { name: "tenant", limit: 1_000, windowMs: 60_000, sharedBy: "tenant" },
          ],
          credits: { remaining: 80, pool: { remaining: 1_000 } },
        });
        for (let i = 0; i < 20; i++) assert.equal(await outcome(service, oldKey), "ok");
        const rotated = await service.rotate(oldId, { gracePeriodMs: 60_000 });
        const inherited = (await storage.findById(rotated.id))!.credits!;
        assert.deepEqual(
          [inherited.remaining, inherited.balanceKeyId, inherited.pool?.remaining],
          [60, oldId, 980],
        );
        const keys = [rotated.key, oldKey];
        const answers = await Promise.all(
          Array.from({ length: 100 }, (_, i) => outcome(service, keys[i % 2])),
        );
        assert.equal(answers.filter((a) => a === "ok").length, 60);
        assert.deepEqual(
          [...new Set(answers.filter((a) => a !== "ok"))],
          ["api_key_usage_exceeded:key"],
        );
        for (const k of [0, 1]) {
          assert.ok(answers.some((a, i) => i % 2 === k && a === "ok"), `key ${k} spent`);
        }
        // 80 admitted on the chain's window counter and the tenant's, refused checks counted on none.
        const probe = await service.authorize(rotated.key, { cost: 0 });
        assert.deepEqual(probe.rateLimitResults!.map((r) => r.remaining), [920, 920]);
        const summaries = await service.listSummaries(tenantId);
        assert.deepEqual(
          Object.fromEntries(
            summaries.map((s) => [s.id, [s.credits?.remaining, s.tenantCredits?.remaining]]),
          ),
          { [rotated.id]: [0, 920], [oldId]: [0, 920] },
        );

        assert.equal((await service.updateCredits(tenantId, rotated.id, { add: 5 })).remaining, 5);
        const more = await Promise.all(
          Array.from({ length: 10 }, (_, i) => outcome(service, keys[i % 2])),
        );
        assert.equal(more.filter((a) => a === "ok").length, 5);
        assert.equal((await service.tenantCredits(tenantId))?.remaining, 915);
        assertNoStoreError();
      } finally {
        await close();
      }
    });

    it("updateCredits sets and adds a key's balance and the tenant's pool, spends count once, and the summaries and the admin list read them back exact, writing nothing on any node", async () => {
      const { service, assertNoStoreError, close } = await openService();
      const nodes = await Promise.all(URLS.map((url) => connectRedis(url)));
      try {
        const tenantId = freshSubject("credits");
        const own = await service.create({
          tenantId,
          name: "own",
          scopes: READ_ORDERS,
          credits: { remaining: 10, pool: { remaining: 100 } },
        });
        const pooled = await service.create({
          tenantId,
          name: "pooled",
          scopes: READ_ORDERS,
          credits: { remaining: 100, sharedBy: "tenant" },
        });
        const changed = [];
        changed.push(await service.updateCredits(tenantId, own.id, { set: 50 }));
        changed.push(await service.updateCredits(tenantId, own.id, { add: 25 }));
        changed.push(await service.updateCredits(tenantId, null, { set: 200 }));
        changed.push(await service.updateCredits(tenantId, null, { add: -20 }));
        assert.deepEqual(changed.map((b) => b.remaining), [50, 75, 200, 180]);
        const spends = await Promise.all([
          ...Array.from({ length: 3 }, () => outcome(service, own.key)),
          ...Array.from({ length: 2 }, () => outcome(service, pooled.key)),
        ]);
        assert.deepEqual(spends, Array(5).fill("ok"));

        const before = await commandCounts(nodes);
        const summaries = await service.listSummaries(tenantId);
        const pool = await service.tenantCredits(tenantId);
        const admin = createApiKeysAdminHandler<null>({
          service,
          scopes: ["orders:read"],
          tenantOf: () => tenantId,
          canManage: () => true,
          policy: () => null,
        });
        const answer = (await admin({
          method: "GET",
          path: "/keys",
          query: () => null,
          headers: () => null,
          body: null,
        }, null))!;
        const after = await commandCounts(nodes);
        assert.deepEqual(after.written, before.written, "no write command on any node");
        assert.ok(after.scripts > before.scripts, "the balances were read from the cluster");

        assert.deepEqual(
          Object.fromEntries(
            summaries.map((s) => [s.name, [s.credits?.remaining, s.tenantCredits?.remaining]]),
          ),
          { own: [72, 175], pooled: [undefined, 175] },
        );
        assert.equal(pool?.remaining, 175);
        assert.equal(answer.status, 200, answer.body);
        const list = JSON.parse(answer.body) as {
          keys: { name: string; credits?: number; creditsSharedBy?: string }[];
          tenantCredits: { credits: number } | null;
        };
        assert.deepEqual(
          Object.fromEntries(list.keys.map((k) => [k.name, [k.credits, k.creditsSharedBy]])),
          { own: [72, undefined], pooled: [175, "tenant"] },
        );
        assert.equal(list.tenantCredits?.credits, 175);
        assertNoStoreError();
      } finally {
        for (const node of nodes) node.destroy();
        await close();
      }
    });

    it("the service's credit write-back drains the balances of several tenants (several slots) each interval: every record gets its balance back, close() too", async () => {
      const { service, storage, assertNoStoreError, close } = await openService(100);
      try {
        const created = await Promise.all(
          [{ remaining: 10 }, { remaining: 10, pool: { remaining: 50 } }, {
            remaining: 50,
            sharedBy: "tenant" as const,
          }].map((credits, i) =>
            service.create({
              tenantId: freshSubject(`drain${i}`),
              name: "k",
              scopes: READ_ORDERS,
              credits,
            })
          ),
        );
        for (const [i, { key }] of created.entries()) {
          for (let n = 0; n <= i; n++) assert.equal(await outcome(service, key), "ok");
        }
        const stored = async () =>
          await Promise.all(created.map(async ({ id }) => {
            const credits = (await storage.findById(id))!.credits!;
            return [credits.remaining, credits.pool?.remaining];
          }));
        const expected = [[9, undefined], [8, 48], [47, undefined]];
        const until = Date.now() + 3_000;
        while (Date.now() < until && JSON.stringify(await stored()) !== JSON.stringify(expected)) {
          await sleep(50);
        }
        assert.deepEqual(await stored(), expected, "written back within 3 s (interval 100 ms)");
        assert.equal(await outcome(service, created[0].key), "ok");
        await service.close();
        assert.deepEqual((await stored())[0], [8, undefined], "close() wrote back");
        assertNoStoreError();
      } finally {
        await close();
      }
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
