/**
 * Usage per key on a real PostgreSQL through Prisma Client 7: every statement
 * the storage sends is counted by wrapping the client. Verifying at full
 * speed writes nothing on the request path; each flush writes at most one
 * row per key and hour, one statement per 1,000 rows; after `close()` the
 * stored counts equal the verifications. In-process, one instance (the
 * three-instance fleet run and the `kill -9` bound are in tests/fleet/usage_test.ts). A flush
 * that commits after `storageTimeoutMs` (a row lock held by another session) and is retried
 * is counted once (`usageBatches`, migration 0013).
 * Skips without `DATABASE_URL`; fails instead under `CI=true`.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import {
  ApiKeysService,
  type PrismaApiKeyDelegate,
  PrismaApiKeyStorage,
  type PrismaUsageClient,
} from "../../api_keys/mod.ts";
import { StorageAccess } from "../../api_keys/storage/_access.ts";
import { UsageRecorder } from "../../api_keys/metering/_usage.ts";
import {
  createPrismaClient,
  databaseReady,
  probeDatabase,
  type TestPrismaClient,
} from "./prisma_client.ts";

const url = Deno.env.get("DATABASE_URL");
const unavailable = await probeDatabase(url);
const HOUR = 3_600_000;
const NOW = Date.parse("2030-05-01T10:20:00.000Z");

/** The client with every statement logged: delegate calls by name, raw ones with their row count. */
function countingClient(prisma: TestPrismaClient) {
  const log: { at: number; call: string; rows: number }[] = [];
  const apiKey = new Proxy(prisma.apiKey, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        log.push({ at: performance.now(), call: `apiKey.${String(property)}`, rows: 1 });
        return value.apply(target, args);
      };
    },
  }) as PrismaApiKeyDelegate;
  const usage: PrismaUsageClient = {
    $executeRawUnsafe(query, ...values) {
      const rows = (JSON.parse(values[0] as string) as unknown[]).length;
      log.push({ at: performance.now(), call: "recordUsage", rows });
      return prisma.$executeRawUnsafe(query, ...values);
    },
    $queryRawUnsafe(query, ...values) {
      log.push({ at: performance.now(), call: "readUsage", rows: 0 });
      return prisma.$queryRawUnsafe(query, ...values);
    },
  };
  return { log, storage: new PrismaApiKeyStorage({ apiKey }, { usage }) };
}

/** A recorder over `storage` with a storage deadline of `timeoutMs`, flushed by hand. */
function recorderOver(storage: PrismaApiKeyStorage, timeoutMs: number): UsageRecorder {
  return new UsageRecorder({
    access: new StorageAccess(storage, timeoutMs, "storage").usage!,
    clock: () => new Date(NOW),
    flushIntervalMs: HOUR,
    maxPendingKeys: 10_000,
    emitMetric: undefined,
  });
}

if (databaseReady("usage on PostgreSQL", unavailable)) {
  const prisma = await createPrismaClient(url!);
  const reset = async () => {
    await prisma.$executeRawUnsafe('TRUNCATE TABLE "api_keys", "api_key_usage"');
  };
  after(async () => {
    await reset();
    await prisma.$disconnect();
  });

  const sumOf = async (column: string) => {
    const [row] = await prisma.$queryRawUnsafe(
      `SELECT coalesce(sum(${column}), 0)::float8 AS n, count(*)::float8 AS rows FROM api_key_usage`,
    ) as { n: number; rows: number }[];
    return row;
  };

  describe("usage on PostgreSQL", () => {
    it("20 keys verified at full speed for 3 s: no write on the request path, at most one row per key per flush, exact totals after close()", async () => {
      await reset();
      const { log, storage } = countingClient(prisma);
      const intervalMs = 500;
      const service = new ApiKeysService({
        peppers: { 1: "postgres-usage-pepper-0123456789abcdef" },
        storage,
        clock: () => new Date(NOW),
        cache: { ttlMs: 60_000 },
        usage: { flushIntervalMs: intervalMs },
      });
      const keys = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          service.create({
            tenantId: `t${i % 2}`,
            name: `k${i}`,
            scopes: [{ resource: "orders", level: "read" }],
          })),
      );
      log.length = 0;
      const started = performance.now();
      let accepted = 0;
      let refused = 0;
      while (performance.now() - started < 3_000) {
        for (const { key } of keys) {
          await service.authorize(key, { requiredScope: { resource: "orders", level: "read" } });
          accepted++;
        }
        await assert.rejects(
          service.authorize(keys[0].key, { requiredScope: { resource: "orders", level: "write" } }),
        );
        refused++;
        // Requests come from I/O, which lets timers run; cached verifies alone never yield.
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      const elapsed = performance.now() - started;
      const closed = service.close();
      const writes = log.filter((entry) => entry.call !== "apiKey.findUnique");
      assert.ok(
        writes.every((entry) => entry.call === "recordUsage"),
        `only flushes write: ${[...new Set(writes.map((w) => w.call))]}`,
      );
      assert.ok(writes.length <= Math.ceil(elapsed / intervalMs) + 1, `${writes.length} flushes`);
      assert.ok(writes.length >= 3, "the timer flushed while verifying");
      for (const write of writes) assert.ok(write.rows <= 20, `a flush of ${write.rows} rows`);
      await closed;
      const last = log.at(-1)!;
      assert.equal(last.call, "recordUsage");
      assert.equal((await sumOf("accepted")).n, accepted, `${accepted} accepted`);
      assert.equal((await sumOf("scope_insufficient")).n, refused);
      assert.equal((await sumOf("accepted")).rows, 20, "one row per key and hour");
      const hours = await service.usage("t0", {
        keyId: keys[0].id,
        from: new Date(NOW - HOUR),
        to: new Date(NOW + HOUR),
        granularity: "hour",
      });
      assert.equal(hours.length, 1);
      assert.equal(hours[0].refused.api_key_scope_insufficient, refused);
      const summaries = await service.listSummaries("t0");
      assert.ok(summaries.every((summary) => summary.lastUsedAt?.getTime() === NOW));
    });

    it("a flush that commits after storageTimeoutMs (a held row lock) is retried once it ended, never beside it (one connection waits, not one per flush), and counted once: stored = recorded", async () => {
      await reset();
      const storage = new PrismaApiKeyStorage(prisma, { usage: prisma, usageBatches: true });
      const usage = recorderOver(storage, 300);
      usage.accepted("k-late", "t-late", 1, NOW);
      assert.equal(await usage.flush(), undefined, "the key's row is stored");
      const locker = new pg.Client({ connectionString: url });
      await locker.connect();
      /** Statements of this database waiting on a lock (`query` may still show the previous one). */
      const waiting = async () => {
        const { rows } = await locker.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return rows[0].n as number;
      };
      try {
        await locker.query("BEGIN");
        await locker.query("SELECT 1 FROM api_key_usage WHERE key_id = $1 FOR UPDATE", ["k-late"]);
        for (let i = 0; i < 5; i++) usage.accepted("k-late", "t-late", 1, NOW);
        usage.refused("k-late", "t-late", "api_key_scope_insufficient", NOW);
        assert.ok(await usage.flush() !== undefined, "the first write answered after its deadline");
        assert.equal(await waiting(), 1, "and still waits in PostgreSQL");
        usage.accepted("k-late", "t-late", 4, NOW);
        for (let i = 0; i < 2; i++) {
          assert.match(String(await usage.flush()), /has not settled/, "no retry sent beside it");
        }
        assert.equal(await waiting(), 1, "only the first write waits in PostgreSQL");
        await locker.query("COMMIT"); // the first write commits now, late
        for (let i = 0; i < 100 && await waiting() > 0; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.equal(await waiting(), 0, "its statement ended");
      } finally {
        await locker.end();
      }
      await usage.close(); // its batch retried (changing nothing), then the later counts
      const [row] = await prisma.$queryRawUnsafe(
        `SELECT accepted::float8 AS accepted, cost::float8 AS cost,
           scope_insufficient::float8 AS scope FROM api_key_usage WHERE key_id = 'k-late'`,
      ) as { accepted: number; cost: number; scope: number }[];
      assert.deepEqual(
        row,
        { accepted: 7, cost: 10, scope: 1 },
        "1 + 5 + 1 accepted, cost 1 + 5 + 4",
      );
    });

    it("a flush of 2,500 keys is 3 statements of at most 1,000 rows", async () => {
      await reset();
      const { log, storage } = countingClient(prisma);
      const recorder = recorderOver(storage, 10_000);
      for (let i = 0; i < 2_500; i++) recorder.accepted(`key-${i}`, "t-batch", 1, NOW);
      await recorder.close();
      assert.deepEqual(log.map((entry) => [entry.call, entry.rows]), [
        ["recordUsage", 1_000],
        ["recordUsage", 1_000],
        ["recordUsage", 500],
      ]);
      const stored = await sumOf("accepted");
      assert.deepEqual([stored.n, stored.rows], [2_500, 2_500]);
    });
  });
}
