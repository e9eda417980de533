/**
 * Usage read by UTC day on a real PostgreSQL: `PrismaApiKeyStorage` sums a
 * day's hours in SQL (one row per key and day, not per hour), in a session
 * whose time zone is not UTC, and the service's day answer equals the sum of
 * its hourly one. Over a private schema (its own `api_key_usage`), dropped
 * after. Skips without `DATABASE_URL`; fails instead under `CI=true`.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { PrismaApiKeyStorage } from "../../api_keys/mod.ts";
import { StorageAccess } from "../../api_keys/storage/_access.ts";
import { readUsage, readUsageOfKeys } from "../../api_keys/metering/_usage.ts";
import type { ApiKeyUsageBucket } from "../../api_keys/metering/usage.ts";
import { createPrismaClient, databaseReady, probeDatabase } from "./prisma_client.ts";

const url = Deno.env.get("DATABASE_URL");
const unavailable = await probeDatabase(url);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FROM = Date.UTC(2030, 4, 1);

if (databaseReady("usage by day on PostgreSQL", unavailable)) {
  const schema = `usage_day_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(
    `CREATE TABLE ${schema}.api_key_usage (LIKE public.api_key_usage INCLUDING ALL)`,
  );
  // A session in a zone 10 hours from UTC: a day by its local date would split each UTC day.
  const pool = new pg.Pool({
    connectionString: url,
    options: `-c search_path=${schema} -c timezone=Pacific/Honolulu`,
    max: 2,
  });
  after(async () => {
    await pool.end();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });
  /** Rows each read answered, in order. */
  const answered: number[] = [];
  const client = {
    $executeRawUnsafe: async (query: string, ...values: unknown[]) =>
      (await pool.query(query, values)).rowCount ?? 0,
    $queryRawUnsafe: async (query: string, ...values: unknown[]) => {
      const { rows } = await pool.query(query, values);
      answered.push(rows.length);
      return rows;
    },
  };
  const storage = new PrismaApiKeyStorage(
    { apiKey: { create() {}, findMany() {}, findUnique() {}, update() {} } } as never,
    { usage: client },
  );
  const access = new StorageAccess(storage, 10_000, "storage").usage!;

  /** `hours` summed per UTC day (what a day answer is). */
  const perDay = (hours: ApiKeyUsageBucket[]) => {
    const days = new Map<number, ApiKeyUsageBucket>();
    for (const hour of hours) {
      const start = hour.start.getTime() - (hour.start.getTime() % DAY);
      const day = days.get(start) ?? {
        start: new Date(start),
        accepted: 0,
        cost: 0,
        refused: Object.fromEntries(Object.keys(hour.refused).map((c) => [c, 0])),
      } as ApiKeyUsageBucket;
      day.accepted += hour.accepted;
      day.cost += hour.cost;
      for (const [code, n] of Object.entries(hour.refused)) {
        day.refused[code as keyof typeof day.refused] += n;
      }
      days.set(start, day);
    }
    return [...days.values()];
  };

  describe("usage by day on PostgreSQL", () => {
    it("a day read answers one row per key and UTC day, summed in SQL; it equals the sum of the hourly read, per key and for the tenant", async () => {
      // 3 keys, every hour of 3 UTC days (and one hour either side, outside the window).
      await admin.query(
        `INSERT INTO ${schema}.api_key_usage
           (key_id, tenant_id, bucket, accepted, revoked, rate_limited, cost)
         SELECT 'k' || k, 't1', $1::timestamptz + h * interval '1 hour',
                k * 10 + h % 7, (h + k) % 3, h % 2, 2 * (k * 10 + h % 7)
         FROM generate_series(1, 3) k, generate_series(-1, 72) h`,
        [new Date(FROM)],
      );
      const keyIds = ["k1", "k2", "k3"];
      const window = { tenantId: "t1", from: new Date(FROM), to: new Date(FROM + 3 * DAY) };
      answered.length = 0;
      const hourly = await access.readKeys({ ...window, keyIds });
      assert.deepEqual(answered, [3 * 72], "the hourly read: every hour of each key");
      const dayQuery = { ...window, keyIds, granularity: "day" as const };
      answered.length = 0;
      const daily = await access.readKeys(dayQuery);
      assert.deepEqual(answered, [3 * 3], "one row per key and UTC day");
      assert.deepEqual(daily, hourly.map(perDay));
      assert.deepEqual(
        daily[0].map((day) => day.start.toISOString()),
        ["2030-05-01T00:00:00.000Z", "2030-05-02T00:00:00.000Z", "2030-05-03T00:00:00.000Z"],
      );
      // Through the service's reads (windows widened to whole days), one key and the tenant.
      const asked = { from: new Date(FROM + 5 * HOUR), to: new Date(FROM + 2 * DAY + HOUR) };
      const days = await readUsageOfKeys(access, "t1", keyIds, { ...asked, granularity: "day" });
      const hours = await readUsageOfKeys(access, "t1", keyIds, {
        from: new Date(FROM),
        to: new Date(FROM + 3 * DAY),
        granularity: "hour",
      });
      assert.deepEqual(days, hours.map(perDay));
      const tenantDays = await readUsage(access, "t1", { ...asked, granularity: "day" });
      const tenantHours = await readUsage(access, "t1", {
        from: new Date(FROM),
        to: new Date(FROM + 3 * DAY),
        granularity: "hour",
      });
      assert.deepEqual(tenantDays, perDay(tenantHours));
      assert.equal(tenantDays[1].accepted, daily.reduce((n, key) => n + key[1].accepted, 0));
    });

    it("through a real Prisma Client (@prisma/adapter-pg) in that session's zone, reads answer as through pg: each hour and UTC day, a window's bounds exact", async () => {
      // The adapter sends a Date without its offset and reads a timestamptz as UTC wall time.
      const options = `-c search_path=${schema} -c timezone=Pacific/Honolulu`;
      const prismaUrl = new URL(url!);
      prismaUrl.searchParams.set("options", options);
      const prisma = await createPrismaClient(prismaUrl.href);
      try {
        const viaPrisma = new StorageAccess(
          new PrismaApiKeyStorage(prisma, { usage: prisma }),
          10_000,
          "storage",
        ).usage!;
        const keyIds = ["k1", "k2"];
        for (
          const [from, to, granularity] of [
            [FROM, FROM + 3 * DAY, "hour"],
            [FROM, FROM + 3 * DAY, "day"],
            [FROM + DAY, FROM + 2 * DAY, "day"], // one UTC day
            [FROM + 10 * HOUR, FROM + 11 * HOUR, "hour"], // one hour: its row only
            [FROM + 23 * HOUR, FROM + 26 * HOUR, "hour"], // across a UTC midnight
          ] as const
        ) {
          const window = { tenantId: "t1", from: new Date(from), to: new Date(to), granularity };
          const query = { ...window, keyIds };
          const expected = await access.readKeys(query);
          assert.ok(expected[0].length > 0, "the window holds rows");
          assert.deepEqual(await viaPrisma.readKeys(query), expected, `${granularity} ${from}`);
          const one = { ...window, keyId: "k1" };
          assert.deepEqual(await viaPrisma.read(one), await access.read(one));
        }
      } finally {
        await prisma.$disconnect();
      }
    });
  });
}
