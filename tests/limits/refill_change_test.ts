/**
 * Changing a refill rule with `updateCredits` on each real store (PostgreSQL,
 * Redis), the keys on `PrismaApiKeyStorage` over real PostgreSQL, on the
 * stores' own clocks (short `everyMs` rules, the change made just past a
 * boundary): a pool's shorter rule reaches every key of the tenant and a
 * cached context, with no refill before its next boundary; a key's longer
 * rule refills by no old boundary after the change (nor through a key minted
 * with `limitsOf`); `refill: null`; a rule given alone keeps the balance (one
 * store step: the refill the old rule owes taken, none by the new rule before
 * its next boundary after the change).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeysService } from "../../api_keys/mod.ts";
import { PrismaApiKeyStorage } from "../../api_keys/storage/prisma.ts";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { PEPPER_1 } from "../api_keys/helpers.ts";
import { createPrismaClient, type TestPrismaClient } from "../postgres/prisma_client.ts";
import { DATABASE_URL, openStore, readyStores, type RealStore } from "./_services.ts";

const READ_ORDERS = [{ resource: "orders", level: "read" as const }];
const DAILY = { amount: 1_000, interval: "daily" as const };
const OWN = { amount: 100, interval: "monthly" as const };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sleeps until 150 ms past the next multiple of `everyMs` (the stores' clocks are this host's). */
function pastBoundary(everyMs: number): Promise<unknown> {
  return sleep(everyMs - (Date.now() % everyMs) + 150);
}

for (const kind of await readyStores("refill rule changes")) {
  describe(`updateCredits with a refill rule on the ${kind} store`, () => {
    let real: RealStore;
    let prisma: TestPrismaClient;
    let service: ApiKeysService;
    let storage: PrismaApiKeyStorage;
    const tenant = `refill-${kind}-${crypto.randomUUID()}`;
    before(async () => {
      real = await openStore(kind);
      prisma = await createPrismaClient(DATABASE_URL!);
      storage = new PrismaApiKeyStorage(prisma, { storesCredits: true });
      service = new ApiKeysService({
        peppers: { 1: PEPPER_1 },
        storage,
        limiter: createRateLimiter({ store: real.store, timeoutMs: 10_000, logger: () => {} }),
        persistIntervalMs: 3_600_000,
        cache: { ttlMs: 60_000 },
      });
    });
    after(async () => {
      await service.close();
      await real.close();
      await prisma.$disconnect();
    });

    it("a pool's shorter rule: every key of the tenant gets it, a cached context spends with it, no refill before its next boundary", async () => {
      const plan = { remaining: 1_000, refill: DAILY };
      const ci = await service.create({
        tenantId: tenant,
        name: "ci",
        scopes: READ_ORDERS,
        credits: { ...plan, sharedBy: "tenant" },
      });
      const mixed = await service.create({
        tenantId: tenant,
        name: "mixed",
        scopes: READ_ORDERS,
        credits: { remaining: 100, refill: OWN, pool: plan },
      });
      await service.authorize(ci.key, { cost: 10 });
      await service.authorize(mixed.key); // cached now, with the daily rule's copy
      const every = { amount: 500, everyMs: 3_000 };
      await pastBoundary(3_000);
      const changed = await service.updateCredits(tenant, null, { set: 989, refill: every });
      assert.equal(changed.remaining, 989);
      const left = changed.nextRefillAt!.getTime() - Date.now();
      assert.ok(left > 1_000 && left <= 3_000, `the new rule's next boundary: ${left} ms`);
      for (const { id } of [ci, mixed]) {
        const credits = (await storage.findById(id))!.credits!;
        assert.deepEqual((credits.pool ?? credits).refill, every, id);
      }
      assert.deepEqual((await storage.findById(mixed.id))!.credits!.refill, OWN, "its own kept");
      const spent = await service.authorize(mixed.key);
      assert.equal(spent.tenantCreditResult?.remaining, 988);
      const resetMs = spent.tenantCreditResult!.resetMs;
      assert.ok(resetMs > 0 && resetMs <= 3_000, `spent with the new rule: resetMs ${resetMs}`);
      await pastBoundary(3_000);
      assert.equal((await service.authorize(ci.key)).creditResult?.remaining, 499, "refilled");
    });

    it("a key's longer rule: no old boundary refills after the change", async () => {
      const { id, key } = await service.create({
        tenantId: tenant,
        name: "own",
        scopes: READ_ORDERS,
        credits: { remaining: 10, refill: { amount: 10, everyMs: 2_000 } },
      });
      await service.authorize(key, { cost: 7 });
      await pastBoundary(2_000); // the old rule's refill is due, not yet taken
      const changed = await service.updateCredits(tenant, id, { set: 3, refill: DAILY });
      const midnight = Date.now() - (Date.now() % 86_400_000) + 86_400_000;
      assert.deepEqual(changed, { remaining: 3, nextRefillAt: new Date(midnight) });
      await pastBoundary(2_000);
      const spent = await service.authorize(key);
      assert.equal(spent.creditResult?.remaining, 2, "no refill by the old rule after the change");
      assert.deepEqual((await storage.findById(id))!.credits!.refill, DAILY);
    });

    it("a key minted with limitsOf gets the longer rule too: no old boundary refills through it", async () => {
      const { id } = await service.create({
        tenantId: tenant,
        name: "source",
        scopes: READ_ORDERS,
        credits: { remaining: 10, refill: { amount: 10, everyMs: 2_000 } },
      });
      const { id: minted, key } = await service.create({
        tenantId: tenant,
        name: "minted",
        scopes: READ_ORDERS,
        limitsOf: id,
      });
      assert.equal((await service.authorize(key, { cost: 7 })).creditResult?.remaining, 3); // cached
      await service.updateCredits(tenant, id, { set: 3, refill: DAILY });
      assert.deepEqual((await storage.findById(minted))!.credits!.refill, DAILY);
      await pastBoundary(2_000);
      const spent = await service.authorize(key);
      assert.equal(spent.creditResult?.remaining, 2, "no refill by the old rule through it");
    });

    it("set with a rule, then refill: null", async () => {
      const { id, key } = await service.create({
        tenantId: tenant,
        name: "set",
        scopes: READ_ORDERS,
        credits: { remaining: 5, refill: DAILY },
      });
      await pastBoundary(2_000);
      const every = { amount: 10_000, everyMs: 2_000 };
      const changed = await service.updateCredits(tenant, id, { set: 7_000, refill: every });
      assert.equal(changed.remaining, 7_000);
      assert.equal((await service.authorize(key)).creditResult?.remaining, 6_999);
      await service.updateCredits(tenant, id, { set: 6_999, refill: null });
      assert.equal("refill" in (await storage.findById(id))!.credits!, false);
      await pastBoundary(2_000);
      const spent = await service.authorize(key);
      assert.deepEqual([spent.creditResult?.remaining, spent.creditResult?.resetMs], [6_998, -1]);
    });

    it("a shorter rule alone: the balance kept, no refill before the new rule's next boundary", async () => {
      const { id, key } = await service.create({
        tenantId: tenant,
        name: "kept",
        scopes: READ_ORDERS,
        credits: { remaining: 1_000, refill: DAILY },
      });
      await service.authorize(key, { cost: 10 });
      const every = { amount: 500, everyMs: 3_000 };
      await pastBoundary(3_000);
      const changed = await service.updateCredits(tenant, id, { refill: every });
      assert.equal(changed.remaining, 990);
      const left = changed.nextRefillAt!.getTime() - Date.now();
      assert.ok(left > 1_000 && left <= 3_000, `the new rule's next boundary: ${left} ms`);
      assert.deepEqual((await storage.findById(id))!.credits!.refill, every);
      const spent = await service.authorize(key);
      assert.equal(spent.creditResult?.remaining, 989, "no refill at the change");
      await pastBoundary(3_000);
      assert.equal((await service.authorize(key)).creditResult?.remaining, 499, "refilled");
    });

    it("a longer rule alone with the old rule's refill due: taken at the change, none by the old rule after", async () => {
      const { id, key } = await service.create({
        tenantId: tenant,
        name: "owed",
        scopes: READ_ORDERS,
        credits: { remaining: 10, refill: { amount: 10, everyMs: 2_000 } },
      });
      await service.authorize(key, { cost: 7 });
      await pastBoundary(2_000); // the old rule's refill is due, not yet taken
      const changed = await service.updateCredits(tenant, id, { refill: DAILY });
      const midnight = Date.now() - (Date.now() % 86_400_000) + 86_400_000;
      assert.deepEqual(changed, { remaining: 10, nextRefillAt: new Date(midnight) });
      await pastBoundary(2_000);
      assert.equal((await service.authorize(key)).creditResult?.remaining, 9, "no old refill");
      await service.updateCredits(tenant, id, { refill: null });
      assert.equal("refill" in (await storage.findById(id))!.credits!, false);
      const spent = await service.authorize(key);
      assert.deepEqual([spent.creditResult?.remaining, spent.creditResult?.resetMs], [8, -1]);
    });
  });
}
