/**
 * The Redis store on a real Redis Cluster (3 masters + 3 replicas on
 * loopback, `bash scripts/start_redis.sh --cluster`, `REDIS_CLUSTER_URLS`):
 * a check whose counters have several subjects lands in one slot by its
 * `slot`; a tenant's shared credit pool through the API-key service is exact
 * across 4 processes; through the service, a rotated key and its successor
 * spend one balance, and `updateCredits` and the summaries set and read
 * balances exactly (the reads writing nothing on any node); a live reshard of
 * a tenant's slot while its keys spend counts each authorize once or answers
 * it by the failure policy, and the write-back drains from the new owner; a
 * master killed mid-run fails over, nothing counted twice, also while the
 * write-back drains the pool it holds.
 */
import { after, describe, it } from "node:test";
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
import { connectWithin } from "./_connect_within.ts";
import { connectRedis, freshSubject } from "./_services.ts";

const URLS = process.env.REDIS_CLUSTER_URLS?.split(",").filter(Boolean) ?? [];

/** How long a connect to the cluster or one of its nodes may take (a dead node: forever). */
const CONNECT_MS = 10_000;
/** What to do when a connect takes longer. */
const RESTART_HINT = "is every node up? `bash scripts/start_redis.sh --cluster` (with " +
  "REDIS_CLUSTER_PORT) replaces a cluster that is not whole; then set REDIS_CLUSTER_URLS as it prints";

/** A connected cluster client as the docs set it up (no offline queue, topology refresh after 1 s). */
async function connectCluster() {
  const cluster = createCluster({
    rootNodes: URLS.map((url) => ({ url })),
    defaults: {
      disableOfflineQueue: true,
      socket: { connectTimeout: 1_000, reconnectStrategy: 100 },
    },
    topologyRefreshOnReconnectionAttemptStrategy: 1_000,
  });
  cluster.on("error", () => {});
  return await connectWithin(cluster, CONNECT_MS, `the Redis Cluster at ${URLS}`, RESTART_HINT);
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

/**
 * Each of `ids`' balances on the cluster now, its own and its tenant's pool (`readOnCluster`: a
 * failing read rejects), and as its record in `storage` holds them.
 */
async function balancesOf(storage: InMemoryApiKeyStorage, ids: readonly string[]) {
  const records = await Promise.all(ids.map(async (id) => (await storage.findById(id))!));
  const live = await Promise.all(
    records.map(async (r) =>
      (await readOnCluster(creditBalancesOf(r.id, r.tenantId, r.credits!))).map((b) => b.remaining)
    ),
  );
  const stored = records.map((r) => [r.credits!.remaining, r.credits!.pool?.remaining]);
  return { live, stored };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const READ_ORDERS = [{ resource: "orders", level: "read" as const }];

/**
 * `cluster` as the store's client, the first word of each error reply it
 * answers a script with (`TRYAGAIN`, `NOSCRIPT`, …) counted in `errors`.
 */
function recordingErrors(
  cluster: Awaited<ReturnType<typeof connectCluster>>,
  errors: Map<string, number>,
): RedisScriptClient {
  const client = cluster as unknown as RedisScriptClient;
  const counted = (error: unknown): never => {
    const word = String((error as Error)?.message).split(" ")[0];
    errors.set(word, (errors.get(word) ?? 0) + 1);
    throw error;
  };
  return {
    evalSha: (sha1, call) => client.evalSha(sha1, call).catch(counted),
    eval: (script, call) => client.eval(script, call).catch(counted),
    get isOpen() {
      return client.isOpen;
    },
    get isReady() {
      return client.isReady;
    },
    on: (event, listener) => client.on!(event, listener),
    off: (event, listener) => client.off!(event, listener),
  };
}

/**
 * An `ApiKeysService` (memory records) whose limiter is the Redis store on the
 * cluster, failing closed (a `CROSSSLOT` is `api_key_rate_limit_unavailable`);
 * `lines` collects what the store and the limiter log; with `errors`, the
 * error replies of the store's scripts are counted there (`recordingErrors`).
 */
async function openService(
  persistIntervalMs?: number,
  errors?: Map<string, number>,
  timeoutMs = 2_000,
) {
  const cluster = await connectCluster();
  const lines: string[] = [];
  const logger = (line: string) => void lines.push(line);
  const store = createRedisRateLimitStore({
    client: errors === undefined
      ? cluster as unknown as RedisScriptClient
      : recordingErrors(cluster, errors),
    clustered: true,
    logger,
  });
  const limiter = createRateLimiter({ store, onStoreError: "closed", timeoutMs, logger });
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
async function commandCounts(nodes: readonly Node[]) {
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

/** A node client of the cluster (`connectRedis`). */
type Node = Awaited<ReturnType<typeof connectRedis>>;

/** The port of each node of `URLS`, in order. */
const PORTS = URLS.map((url) => Number(new URL(url).port));

/**
 * One client per node, connected once, before any test kills a node (a client of a killed node
 * rejects at once; connecting to it would retry forever: `connectRedis` fails past its bound);
 * destroyed after the suite.
 */
let connected: Promise<Node[]> | undefined;
const nodesOf = () => connected ??= Promise.all(URLS.map((url) => connectRedis(url)));

/** The reply to `command` of the first node of `nodes` that answers (a killed one does not). */
async function ask(nodes: readonly Node[], command: string[]) {
  let failure: unknown;
  for (const node of nodes) {
    try {
      return await node.sendCommand(command);
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}

/** The masters of the cluster now (`CLUSTER NODES`), failed ones left out. */
async function mastersOf(nodes: readonly Node[]) {
  const text = String(await ask(nodes, ["CLUSTER", "NODES"]));
  const lines = text.trim().split("\n").map((line) => line.split(" "));
  const portOf = (fields: string[]) => Number(fields[1].split("@")[0].split(":")[1]);
  return lines.filter((f) => f[2].includes("master") && !f[2].includes("fail")).map((f) => ({
    id: f[0],
    /** Its index in `nodes`. */
    at: PORTS.indexOf(portOf(f)),
    slots: f.slice(8).filter((r) => !r.startsWith("[")).map((r) => r.split("-").map(Number)),
    /** Its replicas' indexes in `nodes`. */
    replicas: lines.filter((r) => r[3] === f[0] && !r[2].includes("fail")).map((r) =>
      PORTS.indexOf(portOf(r))
    ),
  }));
}

/** The master of `slot` (`mastersOf`). */
async function masterOf(nodes: readonly Node[], slot: number) {
  const master = (await mastersOf(nodes)).find((m) =>
    m.slots.some(([from, to = from]) => slot >= from && slot <= to)
  );
  assert.ok(master, `slot ${slot} has a master`);
  return master;
}

/** The hash slot of `tag`. */
async function slotOf(nodes: readonly Node[], tag: string) {
  return Number(await ask(nodes, ["CLUSTER", "KEYSLOT", tag]));
}

/**
 * A fresh subject `freshSubject(label)` whose slot (that of `tagOf(subject)`) has a master with
 * a replica in sync (`master_link_status:up`): a replica that never synced refuses to fail over.
 */
async function withSyncedReplica(
  nodes: readonly Node[],
  label: string,
  tagOf: (subject: string) => string,
) {
  for (let i = 0; i < 20; i++) {
    const subject = freshSubject(label);
    const master = await masterOf(nodes, await slotOf(nodes, tagOf(subject)));
    for (const replica of master.replicas) {
      const info = String(await nodes[replica].sendCommand(["INFO", "replication"]));
      if (info.includes("master_link_status:up")) return { subject, master };
    }
  }
  throw new Error("no master with a replica in sync");
}

/** Kills the process of node `at` of `nodes` (SIGKILL). */
async function kill(nodes: readonly Node[], at: number) {
  const info = String(await nodes[at].sendCommand(["INFO", "server"]));
  process.kill(Number(info.match(/process_id:(\d+)/)![1]), "SIGKILL");
}

/**
 * Moves `slot` from its master to another master as `redis-cli --cluster reshard` does (the
 * target `IMPORTING`, the source `MIGRATING`, its keys moved by `MIGRATE`, then `SETSLOT NODE`
 * on every master), one key per `MIGRATE` with `pauseMs` between them, so that checks meanwhile
 * find the slot's keys split between the two nodes; `moved` is called after the first key moved.
 * The slot ends on the target once every key moved; a failed `MIGRATE` (or `moved`) leaves it
 * with its source (`SETSLOT STABLE` on both) and rejects with that error: a slot handed over with
 * keys left behind would lose them. Resolves to both masters' indexes in `nodes`.
 */
async function migrateSlot(
  nodes: readonly Node[],
  slot: number,
  pauseMs: number,
  moved: () => unknown,
) {
  const masters = await mastersOf(nodes);
  const from = await masterOf(nodes, slot);
  const to = masters.find((m) => m.id !== from.id)!;
  const source = nodes[from.at];
  const keysLeft = async () =>
    await source.sendCommand(["CLUSTER", "GETKEYSINSLOT", String(slot), "1"]) as string[];
  await nodes[to.at].sendCommand(["CLUSTER", "SETSLOT", String(slot), "IMPORTING", from.id]);
  await source.sendCommand(["CLUSTER", "SETSLOT", String(slot), "MIGRATING", to.id]);
  try {
    for (let keys = await keysLeft(), n = 0; keys.length > 0; keys = await keysLeft(), n++) {
      await source.sendCommand(
        ["MIGRATE", "127.0.0.1", String(PORTS[to.at]), "", "0", "5000", "KEYS", ...keys],
      ).catch((error) => {
        throw new Error(`MIGRATE of slot ${slot}'s keys ${keys} failed: ${error}`, {
          cause: error,
        });
      });
      if (n === 0) await moved();
      await sleep(pauseMs);
    }
  } catch (error) {
    // Best effort: the slot back with its source; the test fails with this error either way.
    await Promise.allSettled(
      [to, from].map((m) =>
        nodes[m.at].sendCommand(["CLUSTER", "SETSLOT", String(slot), "STABLE"])
      ),
    );
    throw error;
  }
  for (const m of [to, from, ...masters.filter((m) => m.id !== to.id && m.id !== from.id)]) {
    await nodes[m.at].sendCommand(["CLUSTER", "SETSLOT", String(slot), "NODE", to.id]);
  }
  return { from: from.at, to: to.at };
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
    after(async () => {
      for (const node of await connected ?? []) node.destroy();
    });

    it("a key's policy, its tenant's shared policy and its predecessor's balance in one slot: exact; without the slot, a TypeError (never CROSSSLOT passed by the failure policy)", async () => {
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

        // Without a slot these counters span slots (Redis would refuse the script: CROSSSLOT,
        // then passed uncounted under open): a TypeError before anything is sent, whatever the
        // failure policy; so is a balance given its own slot beside windows keyed by the subject.
        const open = createRateLimiter({ store, timeoutMs: 2_000, logger: () => {} });
        for (const l of [limiter, open]) {
          await assert.rejects(
            l.check(keys[0], policies, { subjects: [keys[0], tenant] }),
            { name: "TypeError", message: /one hash tag/ },
          );
          await assert.rejects(
            l.check(keys[0], policies.slice(0, 1), { credits: { initial: 35, slot: tenant } }),
            { name: "TypeError", message: /one hash tag/ },
          );
        }
        assert.equal(
          (await limiter.readCredits([
            { subject: predecessor, credits: { initial: 35, slot: tenant } },
          ]))[0].remaining,
          0,
        );
      } finally {
        store.close();
        await cluster.close();
      }
    });

    it("a cluster client given without clustered: true is a TypeError at construction (its batches would span slots: CROSSSLOT, passed uncounted under open)", async () => {
      const cluster = await connectCluster();
      try {
        for (const clustered of [{}, { clustered: false }]) {
          assert.throws(
            () =>
              createRedisRateLimitStore({
                client: cluster as unknown as RedisScriptClient,
                ...clustered,
              }),
            { name: "TypeError", message: /clustered: true/ },
          );
        }
      } finally {
        await cluster.close();
      }
    });

    it("a single server's client sent to one node of the cluster: a check of another node's slot (MOVED) fails closed, never passes uncounted", async () => {
      const node = await connectRedis(URLS[0]);
      const store = createRedisRateLimitStore({ client: node as unknown as RedisScriptClient });
      try {
        const limiter = createRateLimiter({ store, timeoutMs: 2_000, logger: () => {} }); // open
        const policy = [{ name: "once", limit: 1, windowMs: 60_000 }];
        const answers = await Promise.all(
          Array.from(
            { length: 30 },
            (_, i) =>
              limiter.check(`key:${freshSubject(`n${i}`)}`, policy).then(
                (answer) => answer.unavailable ? "uncounted" : "counted",
                (error: unknown) => error instanceof TypeError ? "refused" : "other",
              ),
          ),
        );
        assert.ok(answers.includes("refused"), "some subjects live on other nodes");
        assert.deepEqual(answers.filter((a) => a !== "counted" && a !== "refused"), []);
      } finally {
        store.close();
        node.destroy();
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
      const nodes = await nodesOf();
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

    it("one master paused (CLIENT PAUSE 2 s) while the write-back drains (interval 200 ms): the other tenants' balances reach their records at the next pass, the paused tenant's after it resumes", async () => {
      const nodes = await nodesOf();
      const { service, storage, close } = await openService(200, undefined, 600);
      try {
        // Two tenants whose slots two different masters hold.
        const tag = (id: string) => `tenant:${encodeURIComponent(id)}`;
        const tenants: { id: string; master: number }[] = [];
        while (tenants.length < 2) {
          const id = freshSubject("paused-drain");
          const { at } = await masterOf(nodes, await slotOf(nodes, tag(id)));
          if (!tenants.some((t) => t.master === at)) tenants.push({ id, master: at });
        }
        const keys = await Promise.all(tenants.map(({ id }) =>
          service.create({
            tenantId: id,
            name: "k",
            scopes: READ_ORDERS,
            credits: { remaining: 100, pool: { remaining: 500 } },
          })
        ));
        const stored = async () =>
          await Promise.all(keys.map(async ({ id }) => {
            const credits = (await storage.findById(id))!.credits!;
            return `${credits.remaining}/${credits.pool!.remaining}`;
          }));
        const until = async (expected: string[], ms: number, what: string) => {
          const end = Date.now() + ms;
          while (Date.now() < end && (await stored()).join() !== expected.join()) await sleep(20);
          assert.deepEqual(await stored(), expected, what);
        };
        for (const { key } of keys) assert.equal(await outcome(service, key), "ok");
        await until(["99/499", "99/499"], 2_000, "both written back");
        for (const { key } of keys) assert.equal(await outcome(service, key), "ok");
        const paused = Date.now();
        await nodes[tenants[0].master].sendCommand(["CLIENT", "PAUSE", "2000", "ALL"]);
        // The next pass starts within 200 ms; its drain waits at most the limiter's 600 ms.
        await until(
          ["99/499", "98/498"],
          1_000,
          "the other tenant written back while one is paused",
        );
        assert.ok(Date.now() - paused < 1_500);
        await until(["98/498", "98/498"], 2_500, "the paused tenant written back after it resumes");
        await service.close();
        assert.deepEqual(await stored(), ["98/498", "98/498"], "nothing written twice");
      } finally {
        await close().catch(() => {});
      }
    });

    it("a live reshard of a tenant's slot (its keys migrated one by one) while its keys spend their policies, own balances and the pool: every authorize counted once or refused by the failure policy (TRYAGAIN), never twice; a limiter failing open beside them counts or passes uncounted; counting resumes exact on the new owner, the write-back drains from it", async () => {
      const errors = new Map<string, number>();
      const { service, storage, lines, close } = await openService(100, errors);
      const nodes = await nodesOf();
      const cluster = await connectCluster();
      const openStore = createRedisRateLimitStore({
        client: cluster as unknown as RedisScriptClient,
        clustered: true,
      });
      try {
        const tenantId = freshSubject("reshard");
        const create = (name: string) =>
          service.create({
            tenantId,
            name,
            scopes: READ_ORDERS,
            rateLimits: [
              { name: "key", limit: 1_000_000, windowMs: 600_000 },
              { name: "tenant", limit: 1_000_000, windowMs: 600_000, sharedBy: "tenant" },
            ],
            credits: { remaining: 1_000_000, pool: { remaining: 100_000 } },
          });
        const keys = [await create("a"), await create("b")];
        /** Authorizes answered "ok" per key id; every answer by outcome. */
        const ok = new Map<string, number>();
        const answers = new Map<string, number>();
        let stop = false;
        const spend = async ({ id, key }: { id: string; key: string }) => {
          while (!stop) {
            const answer = await outcome(service, key);
            answers.set(answer, (answers.get(answer) ?? 0) + 1);
            if (answer === "ok") ok.set(id, (ok.get(id) ?? 0) + 1);
            else await sleep(2);
          }
        };
        const total = () => [...ok.values()].reduce((a, n) => a + n, 0);
        for (const { id, key } of keys) {
          assert.equal(await outcome(service, key), "ok"); // the slot holds the tenant's counters
          ok.set(id, 1);
        }
        // Beside them, a limiter failing open checks a policy of its own, a shared one and a
        // predecessor's balance in the tenant's slot: each check counted, or passed uncounted.
        const tag = `tenant:${encodeURIComponent(tenantId)}`;
        const open = createRateLimiter({ store: openStore, timeoutMs: 2_000, logger: () => {} });
        const policies = [
          { name: "own", limit: 1_000_000, windowMs: 600_000 },
          { name: "shared", limit: 1_000_000, windowMs: 600_000 },
        ];
        const checked = (cost?: number) =>
          open.check(`${tag}:x`, policies, {
            cost,
            subjects: [`${tag}:x`, tag],
            slot: tag,
            credits: { subject: `${tag}:predecessor`, initial: 1_000_000 },
          });
        assert.equal((await checked()).outcome, "store");
        let counted = 1;
        const outcomes = new Map<string, number>();
        const check = async () => {
          while (!stop) {
            const { outcome, allowed, reason } = await checked();
            const seen = `${outcome}:${allowed}:${reason ?? ""}`;
            outcomes.set(seen, (outcomes.get(seen) ?? 0) + 1);
            if (outcome === "store") counted++;
            else await sleep(2);
          }
        };
        const spenders = [check(), ...keys.flatMap((k) => [spend(k), spend(k), spend(k)])];
        await sleep(100);
        const slot = await slotOf(nodes, tag);
        // Mid-migration a new key of the tenant starts spending: its counters are new.
        const { from, to } = await migrateSlot(nodes, slot, 25, async () => {
          const late = await create("c");
          keys.push(late);
          spenders.push(spend(late));
        }).catch(async (error) => {
          stop = true; // the spenders end before the service closes; the test fails with `error`
          await Promise.allSettled(spenders);
          throw error;
        });
        const countedWhenMoved = total();
        await sleep(300);
        stop = true;
        await Promise.all(spenders);
        console.log(
          `cluster reshard: authorizes ${JSON.stringify(Object.fromEntries(answers))}, ` +
            `open checks ${JSON.stringify(Object.fromEntries(outcomes))}, ` +
            `script errors ${JSON.stringify(Object.fromEntries(errors))}`,
        );

        assert.deepEqual(
          [...answers.keys()].filter((a) => a !== "ok" && a !== "api_key_rate_limit_unavailable"),
          [],
          "every authorize counted or refused by the failure policy (closed)",
        );
        assert.ok((answers.get("api_key_rate_limit_unavailable") ?? 0) > 0, "the reshard was seen");
        assert.ok((errors.get("TRYAGAIN") ?? 0) > 0, JSON.stringify([...errors]));
        assert.deepEqual(
          [...errors.keys()].filter((e) => e !== "TRYAGAIN" && e !== "NOSCRIPT"),
          [],
        );
        assert.ok(!lines.some((line) => /failed \(|malformed/.test(line)), lines.join("\n"));
        assert.deepEqual([...outcomes.keys()].sort(), ["open:true:error", "store:true:"]);
        assert.ok(total() > countedWhenMoved, "counting resumed on the new owner");
        assert.ok(ok.get(keys[2].id)! > 0, "the key created mid-migration spent");
        const count = async (node: number) =>
          Number(await nodes[node].sendCommand(["CLUSTER", "COUNTKEYSINSLOT", String(slot)]));
        assert.deepEqual([await count(from), (await count(to)) > 0], [0, true]);

        // Each counter holds exactly the authorizes answered "ok": none lost, none twice.
        for (const { id, key } of keys) {
          const probe = await service.authorize(key, { cost: 0 });
          assert.deepEqual(
            probe.rateLimitResults!.map((r) => r.remaining),
            [1_000_000 - ok.get(id)!, 1_000_000 - total()],
          );
        }
        const probe = await checked(0);
        assert.deepEqual(
          probe.policies.map((p) => p.remaining),
          [1, 2].map(() => 1_000_000 - counted),
        );
        assert.equal(probe.credits?.remaining, 1_000_000 - counted);
        const expected = keys.map(({ id }) => [1_000_000 - ok.get(id)!, 100_000 - total()]);
        assert.deepEqual((await balancesOf(storage, keys.map((k) => k.id))).live, expected);
        await service.close();
        assert.deepEqual(
          (await balancesOf(storage, keys.map((k) => k.id))).stored,
          expected,
          "written back from the new owner",
        );
      } finally {
        openStore.close();
        await cluster.close();
        await close();
      }
    });

    it("a master killed mid-run: the failure policy answers meanwhile, counting resumes on the promoted replica, nothing counted twice", async () => {
      const cluster = await connectCluster();
      const nodes = await nodesOf();
      const store = createRedisRateLimitStore({
        client: cluster as unknown as RedisScriptClient,
        clustered: true,
      });
      const limiter = createRateLimiter({ store, onStoreError: "closed", timeoutMs: 500 });
      const { subject: tenant, master } = await withSyncedReplica(nodes, "tenant:failover", String);
      const policies = [{ name: "api", limit: 1_000_000, windowMs: 600_000 }];
      const check = () => limiter.check(tenant, policies, { slot: tenant });
      try {
        await limiter.ready();
        for (let i = 0; i < 20; i++) assert.equal((await check()).allowed, true);
        await kill(nodes, master.at); // the master serving the tenant's slot
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

    it("a master killed while the credit write-back drains the pool it holds (interval 100 ms): the failure policy answers meanwhile, then the promoted replica counts; its balances are written back, nothing spent twice", async () => {
      const nodes = await nodesOf();
      const { service, storage, close } = await openService(100);
      try {
        const { subject: tenantId, master } = await withSyncedReplica(
          nodes,
          "failover-pool",
          (id) => `tenant:${encodeURIComponent(id)}`,
        );
        const keys = await Promise.all(["a", "b"].map((name) =>
          service.create({
            tenantId,
            name,
            scopes: READ_ORDERS,
            credits: { remaining: 1_000_000, pool: { remaining: 100_000 } },
          })
        ));
        const ok = new Map<string, number>();
        let refused = 0;
        let resumed = false;
        let stop = false;
        const spend = async ({ id, key }: { id: string; key: string }) => {
          while (!stop) {
            const after = refused > 0;
            const answer = await outcome(service, key);
            if (answer === "ok") {
              ok.set(id, (ok.get(id) ?? 0) + 1);
              if (after) resumed = true;
            } else {
              assert.equal(
                answer,
                "api_key_rate_limit_unavailable",
                "only the failure policy refuses",
              );
              refused++;
              await sleep(20);
            }
          }
        };
        const spenders = keys.flatMap((k) => [spend(k), spend(k)]);
        const pooled = async () => (await storage.findById(keys[0].id))!.credits!.pool!.remaining;
        for (let i = 0; i < 100 && await pooled() === 100_000; i++) await sleep(20);
        assert.ok(await pooled() < 100_000, "the write-back drained before the kill");
        await kill(nodes, master.at);
        const until = Date.now() + 30_000;
        while (!resumed && Date.now() < until) await sleep(50);
        await sleep(200);
        stop = true;
        await Promise.all(spenders);
        assert.ok(resumed, `counting resumed after the failover (${refused} refused meanwhile)`);

        const total = [...ok.values()].reduce((a, n) => a + n, 0);
        const ids = keys.map((k) => k.id);
        const { live } = await balancesOf(storage, ids);
        // Replication is asynchronous: the promoted replica holds at most the spends the old
        // master applied: those answered ok, and at most one per spender whose check it applied
        // (and replicated) when its reply was lost in the kill, answered by the failure policy.
        const spent = 100_000 - live[0][1];
        const lost = spenders.length;
        assert.ok(spent > 0 && spent <= total + lost, `${spent} spent, ${total} answered ok`);
        ids.forEach((id, i) =>
          assert.ok(1_000_000 - live[i][0] <= ok.get(id)! + lost / ids.length, `${id}'s own`)
        );
        await service.close();
        assert.deepEqual(
          (await balancesOf(storage, ids)).stored,
          live,
          "the records hold the promoted replica's balances",
        );
      } finally {
        await close().catch(() => {});
      }
    });
  });
}
