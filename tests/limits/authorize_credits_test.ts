/**
 * Credits spent by `ApiKeysService.authorize` on each real store: one round
 * trip (a Redis script, a PostgreSQL statement) per request with rate limits
 * and credits together; a credit denial leaves the rate-limit counts unchanged
 * and a rate-limit denial the balance (1,000 of 1,000); concurrent requests
 * spend exactly the balance and fire each credit event once, also a tenant's
 * pool spent by several keys through two services; the pool kept through its
 * keys' revocation, creation and rotation; concurrent authorizations of one
 * request spend once.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyError, type ApiKeyEvent, ApiKeysService } from "../../api_keys/mod.ts";
import { createRateLimiter, type RateLimiter } from "../../rate_limits/limiter.ts";
import { creditedKey, CreditedStorage } from "../api_keys/credited_storage.ts";
import { makeService, PEPPER_1, READ_ORDERS } from "../api_keys/helpers.ts";
import { openLimiter, openStore, readyStores, type RealStore } from "./_services.ts";

async function denial(promise: Promise<unknown>): Promise<ApiKeyError> {
  const error = await promise.then(() => undefined, (e) => e);
  assert.ok(error instanceof ApiKeyError, `expected an ApiKeyError, got ${error}`);
  return error;
}

for (const kind of await readyStores("authorize with credits")) {
  describe(`authorize with credits on the ${kind} store`, () => {
    let real: RealStore;
    let limiter: RateLimiter;
    let service: ApiKeysService;
    const storage = new CreditedStorage();
    const events: ApiKeyEvent[] = [];
    before(async () => {
      real = await openStore(kind, undefined, 10);
      limiter = createRateLimiter({ store: real.store, timeoutMs: 10_000, logger: () => {} });
      service = new ApiKeysService({
        peppers: { 1: PEPPER_1 },
        storage,
        limiter,
        creditThresholds: [25, 10],
        onEvent: (event) => void events.push(event),
      });
    });
    after(() => real.close());

    it("one round trip per request with policies and credits; 3 credits spend then api_key_usage_exceeded", async () => {
      const { key } = await creditedKey(service, storage, { remaining: 3 }, [
        { name: "minute", limit: 100, windowMs: 60_000 },
      ]);
      await service.authorize(key); // verify fills the cache: compare steady-state requests
      for (const left of [1, 0]) {
        const sent = real.sent();
        const context = await service.authorize(key);
        assert.equal(real.sent() - sent, 1, "exactly one round trip");
        assert.equal(context.creditResult?.remaining, left);
        assert.equal(context.rateLimitResults?.[0].remaining, 100 - (3 - left));
      }
      const error = await denial(service.authorize(key));
      assert.equal(error.code, "api_key_usage_exceeded");
      assert.deepEqual(error.creditResult, { allowed: false, remaining: 0, resetMs: -1 });
      assert.equal(error.rateLimitResults?.[0].remaining, 97, "the denied request counted nothing");
    });

    it("1,000 of 1,000: a credit denial leaves the rate-limit counts, a rate-limit denial the balance", async () => {
      const policy = { name: "day", limit: 5_000, windowMs: 86_400_000 };
      const broke = await creditedKey(service, storage, { remaining: 0 }, [policy]);
      const limited = await creditedKey(service, storage, { remaining: 5_000 }, [
        { name: "burst", limit: 1, windowMs: 86_400_000 },
      ]);
      await service.authorize(limited.key);
      const probe = (id: string) =>
        limiter.check(`key:${id}`, [policy], {
          cost: 0,
          credits: { initial: 0, subject: `key:${id}` },
          slot: "tenant:t1", // the service's slot for the keys of tenant t1 (their counters' keys on Redis)
        });
      let kept = 0;
      for (let trial = 0; trial < 1_000; trial++) {
        const byCredit = await denial(service.authorize(broke.key));
        const byLimit = await denial(service.authorize(limited.key));
        const counts = await probe(broke.id);
        if (
          byCredit.code === "api_key_usage_exceeded" &&
          byLimit.code === "api_key_rate_limited" &&
          byLimit.creditResult?.remaining === 4_999 &&
          counts.policies[0].remaining === 5_000
        ) kept++;
      }
      assert.equal(kept, 1_000);
      assert.equal((await probe(limited.id)).credits?.remaining, 4_999);
    });

    it("concurrent requests spend exactly the balance and fire each event once", async () => {
      const { key, id } = await creditedKey(service, storage, { remaining: 50 });
      await service.authorize(key, { cost: 0 });
      const answers = await Promise.allSettled(
        Array.from({ length: 80 }, () => service.authorize(key)),
      );
      assert.equal(answers.filter((a) => a.status === "fulfilled").length, 50);
      const refused = answers.filter((a) => a.status === "rejected");
      assert.ok(
        refused.every((a) => (a.reason as ApiKeyError).code === "api_key_usage_exceeded"),
      );
      const mine = events.filter((e) => "keyId" in e && e.keyId === id).flatMap((e) =>
        e.type === "api_key.credits_low"
          ? [e.threshold]
          : e.type === "api_key.credits_exhausted"
          ? [0]
          : []
      );
      assert.deepEqual(mine.sort((a, b) => a - b), [0, 10, 25]);
    });

    it("a tenant's pool spent by 3 keys through 2 services (each its own connections): exactly the pool, every refusal the tenant's, each pool event once", async () => {
      const other = await openStore(kind, undefined, 10);
      try {
        const second = new ApiKeysService({
          peppers: { 1: PEPPER_1 },
          storage,
          limiter: createRateLimiter({ store: other.store, timeoutMs: 10_000, logger: () => {} }),
          creditThresholds: [25, 10],
          onEvent: (event) => void events.push(event),
        });
        const tenantId = `pool-${crypto.randomUUID()}`;
        const keys: string[] = [];
        for (const credits of [{ remaining: 40 }, { remaining: 999 }, { remaining: 1 }]) {
          const { key } = await service.create({
            tenantId,
            name: "pooled",
            scopes: [{ resource: "orders", level: "read" }],
            credits: { ...credits, sharedBy: "tenant" },
          });
          keys.push(key);
        }
        const answers = await Promise.allSettled(
          Array.from({ length: 90 }, (_, i) => (i % 2 ? second : service).authorize(keys[i % 3])),
        );
        assert.equal(answers.filter((a) => a.status === "fulfilled").length, 40);
        for (const answer of answers) {
          if (answer.status === "fulfilled") continue;
          assert.deepEqual(
            [(answer.reason as ApiKeyError).code, (answer.reason as ApiKeyError).creditBalance],
            ["api_key_usage_exceeded", "tenant"],
          );
        }
        assert.equal((await service.tenantCredits(tenantId))?.remaining, 0);
        const pooled = events.filter((e) =>
          "creditBalance" in e && e.tenantId === tenantId && e.creditBalance === "tenant"
        );
        assert.deepEqual(
          pooled.map((e) => e.type === "api_key.credits_low" ? e.threshold : 0).sort((a, b) =>
            a - b
          ),
          [0, 10, 25],
          "once per threshold for the tenant, whichever service spent",
        );
      } finally {
        await other.close();
      }
    });

    it("a tenant's pool through its keys' lifecycle: revoking the last key keeps it; a key created later joins it as it is, also after updateCredits; a rotation's successor spends it", async () => {
      const tenantId = `pool-${crypto.randomUUID()}`;
      const create = (remaining: number) =>
        service.create({
          tenantId,
          name: "pooled",
          scopes: [{ resource: "orders", level: "read" }],
          credits: { remaining, sharedBy: "tenant" },
        });
      const first = await create(3);
      await service.authorize(first.key, { cost: 2 });
      await service.revoke(first.id);
      assert.equal((await service.tenantCredits(tenantId))?.remaining, 1, "no key left: kept");
      const later = await create(1_000);
      assert.equal((await service.authorize(later.key)).tenantCreditResult?.remaining, 0);
      assert.equal((await denial(service.authorize(later.key))).creditBalance, "tenant");
      await service.updateCredits(tenantId, null, { set: 4 });
      const after = await create(1_000);
      const rotated = await service.rotate(later.id);
      await service.authorize(after.key);
      await service.authorize(rotated.key);
      await service.authorize(later.key); // in its grace
      assert.equal((await service.authorize(after.key)).tenantCreditResult?.remaining, 0);
      assert.equal((await denial(service.authorize(rotated.key))).creditBalance, "tenant");
      const listed = await service.listSummaries(tenantId, { includeRevoked: true });
      assert.deepEqual(listed.map((s) => s.tenantCredits?.remaining), [0, 0, 0, 0]);
    });
  });
}

for (const kind of await readyStores("one charge per request")) {
  describe(`VerifyFlow on a ${kind} store: one charge per request`, () => {
    it("concurrent authorizations of the same request spend once, cached key or not", async () => {
      const real = await openLimiter(kind);
      try {
        const { service } = makeService({ limiter: real.limiter });
        const { key } = await service.create({
          tenantId: `t-${crypto.randomUUID()}`,
          name: "k",
          scopes: READ_ORDERS,
          credits: { remaining: 100 },
        });
        for (const expected of [99, 98]) {
          const request = {};
          const [first, second] = await Promise.all([
            service.authorize(key, { request }),
            service.authorize(key, { request }),
          ]);
          assert.equal(second, first);
          assert.equal(first.creditResult?.remaining, expected);
        }
        const after = await service.authorize(key, { cost: 0 });
        assert.equal(after.creditResult?.remaining, 98, "one credit per request");
        // A refused authorization asking another charge keeps the request's earlier one.
        const request = {};
        const charged = await service.authorize(key, { request, cost: 2 });
        await assert.rejects(service.authorize(key, { request, cost: 500 }), {
          code: "api_key_usage_exceeded",
        });
        assert.equal(await service.authorize(key, { request, cost: 2 }), charged);
        const last = await service.authorize(key, { cost: 0 });
        assert.equal(last.creditResult?.remaining, 96, "the cost of 2 spent once");
        await service.close();
      } finally {
        await real.close();
      }
    });
  });
}
