/**
 * The expiry notices on a real PostgreSQL through Prisma Client 7 with the
 * migration `0004_api_key_expiry`: the storage contract with the
 * `expiryNotices` and `rotationWaits` delegates, then three concurrent
 * `notifyExpiring` runners over 2,000 keys emitting each (key, threshold)
 * exactly once. Skips without `DATABASE_URL`; fails instead under `CI=true`.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import {
  ApiKeysService,
  PrismaApiKeyStorage,
  runApiKeyStorageContract,
} from "../../api_keys/mod.ts";
import { threeRunners } from "../api_keys/expiry_runners.ts";
import { createPrismaClient, databaseReady, probeDatabase } from "./prisma_client.ts";
import { expiryDelegates, probeExpiryTables, resetExpiryTables } from "./expiry_tables.ts";

const url = Deno.env.get("DATABASE_URL");
const unavailable = await probeDatabase(url) ?? await probeExpiryTables(url!);

if (databaseReady("expiry notices on PostgreSQL", unavailable)) {
  const prisma = await createPrismaClient(url!);
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const fresh = async () => {
    await resetExpiryTables(pool);
    return new PrismaApiKeyStorage(prisma, expiryDelegates(prisma));
  };

  after(async () => {
    await resetExpiryTables(pool);
    await pool.end();
    await prisma.$disconnect();
  });

  describe("PrismaApiKeyStorage contract on PostgreSQL with the expiry delegates", () => {
    runApiKeyStorageContract(fresh, it);
  });

  describe("notifyExpiring on PostgreSQL", () => {
    it("a `now` that is a valid Date out of the instants the service reads is api_key_invalid_input, never 503 (22008)", async () => {
      const service = new ApiKeysService({
        peppers: { 1: "postgres-expiry-pepper-0123456789abcdef" },
        storage: new PrismaApiKeyStorage(prisma, expiryDelegates(prisma)),
        cache: false,
      });
      for (const ms of [8.64e15, Date.parse("-000001-01-01T00:00:00Z")]) {
        await assert.rejects(
          service.notifyExpiring({ thresholdsMs: [86_400_000], now: new Date(ms) }),
          { code: "api_key_invalid_input", field: "now" },
          String(ms),
        );
      }
      await service.close();
    });

    it("a `now` near either end of the instants the service reads, its window reaching past them: answered as in memory, never 503 (22008)", async () => {
      const service = new ApiKeysService({
        peppers: { 1: "postgres-expiry-pepper-0123456789abcdef" },
        storage: new PrismaApiKeyStorage(prisma, expiryDelegates(prisma)),
        cache: false,
      });
      const YEAR = 366 * 86_400_000;
      for (const at of ["0001-06-01T00:00:00.000Z", "9999-06-01T00:00:00.000Z"]) {
        assert.deepEqual(
          await service.notifyExpiring({ thresholdsMs: [YEAR], now: new Date(at) }),
          { expiring: 0, rotationsCompleted: 0 },
          at,
        );
      }
      await service.close();
    });

    it("three concurrent runners over 2,000 keys: each (key, threshold) exactly once", async () => {
      const apiKey = prisma.apiKey as unknown as {
        createMany(args: { data: Record<string, unknown>[] }): Promise<unknown>;
      };
      await threeRunners(await fresh(), 2_000, async (records) => {
        await apiKey.createMany({ data: records.map((record) => ({ ...record })) });
      });
      const { rows } = await pool.query(
        "SELECT count(*)::int AS n FROM api_key_expiry_notices",
      );
      assert.ok(rows[0].n > 1_000, `${rows[0].n} claims stored`);
    });
  });
}
