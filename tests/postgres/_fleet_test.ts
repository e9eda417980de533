/**
 * `ApiKeysService` following `createPostgresFeed` when the database goes away:
 * the service's Prisma Client and its feed reach PostgreSQL through a TCP
 * proxy the test cuts. Cached hits are served only while the feed's staleness
 * is within `maxStalenessMs`, then `ApiKeyStorageError` (503); an instance
 * started during the outage fails closed; once the database is back, the feed
 * resyncs and verifies succeed. A key created on one instance is accepted at
 * once by another (a miss in its prefix set looks the key up). Skips without `DATABASE_URL`; fails instead
 * under `CI=true`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeysService,
  ApiKeyStorageError,
  parseKey,
  PrismaApiKeyStorage,
} from "../../api_keys/mod.ts";
import { createPostgresFeed, type PostgresApiKeyChangeFeed } from "../../api_keys/postgres/mod.ts";
import {
  createPrismaClient,
  databaseReady,
  probeDatabase,
  type TestPrismaClient,
} from "./prisma_client.ts";
import { TcpProxy } from "./tcp_proxy.ts";

const url = Deno.env.get("DATABASE_URL");
const PEPPERS = { 1: "fleet-failure-suite-pepper-0123456789abcdef" };
const SCOPES = [{ resource: "orders", level: "read" as const }];
const POLL_MS = 100;
const MAX_STALENESS_MS = 600;

const unavailable = await probeDatabase(url);

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

if (databaseReady("a service following the PostgreSQL feed", unavailable)) {
  describe("a service following the PostgreSQL feed, with the database cut", () => {
    const target = new URL(url!);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const proxied = new URL(url!);
    let prisma: TestPrismaClient;
    let direct: TestPrismaClient;
    const feeds: PostgresApiKeyChangeFeed[] = [];
    const info = console.info;

    /** A service over Prisma and a feed, both through the proxy. */
    function instance(storageTimeoutMs = 2_000) {
      const feed = createPostgresFeed({ connectionString: proxied.href, pollMs: POLL_MS });
      feeds.push(feed);
      const service = new ApiKeysService({
        peppers: PEPPERS,
        storage: new PrismaApiKeyStorage(prisma),
        feed,
        maxStalenessMs: MAX_STALENESS_MS,
        storageTimeoutMs,
      });
      return { feed, service };
    }

    before(async () => {
      console.info = () => {}; // the storage-capability line
      proxied.port = String(proxy.start());
      prisma = await createPrismaClient(proxied.href);
      direct = await createPrismaClient(url!);
    });

    after(async () => {
      console.info = info;
      proxy.stop();
      await Promise.all(feeds.map((feed) => feed.close()));
      await prisma.$disconnect();
      await direct.$disconnect();
    });

    it("a key created on one instance is accepted at once by another, before its notice", async () => {
      // No outage here: a deadline that load alone cannot reach.
      const a = instance(30_000);
      const b = instance(30_000);
      await waitFor(() => a.feed.status().healthy && b.feed.status().healthy, "the first syncs");
      const first = await a.service.create({ tenantId: "t-new", name: "k", scopes: SCOPES });
      await waitFor(() => b.feed.status().counter === a.feed.status().counter, "b in step");
      assert.ok(await b.service.verify(first.key)); // loads b's prefix set
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (let trial = 0; trial < 20; trial++) {
        const { key } = await a.service.create({
          tenantId: "t-new",
          name: `k${trial}`,
          scopes: SCOPES,
        });
        assert.ok(await b.service.verify(key), `trial ${trial}`);
        await new Promise((resolve) => setTimeout(resolve, 100)); // the budget: 10 lookups a second
      }
    });

    it("database down: cached hits only while the feed's staleness is within maxStalenessMs, then ApiKeyStorageError (503)", async () => {
      const { feed, service } = instance();
      await waitFor(() => feed.status().healthy, "the first sync");
      const { key } = await service.create({ tenantId: "t-fleet", name: "k", scopes: SCOPES });
      await service.verify(key);
      await new Promise((resolve) => setTimeout(resolve, 50)); // the key's own notice arrives
      await service.verify(key); // cached again

      proxy.stop();
      const cutAt = performance.now();
      let served = 0;
      let failure: unknown;
      while (failure === undefined) {
        const stalenessBefore = feed.status().stalenessMs;
        try {
          await service.verify(key);
          served++;
          assert.ok(
            stalenessBefore <= MAX_STALENESS_MS || feed.status().stalenessMs <= MAX_STALENESS_MS,
            `served from memory at staleness ${stalenessBefore}`,
          );
        } catch (error) {
          failure = error;
        }
        assert.ok(performance.now() - cutAt < 10_000, "never stopped serving");
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const failedAfter = performance.now() - cutAt;
      assert.ok(failure instanceof ApiKeyStorageError, String(failure));
      assert.equal(failure.httpStatus, 503);
      assert.ok(served > 0, "the cache served while the feed was fresh");
      assert.ok(feed.status().stalenessMs > MAX_STALENESS_MS);
      // The last sync was at most a poll and a round trip before the cut.
      assert.ok(
        failedAfter <= MAX_STALENESS_MS + 2_000,
        `failed ${failedAfter.toFixed(0)} ms after the cut`,
      );

      // A revoke while this instance cannot hear it (made directly on the database).
      const storage = new PrismaApiKeyStorage(direct);
      const record = await storage.findByPrefix(parseKey(key)!.prefix);
      await storage.markRevoked(record!.id, new Date());

      proxy.start(Number(proxied.port));
      await waitFor(() => feed.status().healthy, "back in sync");
      await assert.rejects(service.verify(key), { code: "api_key_revoked" });
    });

    it("an instance started during an outage fails closed: ApiKeyStorageError, nothing from memory", async () => {
      const maker = new ApiKeysService({
        peppers: PEPPERS,
        storage: new PrismaApiKeyStorage(direct),
      });
      const { key } = await maker.create({ tenantId: "t-fleet", name: "k2", scopes: SCOPES });
      proxy.stop();
      const { feed, service } = instance();
      assert.equal(feed.status().stalenessMs, Infinity);
      await assert.rejects(service.verify(key), ApiKeyStorageError);
      proxy.start(Number(proxied.port));
      await waitFor(() => feed.status().healthy, "the first sync");
      assert.ok(await service.verify(key));
    });
  });
}
