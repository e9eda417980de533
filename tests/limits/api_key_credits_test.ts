/**
 * The API-key service's credit write-back on a real Redis store: every
 * `persistIntervalMs` the balances spent go back to the keys' records (the
 * rotated key's and its successor's, a key minted with `limitsOf`), a failed write is retried at the next
 * interval, `close()` writes back, and after a `FLUSHALL` the balance reloads
 * from the last write-back, refunding at most one interval of spends: through
 * `authorize` with the verification cache too, on one instance or a fleet;
 * a tenant's shared pool is written back to every key of the tenant spending it;
 * an `updateCredits` racing a write-back (one in flight, one whose write
 * failed and is kept, or one whose drain answers or fails late) is never
 * overwritten by the older balance it drained nor by a refill of the rule it
 * replaced, nor reloaded as a refill when Redis applied it just past a refill boundary.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ApiKeyCredits,
  ApiKeyError,
  ApiKeysService,
  type ApiKeyStorage,
  ApiKeyStorageError,
  InMemoryApiKeyChangeFeed,
  InMemoryApiKeyStorage,
} from "../../api_keys/mod.ts";
import {
  counterSubjectOf,
  creditCounterOf,
  creditSubjectOf,
} from "../../api_keys/metering/_limits.ts";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { createRedisRateLimitStore, type RedisScriptClient } from "../../rate_limits/redis/mod.ts";
import { connectRedis, holdingReads, pinnedClient, REDIS_URL } from "./_services.ts";
import { databaseReady } from "../postgres/prisma_client.ts";
import { eventually } from "../eventually.ts";
import { hasRedisServer, startOwnRedis } from "./_own_redis.ts";

const INTERVAL_MS = 200;
const READ_ORDERS = [{ resource: "orders", level: "read" as const }];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

if (
  databaseReady(
    "API-key credits write-back on redis",
    REDIS_URL ? undefined : "REDIS_URL is not set (run scripts/start_redis.sh)",
  )
) {
  describe("API-key credits write-back on redis", () => {
    /** A service over `storage` and a real Redis store; `spend` spends as a request does (the record's last written-back balance as `initial`). */
    async function open(
      storage: ApiKeyStorage = new InMemoryApiKeyStorage(),
      feed?: InMemoryApiKeyChangeFeed,
      { url = REDIS_URL!, persistIntervalMs = INTERVAL_MS } = {},
    ) {
      const client = await connectRedis(url);
      const limiter = createRateLimiter({
        store: createRedisRateLimitStore({ client, prefix: "wb:" }),
        timeoutMs: 2_000,
        logger: () => {},
      });
      const service = new ApiKeysService({
        peppers: { 1: "credits-write-back-pepper-0123456789abc" },
        storage,
        limiter,
        persistIntervalMs,
        feed,
      });
      const credits = async (id: string): Promise<ApiKeyCredits> =>
        (await storage.findById(id))!.credits!;
      const spend = async (id: string, cost = 1) => {
        const record = (await storage.findById(id))!;
        const stored = record.credits!;
        const result = await limiter.check("unused", [], {
          cost,
          credits: {
            ...creditCounterOf(stored, record.tenantId),
            subject: creditSubjectOf(id, stored),
          },
        });
        assert.equal(result.unavailable, false);
        return result.credits!;
      };
      return { client, service, credits, spend };
    }

    /**
     * A service over a Redis store whose scripts read `redisNow()` for `TIME` (`pinnedClient`),
     * its own clock `serviceNow()`, writing back only on close.
     */
    async function pinned(prefix: string, redisNow: () => number, serviceNow: () => number) {
      const client = await connectRedis(REDIS_URL!);
      const storage = new InMemoryApiKeyStorage();
      const service = new ApiKeysService({
        peppers: { 1: "credits-write-back-pepper-0123456789abc" },
        storage,
        limiter: createRateLimiter({
          store: createRedisRateLimitStore({
            client: pinnedClient(client as unknown as RedisScriptClient, redisNow),
            prefix,
          }),
          timeoutMs: 2_000,
          logger: () => {},
        }),
        clock: () => new Date(serviceNow()),
        persistIntervalMs: 3_600_000,
      });
      return { client, storage, service };
    }

    it("writes spent balances back every interval to the key and its successor; close() writes back", async () => {
      const { client, service, credits, spend } = await open();
      try {
        const { id: first } = await service.create({
          tenantId: "t1",
          name: "plan",
          scopes: READ_ORDERS,
          credits: { remaining: 100 },
        });
        for (let i = 0; i < 10; i++) await spend(first);
        await eventually(async () => (await credits(first)).remaining === 90, "written back");
        const { id: second } = await service.rotate(first);
        assert.deepEqual(
          [(await credits(second)).remaining, (await credits(second)).balanceKeyId],
          [90, first],
        );
        await spend(second, 5);
        await eventually(
          async () =>
            (await credits(first)).remaining === 85 && (await credits(second)).remaining === 85,
          "both records written back",
        );
        await spend(first, 7);
        await service.close();
        assert.equal((await credits(second)).remaining, 78);
        assert.equal((await credits(first)).remaining, 78);
      } finally {
        await service.close();
        client.destroy();
      }
    });

    it("writes a spent balance back to a key minted with limitsOf (on no rotation chain) too: after FLUSHALL that key's first spend reloads the spent balance", async () => {
      const { client, service, credits, spend } = await open();
      try {
        const { id: source } = await service.create({
          tenantId: "minting",
          name: "source",
          scopes: READ_ORDERS,
          credits: { remaining: 100 },
        });
        const minted = await service.create({
          tenantId: "minting",
          name: "minted",
          scopes: READ_ORDERS,
          limitsOf: source,
        });
        assert.deepEqual(
          [(await credits(minted.id)).remaining, (await credits(minted.id)).balanceKeyId],
          [100, source],
        );
        for (let i = 0; i < 10; i++) await spend(source);
        await eventually(async () => (await credits(source)).remaining === 90, "written back");
        await sleep(2 * INTERVAL_MS); // a pass or two more: nothing else to write
        assert.equal((await credits(minted.id)).remaining, 90, "the minted key's copy");
        await client.flushAll(); // Redis lost: the minted key spends first
        assert.equal((await service.authorize(minted.key)).creditResult?.remaining, 89);
      } finally {
        await service.close();
        client.destroy();
      }
    });

    it("writes a tenant's pool back every interval to every key of the tenant spending it; after FLUSHALL it reloads from there", async () => {
      const { client, service, credits } = await open();
      try {
        const created = await Promise.all([0, 1].map((i) =>
          service.create({
            tenantId: "pool-tenant",
            name: `k${i}`,
            scopes: READ_ORDERS,
            credits: i === 0 ? { remaining: 50, sharedBy: "tenant" } : {
              remaining: 9,
              pool: { remaining: 50 },
            },
          })
        ));
        const [a, b] = created;
        for (let i = 0; i < 6; i++) await service.authorize((i % 2 ? a : b).key);
        const pool = async (id: string) => {
          const c = await credits(id);
          return (c.pool ?? c).remaining;
        };
        await eventually(
          async () => await pool(a.id) === 44 && await pool(b.id) === 44,
          "the pool written back to both records",
        );
        assert.equal((await credits(b.id)).remaining, 6, "b's own balance written back too");
        await client.flushAll();
        const context = await service.authorize(a.key);
        assert.equal(context.creditResult?.remaining, 43, "reloaded from the written-back pool");
      } finally {
        await service.close();
        client.destroy();
      }
    });

    it("keeps a failed write for the next interval", async () => {
      const inner = new InMemoryApiKeyStorage();
      let failures = 2;
      const storage = new Proxy(inner, {
        get(target, property) {
          if (property === "setCredits") {
            return (id: string, credits: ApiKeyCredits) =>
              failures-- > 0 ? Promise.reject(new Error("down")) : target.setCredits(id, credits);
          }
          const value = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const { client, service, credits, spend } = await open(storage);
      try {
        const { id } = await service.create({
          tenantId: "t1",
          name: "plan",
          scopes: READ_ORDERS,
          credits: { remaining: 50 },
        });
        await spend(id, 3);
        await eventually(async () => (await credits(id)).remaining === 47, "retried write");
        assert.ok(failures < 0);
      } finally {
        await service.close();
        client.destroy();
      }
    });

    it("a tenant of a long (hashed) id: its pool's spend is written back though 10,000 other long ids were counted before the pass", async () => {
      // close() runs one write-back pass, as the timer does: the test decides when.
      const { client, service, credits } = await open(undefined, undefined, {
        persistIntervalMs: 3_600_000,
      });
      try {
        // Over 200 characters: the pool's subject is `tenant#<sha-256>` (the key's own stays readable).
        const tenantId = `long-tenant-${"x".repeat(240)}`;
        const { id, key } = await service.create({
          tenantId,
          name: "plan",
          scopes: READ_ORDERS,
          credits: { remaining: 30, pool: { remaining: 50 } },
        });
        await client.del(`wb:{${counterSubjectOf("tenant", tenantId)}}:credits:c`);
        assert.equal((await service.authorize(key)).tenantCreditResult?.remaining, 49);
        // Before the pass, 10,000 other tenants of long ids are counted by this process.
        for (let i = 0; i < 10_000; i++) {
          counterSubjectOf("tenant", `other-tenant-${i}-${"z".repeat(240)}`);
        }
        await service.close();
        const written = (await credits(id)).pool!.remaining;
        await client.flushAll(); // Redis lost: the pool reloads from the record
        assert.equal((await service.authorize(key)).tenantCreditResult?.remaining, written - 1);
        assert.equal(written, 49, "the spend reached the record");
      } finally {
        await service.close();
        client.destroy();
      }
    });

    it("logs a write-back failure once per outage: the first failure after a success, then that it recovered", async () => {
      let down = true;
      const storage = gatedStorage(
        new InMemoryApiKeyStorage(),
        (go) => down ? Promise.reject(new Error("down")) : go(),
      );
      const { client, service, credits, spend } = await open(storage, undefined, {
        persistIntervalMs: 100,
      });
      const { id } = await service.create({
        tenantId: "outages",
        name: "plan",
        scopes: READ_ORDERS,
        credits: { remaining: 50 },
      });
      const lines: string[] = [];
      const warn = console.warn;
      const info = console.info;
      console.warn = console.info = (line: string) => {
        if (String(line).includes("credits write-back")) lines.push(String(line));
      };
      try {
        for (const outage of [1, 2]) {
          await spend(id);
          await sleep(450); // about 4 failed passes
          assert.equal(lines.length, 2 * outage - 1, `outage ${outage}: one line`);
          down = false;
          await eventually(async () => (await credits(id)).remaining === 50 - outage, "written");
          await eventually(() => Promise.resolve(lines.length === 2 * outage), "recovered");
          down = true;
        }
        assert.match(lines[0], /credits write-back failed \(ApiKeyStorageError\)/);
        assert.match(lines[1], /credits write-back recovered/);
        assert.equal(lines.length, 4);
      } finally {
        console.warn = warn;
        console.info = info;
        down = false;
        await service.close();
        client.destroy();
      }
    });

    /** `authorize`'s credit answer, or the refusal's code. */
    const authorize = (service: ApiKeysService, key: string, cost = 1) =>
      service.authorize(key, { cost }).then(
        (context) => context.creditResult!.remaining,
        (error) => {
          if (error instanceof ApiKeyError) return error.code;
          throw error;
        },
      );

    it("through authorize with the verification cache: 20 spent and written back as 0, FLUSHALL, the next request is usage_exceeded", async () => {
      const { client, service, credits } = await open();
      try {
        const { id, key } = await service.create({
          tenantId: "t1",
          name: "trial",
          scopes: READ_ORDERS,
          credits: { remaining: 20 },
        });
        for (let i = 19; i >= 0; i--) assert.equal(await authorize(service, key), i);
        await eventually(async () => (await credits(id)).remaining === 0, "written back");
        await client.flushAll();
        assert.equal(await authorize(service, key), "api_key_usage_exceeded");
        assert.equal(await authorize(service, key), "api_key_usage_exceeded");
      } finally {
        await service.close();
        client.destroy();
      }
    });

    it("through authorize across a fleet (change feed): the instance that did not write back reloads the written-back balance", async () => {
      const storage = new InMemoryApiKeyStorage();
      const feed = new InMemoryApiKeyChangeFeed();
      const a = await open(storage, feed);
      const b = await open(storage, feed);
      try {
        const { id, key } = await a.service.create({
          tenantId: "t1",
          name: "trial",
          scopes: READ_ORDERS,
          credits: { remaining: 20 },
        });
        assert.equal(await authorize(b.service, key), 19); // b caches the record (20)
        for (let i = 18; i >= 0; i--) assert.equal(await authorize(a.service, key), i);
        await eventually(async () => (await a.credits(id)).remaining === 0, "written back");
        await sleep(2 * INTERVAL_MS); // b's own write-back passes too
        await a.client.flushAll();
        assert.equal(await authorize(b.service, key), "api_key_usage_exceeded");
      } finally {
        await a.service.close();
        await b.service.close();
        a.client.destroy();
        b.client.destroy();
        await feed.close();
      }
    });

    it("through authorize: after FLUSHALL the balance reloads from the last write-back, refunding at most one interval of spends", async () => {
      const { client, service, credits } = await open();
      try {
        const { id, key } = await service.create({
          tenantId: "t1",
          name: "plan",
          scopes: READ_ORDERS,
          credits: { remaining: 10_000 },
        });
        const spentAt: number[] = [];
        const spendFor = async (ms: number) => {
          const end = Date.now() + ms;
          while (Date.now() < end) {
            assert.equal(typeof await authorize(service, key), "number");
            spentAt.push(Date.now());
            await sleep(5);
          }
        };
        await spendFor(3 * INTERVAL_MS + 50);
        const flushedAt = Date.now();
        await client.flushAll();
        const spentBefore = spentAt.length;
        const refund = (await authorize(service, key, 0) as number) - (10_000 - spentBefore);
        const bound = spentAt.filter((t) => t > flushedAt - INTERVAL_MS - 100).length;
        assert.ok(refund >= 0, `refund ${refund}`);
        assert.ok(refund <= bound, `refund ${refund} > ${bound} spends of the last interval`);
        assert.ok(spentBefore > bound, "the run spans several intervals");
        await spendFor(INTERVAL_MS);
        await service.close();
        assert.equal((await credits(id)).remaining, 10_000 - spentAt.length + refund);
      } finally {
        await service.close();
        client.destroy();
      }
    });

    /**
     * `inner` whose record writes of credits (`setCredits`, `setTenantPool`)
     * go through `write(go)`: the test decides when (and whether) each lands.
     */
    function gatedStorage(
      inner: InMemoryApiKeyStorage,
      write: (go: () => Promise<unknown>) => Promise<unknown>,
    ): ApiKeyStorage {
      return new Proxy(inner, {
        get(target, property) {
          if (property === "setCredits" || property === "setTenantPool") {
            const method = Reflect.get(target, property) as (
              ...args: unknown[]
            ) => Promise<unknown>;
            return (...args: unknown[]) => write(() => method.apply(target, args));
          }
          const value = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    }

    /** The balance a record keeps: its own, or its copy of the pool. */
    const kept = (credits: ApiKeyCredits) => (credits.pool ?? credits).remaining;

    it("updateCredits racing a write-back in flight (own balance, pool): the older drained balance never lands over the change; after FLUSHALL the change reloads", async () => {
      for (const pooled of [false, true]) {
        let hold: ((go: () => Promise<unknown>) => Promise<unknown>) | undefined;
        const storage = gatedStorage(new InMemoryApiKeyStorage(), (go) => hold ? hold(go) : go());
        const { client, service, credits } = await open(storage);
        try {
          const { id, key } = await service.create({
            tenantId: "race",
            name: "plan",
            scopes: READ_ORDERS,
            credits: pooled ? { remaining: 100, sharedBy: "tenant" } : { remaining: 100 },
          });
          for (let i = 0; i < 10; i++) await service.authorize(key);
          // The next write-back drained 90 and is writing it: its write waits for the test.
          let release!: () => void;
          const writing = new Promise<void>((drained) => {
            hold = (go) => {
              hold = undefined;
              drained();
              return new Promise<void>((resolve) => release = resolve).then(go);
            };
          });
          await writing;
          const update = service.updateCredits("race", pooled ? null : id, { set: 5 });
          await sleep(50);
          release();
          assert.equal((await update).remaining, 5);
          assert.equal(
            kept(await credits(id)),
            5,
            `the record keeps the change (pooled: ${pooled})`,
          );
          await client.flushAll(); // Redis restarted without persistence
          const context = await service.authorize(key);
          assert.equal(
            context.creditResult?.remaining,
            4,
            `reloaded the change (pooled: ${pooled})`,
          );
        } finally {
          await service.close();
          client.destroy();
        }
      }
    });

    it(
      "a drained balance whose write failed never lands over a later updateCredits, even when the next drain fails (Redis killed, restarted empty)",
      { skip: !hasRedisServer() },
      async () => {
        const own = await startOwnRedis();
        let fail = false;
        const storage = gatedStorage(new InMemoryApiKeyStorage(), (go) => {
          if (!fail) return go();
          fail = false;
          return Promise.reject(new Error("storage blip"));
        });
        // close() runs one write-back pass, as the timer does: the test decides when.
        const { client, service, credits } = await open(storage, undefined, {
          url: own.url,
          persistIntervalMs: 3_600_000,
        });
        try {
          const { id, key } = await service.create({
            tenantId: "race",
            name: "plan",
            scopes: READ_ORDERS,
            credits: { remaining: 100 },
          });
          for (let i = 0; i < 10; i++) await service.authorize(key);
          fail = true;
          await assert.rejects(service.close(), ApiKeyStorageError); // drained 90, its write kept
          assert.equal((await service.updateCredits("race", id, { set: 5 })).remaining, 5);
          await own.kill();
          await assert.rejects(service.close()); // the drain fails: Redis is down
          assert.equal((await credits(id)).remaining, 5, "the record keeps the change");
          await own.restart();
          await eventually(() => Promise.resolve(client.isReady), "reconnected");
          const context = await service.authorize(key);
          assert.equal(context.creditResult?.remaining, 4, "reloaded the change");
        } finally {
          await service.close().catch(() => {});
          client.destroy();
          await own.stop();
        }
      },
    );

    it("a write-back drain answered late (before or after an updateCredits { refill } made meanwhile) or failing late never lands over the change, nor reads the balance again under the rule it replaced: after Redis loses the balance the change reloads (own balance, pool)", async () => {
      const EVERY_MS = 2_000;
      const plan = { remaining: 100, refill: { amount: 100, everyMs: EVERY_MS } };
      const lates = ["answered before the change", "answered after it", "failing after it"];
      for (const pooled of [false, true]) {
        for (const late of lates) {
          const redis = await connectRedis(REDIS_URL!);
          const { client, holdNextRead } = holdingReads(redis as unknown as RedisScriptClient);
          const storage = new InMemoryApiKeyStorage();
          const prefix = `late:${crypto.randomUUID()}:`;
          const service = new ApiKeysService({
            peppers: { 1: "credits-write-back-pepper-0123456789abc" },
            storage,
            limiter: createRateLimiter({
              store: createRedisRateLimitStore({ client, prefix }),
              timeoutMs: 200,
              logger: () => {},
            }),
            persistIntervalMs: 3_600_000, // close() runs a pass: the test decides when
          });
          const what = `${late} (pooled: ${pooled})`;
          try {
            // Just after a boundary of the old rule: the steps up to the change fit in its period.
            await sleep(EVERY_MS - (Date.now() % EVERY_MS) + 20);
            const { id, key } = await service.create({
              tenantId: "late",
              name: "plan",
              scopes: READ_ORDERS,
              credits: pooled ? { ...plan, sharedBy: "tenant" } : plan,
            });
            assert.equal((await service.authorize(key, { cost: 10 })).creditResult?.remaining, 90);
            const { release, read } = holdNextRead();
            // A pass: its drain reads 90, answered past the limiter's timeoutMs.
            await assert.rejects(service.close(), /did not answer drainCreditChanges/);
            await read;
            if (late === lates[0]) release();
            await sleep(20);
            assert.equal((await service.authorize(key, { cost: 20 })).creditResult?.remaining, 70);
            const change = await service.updateCredits("late", pooled ? null : id, {
              refill: null,
            });
            assert.deepEqual([change.remaining, change.nextRefillAt], [70, null], what);
            if (late === lates[2]) await sleep(EVERY_MS - (Date.now() % EVERY_MS) + 20);
            release(late === lates[2] ? new Error("ECONNRESET") : undefined);
            await sleep(20);
            await service.close(); // the next pass
            const credits = (await storage.findById(id))!.credits!;
            assert.deepEqual(
              [kept(credits), (credits.pool ?? credits).refill],
              [70, undefined],
              what,
            );
            const subject = pooled ? "tenant:late" : `key:${id}`;
            await redis.del(`${prefix}{tenant:late}:${subject}:credits:c`); // Redis lost it
            assert.equal((await service.authorize(key)).creditResult?.remaining, 69, what);
          } finally {
            await service.close().catch(() => {});
            redis.destroy();
          }
        }
      }
    });

    it("updateCredits with a new refill rule, then a write-back before any spend: the record keeps the change, never the replaced rule's refill (own balance, pool)", async () => {
      const plan = { remaining: 100, refill: { amount: 100, everyMs: 60_000 } };
      for (const pooled of [false, true]) {
        let now = Date.UTC(2030, 1, 1, 12); // Redis's TIME pinned; the service's clock
        const clock = () => now;
        const { client, storage, service } = await pinned(`rule${Date.now()}:`, clock, clock);
        try {
          const { id } = await service.create({
            tenantId: "t1",
            name: "plan",
            scopes: READ_ORDERS,
            credits: pooled ? { ...plan, sharedBy: "tenant" } : plan,
          });
          const downgrade = { set: 10, refill: { amount: 50, interval: "daily" as const } };
          const changed = await service.updateCredits("t1", pooled ? null : id, downgrade);
          assert.equal(changed.remaining, 10);
          now += 90_000; // a boundary of the replaced rule passes; no spend
          await service.close(); // drains and writes back
          const { credits } = (await storage.findById(id))!;
          assert.equal((credits!.pool ?? credits!).remaining, 10, `pooled: ${pooled}`);
        } finally {
          await service.close();
          client.destroy();
        }
      }
    });

    it("a change applied just past a refill boundary (asked just before it), then Redis lost: the change reloads, not a refill (own balance, pool)", async () => {
      const boundary = Date.UTC(2030, 1, 1);
      const plan = { remaining: 100, refill: { amount: 1_000, interval: "monthly" as const } };
      for (const pooled of [false, true]) {
        // Redis's TIME pinned (each step well within the limiter's timeout); the service's clock.
        let redisNow = boundary - 500;
        let serviceNow = redisNow;
        const { client, service } = await pinned(
          "bd:",
          () => redisNow,
          () => serviceNow,
        );
        try {
          await client.flushAll();
          const { id, key } = await service.create({
            tenantId: "t1",
            name: "plan",
            scopes: READ_ORDERS,
            credits: pooled ? { ...plan, sharedBy: "tenant" } : plan,
          });
          assert.equal((await service.authorize(key)).creditResult?.remaining, 99);
          serviceNow = boundary - 3;
          redisNow = boundary + 2; // Redis applies the set past midnight, after its refill
          assert.equal(
            (await service.updateCredits("t1", pooled ? null : id, { set: 5 })).remaining,
            5,
          );
          serviceNow = redisNow = boundary + 600;
          await client.flushAll(); // before any write-back: the record's copy is the change's
          const context = await service.authorize(key);
          assert.equal(context.creditResult?.remaining, 4, `pooled: ${pooled}`);
        } finally {
          await service.close();
          await client.flushAll();
          client.destroy();
        }
      }
    });
  });
}
