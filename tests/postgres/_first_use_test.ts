/**
 * Rotations that wait for the new key on a real PostgreSQL through Prisma
 * Client 7 (migrations `0002_api_key_change_feed` and `0004_api_key_expiry`):
 * two instances over one database, the lowering of the old key's expiry
 * published by the change feed's triggers, and 1,000 concurrent verifies
 * during the switch. Skips without `DATABASE_URL`; fails instead under
 * `CI=true`.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import {
  type ApiKeyChangeNotice,
  ApiKeysService,
  parseKey,
  PrismaApiKeyStorage,
} from "../../api_keys/mod.ts";
import { createPostgresFeed } from "../../api_keys/postgres/mod.ts";
import { createPrismaClient, databaseReady, probeDatabase } from "./prisma_client.ts";
import { expiryDelegates, probeExpiryTables, resetExpiryTables } from "./expiry_tables.ts";

const url = Deno.env.get("DATABASE_URL");
const unavailable = await probeDatabase(url) ?? await probeExpiryTables(url!);
const PEPPERS = { 1: "first-use-suite-pepper-0123456789abcdef" };
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function waitFor(
  predicate: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!await predicate()) {
    if (performance.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

if (databaseReady("rotations that wait on PostgreSQL", unavailable)) {
  const prisma = await createPrismaClient(url!);
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const storage = new PrismaApiKeyStorage(prisma, expiryDelegates(prisma));
  /**
   * An instance of the fleet: its own service over the shared database. 1,000 verifies queue on
   * one pool for seconds under load: a storage deadline the queue cannot reach.
   */
  const instance = (clock?: () => Date) =>
    new ApiKeysService({
      peppers: PEPPERS,
      storage,
      clock,
      cache: false,
      storageTimeoutMs: 60_000,
    });
  const expiryOf = async (id: string) => (await storage.findById(id))!.expiresAt!.getTime();

  after(async () => {
    await resetExpiryTables(pool);
    await pool.end();
    await prisma.$disconnect();
  });

  describe('rotate with graceStarts "first-use" on PostgreSQL', () => {
    it("the first use on one instance lowers the old key's expiry for every instance, through the feed", async () => {
      await resetExpiryTables(pool);
      let now = Date.parse("2030-01-01T00:00:00.000Z");
      const clock = () => new Date(now);
      const [a, b] = [instance(clock), instance(clock)];
      const feed = createPostgresFeed({ connectionString: url!, pollMs: 50 });
      const notices: ApiKeyChangeNotice[] = [];
      feed.subscribe((notice) => void notices.push(notice));
      try {
        await waitFor(() => feed.status().healthy, "the feed's first sync");
        const { id, key: oldKey } = await a.create({
          tenantId: "t",
          name: "n",
          scopes: [{ resource: "orders", level: "read" }],
        });
        const rotated = await a.rotate(id, {
          gracePeriodMs: HOUR,
          graceStarts: "first-use",
          maxWaitMs: 7 * DAY,
        });
        const bound = now + 7 * DAY + HOUR;
        assert.equal(await expiryOf(id), bound);
        now += DAY;
        await b.verify(rotated.key);
        await waitFor(async () => await expiryOf(id) === now + HOUR, "the lowering");
        const lowered = performance.now();
        const oldPrefix = parseKey(oldKey)!.prefix;
        await waitFor(
          () => notices.some((n) => n.kind === "updated" && n.prefix === oldPrefix),
          "the feed's notice of the lowering",
        );
        const delay = performance.now() - lowered;
        assert.ok(delay <= 1_000, `the notice took ${delay} ms`);
        now += HOUR - 1;
        await a.verify(oldKey);
        now += 1;
        await assert.rejects(a.verify(oldKey), { code: "api_key_expired" });
        await assert.rejects(b.verify(oldKey), { code: "api_key_expired" });
      } finally {
        await feed.close();
      }
    });

    it("1,000 concurrent verifies on two instances during the switch: never both keys rejected", async () => {
      await resetExpiryTables(pool);
      const base = Date.parse("2030-01-01T00:00:00.000Z");
      const started = performance.now();
      const clock = () => new Date(base + Math.floor(performance.now() - started));
      const [a, b] = [instance(clock), instance(clock)];
      const { id, key: oldKey } = await a.create({
        tenantId: "t",
        name: "n",
        scopes: [{ resource: "orders", level: "read" }],
      });
      const rotated = await a.rotate(id, {
        gracePeriodMs: 100,
        graceStarts: "first-use",
        maxWaitMs: DAY,
      });
      let oldRejected = 0;
      let newRejected = 0;
      let bothRejected = 0;
      const bound = rotated.graceExpiresAt.getTime();
      // Resolves once the lowered expiry is in the past: the second half starts then, while the
      // first half may still be in flight. The lowering's queries queue behind the first half's
      // on the shared pool (about 5 s under load).
      const switched = (async () => {
        await waitFor(async () => await expiryOf(id) < bound, "the lowering", 60_000);
        const lowered = await expiryOf(id);
        await waitFor(() => clock().getTime() > lowered, "the end of the grace");
      })();
      await Promise.all(Array.from({ length: 1_000 }, async (_, i) => {
        if (i < 500) await new Promise((resolve) => setTimeout(resolve, i % 100));
        else await switched;
        const service = i % 2 === 0 ? a : b;
        const [oldAnswer, newAnswer] = await Promise.allSettled([
          service.verify(oldKey),
          service.verify(rotated.key),
        ]);
        if (oldAnswer.status === "rejected") oldRejected++;
        if (newAnswer.status === "rejected") newRejected++;
        if (oldAnswer.status === "rejected" && newAnswer.status === "rejected") bothRejected++;
      }));
      assert.equal(bothRejected, 0);
      assert.equal(newRejected, 0);
      assert.ok(oldRejected >= 500, `the old key was refused ${oldRejected} times`);
    });
  });
}
