/** Credits spent in authorize (api_keys/metering/_limits.ts `RequestLimits`): the service on the memory limiter. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeyError,
  type ApiKeyEvent,
  ApiKeysService,
  type CreateApiKeyInput,
} from "../../../api_keys/mod.ts";
import type { ApiKeyAuthorizationMetric } from "../../../api_keys/events.ts";
import { buildLimits, creditSubjectOf, RequestLimits } from "../../../api_keys/metering/_limits.ts";
import type { ApiKeyContext } from "../../../api_keys/types.ts";
import type { CreditRefill } from "../../../rate_limits/store.ts";
import {
  createMemoryRateLimitStore,
  createRateLimiter,
  type RateLimitStore,
} from "../../../rate_limits/mod.ts";
import { FakeClocks, PEPPER_1, READ_ORDERS, spyCalls } from "../helpers.ts";
import { creditedKey, CreditedStorage } from "../credited_storage.ts";

const HOUR = 3_600_000;

/** A service over a credited memory storage and a memory limiter, both on one fake clock. */
function setup(
  options: { store?: RateLimitStore; onStoreError?: "open" | "closed"; thresholds?: number[] } = {},
) {
  const clocks = new FakeClocks();
  const events: ApiKeyEvent[] = [];
  const metrics: ApiKeyAuthorizationMetric[] = [];
  const limiter = createRateLimiter({
    store: options.store ?? createMemoryRateLimitStore({ now: () => clocks.now }),
    onStoreError: options.onStoreError,
    logger: () => {},
  });
  const storage = new CreditedStorage();
  const service = new ApiKeysService({
    peppers: { 1: PEPPER_1 },
    storage,
    limiter,
    clock: clocks.clock,
    monotonicClock: clocks.monotonicClock,
    creditThresholds: options.thresholds,
    onEvent: (event) => void events.push(event),
    onAuthorizationMetric: (metric) => void metrics.push(metric),
  });
  return { service, storage, limiter, clocks, events, metrics };
}

async function denial(promise: Promise<unknown>): Promise<ApiKeyError> {
  const error = await promise.then(() => undefined, (e) => e);
  assert.ok(error instanceof ApiKeyError, `expected an ApiKeyError, got ${error}`);
  return error;
}

const creditEvents = (events: ApiKeyEvent[]) =>
  events.filter((e) => e.type === "api_key.credits_low" || e.type === "api_key.credits_exhausted");

describe("credits in authorize", () => {
  it("a key with 3 credits and no policy spends 1 per request, then is refused api_key_usage_exceeded (429)", async () => {
    const { service, storage, metrics } = setup();
    const { key } = await creditedKey(service, storage, { remaining: 3 });
    for (const left of [2, 1, 0]) {
      const context = await service.authorize(key);
      assert.deepEqual(context.creditResult, { allowed: true, remaining: left, resetMs: -1 });
      assert.equal(context.rateLimitResults, undefined);
      assert.equal(context.credits?.remaining, 3, "the stored credits, as read");
    }
    const error = await denial(service.authorize(key));
    assert.equal(error.code, "api_key_usage_exceeded");
    assert.equal(error.httpStatus, 429);
    assert.equal(error.message, "API key has too few credits left");
    assert.deepEqual(error.creditResult, { allowed: false, remaining: 0, resetMs: -1 });
    assert.deepEqual(metrics.map((m) => m.outcome), [
      "success",
      "success",
      "success",
      "usage_exceeded",
    ]);
  });

  it("spends the route's cost (0 only checks); a cost over the balance is refused and spends nothing", async () => {
    const { service, storage } = setup();
    const { key } = await creditedKey(service, storage, { remaining: 10 });
    assert.equal((await service.authorize(key, { cost: 4 })).creditResult?.remaining, 6);
    assert.equal((await service.authorize(key, { cost: 0 })).creditResult?.remaining, 6);
    assert.equal((await denial(service.authorize(key, { cost: 7 }))).creditResult?.remaining, 6);
    assert.equal((await service.authorize(key, { cost: 6 })).creditResult?.remaining, 0);
  });

  it("refills lazily at the boundary (everyMs), to the amount, no carry-over; the denial says when", async () => {
    const { service, storage, clocks } = setup();
    const start = Math.floor(clocks.now / HOUR) * HOUR;
    clocks.now = start + 1_000;
    const { key } = await creditedKey(service, storage, {
      remaining: 2,
      updatedAt: new Date(clocks.now),
      refill: { amount: 5, everyMs: HOUR },
    });
    await service.authorize(key);
    await service.authorize(key);
    const error = await denial(service.authorize(key));
    assert.deepEqual(error.creditResult, { allowed: false, remaining: 0, resetMs: HOUR - 1_000 });
    clocks.now = start + HOUR;
    assert.equal((await service.authorize(key)).creditResult?.remaining, 4);
    clocks.now = start + 2 * HOUR;
    assert.equal((await service.authorize(key)).creditResult?.remaining, 4, "5, not 4 + 5");
  });

  it("a stored balance read before a boundary gets the refill due since updatedAt", async () => {
    const { service, storage, clocks } = setup();
    const { key } = await creditedKey(service, storage, {
      remaining: 0,
      updatedAt: new Date(clocks.now - 2 * 86_400_000),
      refill: { amount: 100, interval: "daily" },
    });
    const context = await service.authorize(key);
    assert.equal(context.creditResult?.remaining, 99);
    assert.equal(context.creditResult?.resetMs, 86_400_000, "FakeClocks starts at UTC midnight");
  });

  it("a stored refill rule with a field of another version is read past: the key verifies, spends and refills; its summary shows the rule without it", async () => {
    const { service, storage, clocks } = setup();
    const refill = { amount: 100, interval: "daily", cap: 500 } as unknown as CreditRefill;
    const { key } = await creditedKey(service, storage, {
      remaining: 0,
      updatedAt: new Date(clocks.now - 86_400_000),
      refill,
      pool: { remaining: 10, updatedAt: new Date(0), refill },
    });
    const context = await service.authorize(key);
    assert.equal(context.creditResult?.remaining, 99);
    assert.equal(context.creditResult?.resetMs, 86_400_000);
    const [summary] = await service.listSummaries("t1");
    assert.deepEqual(summary.credits?.refill, { amount: 100, interval: "daily" });
    assert.deepEqual(summary.tenantCredits?.refill, { amount: 100, interval: "daily" });
    await service.close();
  });

  it("a key and its rotated successor (balanceKeyId) spend one balance", async () => {
    const { service, storage } = setup();
    const first = await creditedKey(service, storage, { remaining: 3 });
    const second = await creditedKey(service, storage, { remaining: 3, balanceKeyId: first.id });
    await service.authorize(first.key);
    await service.authorize(second.key);
    assert.equal((await service.authorize(first.key)).creditResult?.remaining, 0);
    assert.equal((await denial(service.authorize(second.key))).code, "api_key_usage_exceeded");
    assert.equal(creditSubjectOf(second.id, { balanceKeyId: first.id }), `key:${first.id}`);
  });

  it("both deny: api_key_rate_limited (it clears sooner), carrying both answers", async () => {
    const { service, storage, metrics } = setup();
    const { key } = await creditedKey(service, storage, { remaining: 1 }, [
      { name: "burst", limit: 1, windowMs: 60_000 },
    ]);
    await service.authorize(key);
    const error = await denial(service.authorize(key));
    assert.equal(error.code, "api_key_rate_limited");
    assert.equal(error.creditResult?.allowed, false);
    assert.equal(error.rateLimitResults?.[0].allowed, false);
    // The refusing balance named in the HTTP answers too, as on api_key_usage_exceeded.
    assert.deepEqual(error.details, { creditBalance: "key" });
    assert.deepEqual(metrics.map((m) => m.outcome), ["success", "rate_limited"]);
  });

  it("1,000 of 1,000: a credit denial leaves the rate-limit counts unchanged, a rate-limit denial the balance", async () => {
    const { service, storage, limiter } = setup();
    const policy = { name: "day", limit: 2_000, windowMs: 86_400_000 };
    const broke = await creditedKey(service, storage, { remaining: 0 }, [policy]);
    const probe = (id: string) =>
      limiter.check(`key:${id}`, [policy], {
        cost: 0,
        credits: { initial: 0, subject: `key:${id}` },
      });
    for (let trial = 0; trial < 1_000; trial++) {
      assert.equal((await denial(service.authorize(broke.key))).code, "api_key_usage_exceeded");
      assert.equal((await probe(broke.id)).policies[0].remaining, 2_000, `trial ${trial}`);
    }
    const limited = await creditedKey(service, storage, { remaining: 5_000 }, [
      { name: "burst", limit: 1, windowMs: 86_400_000 },
    ]);
    await service.authorize(limited.key);
    for (let trial = 0; trial < 1_000; trial++) {
      const error = await denial(service.authorize(limited.key));
      assert.equal(error.code, "api_key_rate_limited");
      assert.equal(error.creditResult?.remaining, 4_999, `trial ${trial}`);
    }
    assert.equal((await probe(limited.id)).credits?.remaining, 4_999);
  });

  it("store failure: open passes without spending, closed refuses api_key_rate_limit_unavailable", async () => {
    const failing: RateLimitStore = { checkBatch: () => Promise.reject(new Error("down")) };
    for (const onStoreError of ["open", "closed"] as const) {
      const { service, storage } = setup({ store: failing, onStoreError });
      const { key } = await creditedKey(service, storage, { remaining: 1 });
      if (onStoreError === "open") {
        assert.equal((await service.authorize(key)).creditResult, undefined);
      } else {
        assert.equal(
          (await denial(service.authorize(key))).code,
          "api_key_rate_limit_unavailable",
        );
      }
    }
  });

  it("api_key.credits_low once per threshold crossed (a cost crossing two fires both), credits_exhausted at 0; again after a refill", async () => {
    const { service, storage, clocks, events } = setup({ thresholds: [5, 2, 5] });
    const start = clocks.now;
    const { key, id } = await creditedKey(service, storage, {
      remaining: 8,
      updatedAt: new Date(start),
      refill: { amount: 8, interval: "daily" },
    });
    const seen = () =>
      creditEvents(events).map((e) =>
        e.type === "api_key.credits_low" ? `low ${e.threshold} at ${e.remaining}` : "exhausted"
      );
    await service.authorize(key, { cost: 2 }); // 6
    assert.deepEqual(seen(), []);
    await service.authorize(key); // 5
    assert.deepEqual(seen(), ["low 5 at 5"]);
    await service.authorize(key, { cost: 0 });
    await service.authorize(key, { cost: 4 }); // 1
    await denial(service.authorize(key, { cost: 2 }));
    await service.authorize(key); // 0
    assert.deepEqual(seen(), ["low 5 at 5", "low 2 at 1", "exhausted"]);
    const [low] = creditEvents(events);
    assert.deepEqual(low, {
      type: "api_key.credits_low",
      at: new Date(start),
      keyId: id,
      tenantId: "t1",
      creditBalance: "key",
      remaining: 5,
      threshold: 5,
      nextRefillAt: new Date(start + 86_400_000),
    });
    assert.ok(!JSON.stringify(events).includes(key.slice(-20)), "no secret");
    clocks.now = start + 86_400_000;
    await service.authorize(key, { cost: 8 });
    assert.deepEqual(seen().slice(3), ["low 5 at 0", "low 2 at 0", "exhausted"]);
  });

  it("an event's nextRefillAt is the refill boundary itself, with a store answering after the request's time (its resetMs counted from later)", async () => {
    const clocks = new FakeClocks();
    const { service, storage, events } = setup({
      store: createMemoryRateLimitStore({ now: () => clocks.now + 300 }),
      thresholds: [5],
    });
    // setup's own clocks: the store above reads a clock of its own, 300 ms ahead.
    const start = clocks.now;
    const { key } = await creditedKey(service, storage, {
      remaining: 6,
      updatedAt: new Date(start),
      refill: { amount: 8, interval: "daily" },
    });
    await service.authorize(key);
    const [low] = creditEvents(events);
    assert.equal(low?.type, "api_key.credits_low");
    assert.equal(low.nextRefillAt?.toISOString(), new Date(start + 86_400_000).toISOString());
  });

  it("concurrent spends fire each event exactly once", async () => {
    const { service, storage, events } = setup({ thresholds: [30, 10] });
    const { key } = await creditedKey(service, storage, { remaining: 40 });
    const answers = await Promise.allSettled(
      Array.from({ length: 60 }, () => service.authorize(key)),
    );
    assert.equal(answers.filter((a) => a.status === "fulfilled").length, 40);
    assert.deepEqual(
      creditEvents(events).map((e) => e.type === "api_key.credits_low" ? e.threshold : 0).sort(),
      [0, 10, 30],
    );
  });

  it("usage counts a credit refusal as api_key_usage_exceeded and an accepted spend's cost", async () => {
    const clocks = new FakeClocks();
    const storage = new CreditedStorage();
    const service = new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage,
      limiter: createRateLimiter({ logger: () => {} }),
      clock: clocks.clock,
      usage: { flushIntervalMs: HOUR },
    });
    const { key, id } = await creditedKey(service, storage, { remaining: 3 });
    await service.authorize(key, { cost: 3 });
    await denial(service.authorize(key));
    await denial(service.authorize(key));
    await service.close();
    const window = { from: new Date(clocks.now - HOUR), to: new Date(clocks.now + HOUR) };
    const [hour] = await service.usage("t1", { keyId: id, ...window, granularity: "hour" });
    assert.deepEqual([hour.accepted, hour.cost], [1, 3]);
    assert.equal(hour.refused.api_key_usage_exceeded, 2);
    assert.equal(hour.refused.api_key_rate_limited, 0);
  });

  it("creditThresholds: 1–8 safe integers ≥ 1, only with a limiter", () => {
    const limiter = createRateLimiter({ logger: () => {} });
    for (const bad of [5, [0], [1.5], [1, -2], Array.from({ length: 9 }, (_, i) => i + 1)]) {
      assert.throws(() => buildLimits(limiter, undefined, bad, "O."), {
        name: "TypeError",
        message: /O\.creditThresholds/,
      });
    }
    assert.throws(() => buildLimits(undefined, undefined, [5], "O."), {
      message: "O.creditThresholds needs a limiter",
    });
    assert.ok(buildLimits(limiter, undefined, [3, 3, 1], "O.") !== undefined);
  });
});

describe("a tenant's shared credit pool", () => {
  /** Creates a key of tenant `t1` (or `tenantId`) with `credits` through `create`. */
  const createKey = (
    service: ApiKeysService,
    credits: CreateApiKeyInput["credits"],
    extra: Partial<CreateApiKeyInput> = {},
  ) => service.create({ tenantId: "t1", name: "pool", scopes: READ_ORDERS, credits, ...extra });

  it("every key of the tenant spends one balance; a later key joins it (its remaining ignored) and the refusal names the tenant", async () => {
    const { service } = setup();
    const a = await createKey(service, { remaining: 5, sharedBy: "tenant" });
    const b = await createKey(service, { remaining: 999, sharedBy: "tenant" });
    const spent = [];
    for (let i = 0; i < 5; i++) {
      const context = await service.authorize(i % 2 === 0 ? a.key : b.key);
      assert.equal(context.creditBalance, "tenant");
      assert.deepEqual(context.tenantCreditResult, context.creditResult);
      spent.push(context.creditResult?.remaining);
    }
    assert.deepEqual(spent, [4, 3, 2, 1, 0]);
    for (const key of [a.key, b.key]) {
      const error = await denial(service.authorize(key));
      assert.equal(error.code, "api_key_usage_exceeded");
      assert.equal(error.creditBalance, "tenant");
    }
    const other = await createKey(service, { remaining: 2, sharedBy: "tenant" }, {
      tenantId: "t2",
    });
    assert.equal((await service.authorize(other.key)).creditResult?.remaining, 1, "per tenant");
  });

  it("a key with its own balance and the pool spends both or neither; the refusal names the balance that refused", async () => {
    const { service } = setup();
    const both = await createKey(service, { remaining: 3, pool: { remaining: 4 } });
    const pooled = await createKey(service, { remaining: 0, sharedBy: "tenant" });
    await service.authorize(pooled.key, { cost: 3 });
    const context = await service.authorize(both.key);
    assert.equal(context.creditBalance, "key");
    assert.deepEqual(
      [context.creditResult?.remaining, context.tenantCreditResult?.remaining],
      [2, 0],
    );
    const byPool = await denial(service.authorize(both.key));
    assert.deepEqual([byPool.creditBalance, byPool.creditResult?.remaining], ["tenant", 0]);
    await service.updateCredits("t1", null, { set: 10 });
    const byKey = await denial(service.authorize(both.key, { cost: 3 }));
    assert.deepEqual([byKey.creditBalance, byKey.creditResult?.remaining], ["key", 2]);
    const summaries = await service.listSummaries("t1");
    const of = (id: string) => summaries.find((s) => s.id === id)!;
    assert.equal(of(both.id).credits?.remaining, 2, "a refusal spends nothing");
    assert.equal(of(both.id).tenantCredits?.remaining, 10, "nor from the pool");
    assert.equal(of(pooled.id).credits, undefined, "no balance of its own");
    assert.equal(of(pooled.id).tenantCredits?.remaining, 10);
  });

  it("a key with its own balance joining a pool a pool-only key started stores the pool's copy without sharedBy", async () => {
    const { service, storage } = setup();
    await createKey(service, { remaining: 5, sharedBy: "tenant" });
    const both = await createKey(service, { remaining: 3, pool: { remaining: 9 } });
    const stored = await storage.findById(both.id);
    assert.deepEqual(Object.keys(stored?.credits?.pool ?? {}).sort(), ["remaining", "updatedAt"]);
    await service.updateCredits("t1", null, { add: 1 });
    const written = await storage.findById(both.id);
    assert.deepEqual(Object.keys(written?.credits?.pool ?? {}).sort(), ["remaining", "updatedAt"]);
    assert.equal(written?.credits?.pool?.remaining, 6);
  });

  it("keeps one refill rule per tenant: joining with another is refused; the pool refills by its own rule", async () => {
    const { service, clocks } = setup();
    const refill = { amount: 3, interval: "daily" as const };
    const a = await createKey(service, { remaining: 1, refill, sharedBy: "tenant" });
    await assert.rejects(
      createKey(service, { remaining: 1, sharedBy: "tenant", refill: { amount: 4, everyMs: 1 } }),
      { name: "ApiKeyValidationError", field: "credits" },
    );
    await assert.rejects(createKey(service, { remaining: 1, sharedBy: "tenant" }), {
      name: "ApiKeyValidationError",
    });
    await createKey(service, { remaining: 1, sharedBy: "tenant", pool: { remaining: 1 } } as never)
      .then(() => assert.fail("sharedBy with pool"), (e) => assert.ok(e instanceof TypeError));
    await service.authorize(a.key);
    await denial(service.authorize(a.key));
    clocks.now += 86_400_000;
    assert.equal((await service.authorize(a.key)).creditResult?.remaining, 2);
    assert.deepEqual(await service.tenantCredits("t1"), {
      remaining: 2,
      nextRefillAt: new Date(Date.parse("2030-01-03T00:00:00.000Z")),
      refill,
    });
    assert.equal(await service.tenantCredits("t2"), null);
  });

  it("a rule written another way that refills at the same moments is the pool's rule (monthly with day 1 written out; daily as everyMs 86,400,000)", async () => {
    const { service } = setup();
    const monthly = { amount: 3, interval: "monthly" as const };
    await createKey(service, { remaining: 1, refill: monthly, sharedBy: "tenant" });
    await createKey(service, { remaining: 1, refill: { ...monthly, day: 1 }, sharedBy: "tenant" });
    const daily = { amount: 3, interval: "daily" as const };
    await createKey(service, { remaining: 1, refill: daily, sharedBy: "tenant" }, {
      tenantId: "t2",
    });
    await createKey(service, {
      remaining: 1,
      refill: { amount: 3, everyMs: 86_400_000 },
      sharedBy: "tenant",
    }, {
      tenantId: "t2",
    });
    await assert.rejects(
      createKey(service, { remaining: 1, refill: { ...monthly, day: 2 }, sharedBy: "tenant" }),
      { name: "ApiKeyValidationError", field: "credits" },
    );
  });

  it("a policy refusal with the pool's balance to spare names no refusing balance (creditBalance is the refusing one's)", async () => {
    const { service } = setup();
    const { key } = await createKey(service, { remaining: 100, sharedBy: "tenant" }, {
      rateLimits: [{ name: "burst", limit: 1, windowMs: 60_000 }],
    });
    await service.authorize(key);
    const error = await denial(service.authorize(key));
    assert.equal(error.code, "api_key_rate_limited");
    assert.equal(error.creditBalance, undefined);
    assert.equal(error.creditResult?.allowed, true);
    assert.equal(error.rateLimitResults?.[0].allowed, false);
  });

  it("updateCredits(tenantId, null, change) sets the pool and writes it back to every key spending it; a key's own form refuses a pool-only key", async () => {
    const { service, storage } = setup();
    const a = await createKey(service, { remaining: 5, sharedBy: "tenant" });
    const b = await createKey(service, { remaining: 1, pool: { remaining: 5 } });
    const plain = await service.create({ tenantId: "t1", name: "x", scopes: READ_ORDERS });
    assert.equal((await service.updateCredits("t1", null, { add: 7 })).remaining, 12);
    for (const id of [a.id, b.id]) {
      const credits = (await storage.findById(id))!.credits!;
      assert.equal((credits.pool ?? credits).remaining, 12, "written back");
    }
    assert.equal((await storage.findById(b.id))!.credits!.remaining, 1, "its own unchanged");
    assert.equal((await storage.findById(plain.id))!.credits, undefined);
    await assert.rejects(service.updateCredits("t1", a.id, { set: 1 }), {
      name: "ApiKeyValidationError",
    });
    await assert.rejects(service.updateCredits("t2", null, { set: 1 }), {
      name: "ApiKeyValidationError",
    });
    await assert.rejects(service.updateCredits("t1", null, { set: -1 }), TypeError);
    assert.equal((await service.authorize(a.key)).creditResult?.remaining, 11);
  });

  it("events once per threshold for the pool, not once per key, with creditBalance tenant", async () => {
    const { service, events } = setup({ thresholds: [6, 2] });
    const keys = await Promise.all(
      [0, 1, 2].map(() => createKey(service, { remaining: 10, sharedBy: "tenant" })),
    );
    await Promise.allSettled(
      Array.from({ length: 15 }, (_, i) => service.authorize(keys[i % 3].key)),
    );
    const seen = creditEvents(events).map((e) =>
      `${e.type === "api_key.credits_low" ? `low ${e.threshold}` : "exhausted"} ${e.creditBalance}`
    );
    assert.deepEqual(seen.sort(), ["exhausted tenant", "low 2 tenant", "low 6 tenant"]);
  });

  it("a rotated key and a key minted with limitsOf spend the same pool", async () => {
    const { service } = setup();
    const a = await createKey(service, { remaining: 3, sharedBy: "tenant" });
    const rotated = await service.rotate(a.id);
    const minted = await createKey(service, undefined, { limitsOf: a.id });
    await service.authorize(rotated.key);
    await service.authorize(minted.key);
    assert.equal((await service.authorize(a.key)).creditResult?.remaining, 0);
    const error = await denial(service.authorize(minted.key));
    assert.equal(error.creditBalance, "tenant");
  });

  it("listSummaries and tenantCredits read the pool without writing (no changeCredits, no spend)", async () => {
    const { spied: store, calls } = spyCalls(createMemoryRateLimitStore());
    const { service } = setup({ store });
    const a = await createKey(service, { remaining: 3, sharedBy: "tenant" });
    await service.authorize(a.key);
    calls.length = 0;
    const [summary] = await service.listSummaries("t1");
    assert.equal(summary.tenantCredits?.remaining, 2);
    assert.equal((await service.tenantCredits("t1"))?.remaining, 2);
    assert.deepEqual([...new Set(calls)], ["readCredits"]);
  });
});

describe("credit events of a spend (RequestLimits.creditEvents)", () => {
  it("reads the clock once when a balance crosses a threshold or reaches 0, never when none does or the request has its time", () => {
    const limits = new RequestLimits(createRateLimiter({ logger: () => {} }), undefined, [5, 2]);
    let reads = 0;
    const clock = () => new Date(Date.UTC(2030, 0, 1) + 1_000 * ++reads);
    const answer = (remaining: number) => ({ allowed: true, remaining, resetMs: -1 });
    const context = (own: number | undefined, pool?: number): ApiKeyContext => ({
      keyId: "k1",
      tenantId: "t1",
      environment: "live",
      scopes: [],
      prefix: "p1",
      credits: own === undefined
        ? { remaining: 0, updatedAt: new Date(0), sharedBy: "tenant" }
        : pool === undefined
        ? { remaining: 0, updatedAt: new Date(0) }
        : { remaining: 0, updatedAt: new Date(0), pool: { remaining: 0, updatedAt: new Date(0) } },
      ...(own === undefined
        ? { creditResult: answer(pool!), creditBalance: "tenant" as const }
        : { creditResult: answer(own), creditBalance: "key" as const }),
      ...(pool === undefined ? {} : { tenantCreditResult: answer(pool) }),
    });
    const seen = (events: readonly { type: string; creditBalance: string; at: Date }[]) =>
      events.map((e) => `${e.type} ${e.creditBalance} ${e.at.getTime() % 100_000}`);
    assert.deepEqual(limits.creditEvents(context(8), 1, undefined, clock), []);
    assert.deepEqual(limits.creditEvents(context(8, 9), 1, undefined, clock), []);
    assert.deepEqual(limits.creditEvents(context(undefined, 6), 1, undefined, clock), []);
    assert.deepEqual(limits.creditEvents(context(5), 0, undefined, clock), []);
    assert.equal(reads, 0);
    assert.deepEqual(seen(limits.creditEvents(context(5), 1, undefined, clock)), [
      "api_key.credits_low key 1000",
    ]);
    assert.equal(reads, 1);
    // Both balances cross at one read of the clock; a pool alone is the tenant's.
    assert.deepEqual(seen(limits.creditEvents(context(4, 0), 3, undefined, clock)), [
      "api_key.credits_low key 2000",
      "api_key.credits_low tenant 2000",
      "api_key.credits_exhausted tenant 2000",
    ]);
    assert.deepEqual(seen(limits.creditEvents(context(undefined, 2), 1, undefined, clock)), [
      "api_key.credits_low tenant 3000",
    ]);
    assert.equal(reads, 3);
    // The request's own time when it has one: no read.
    const at = Date.UTC(2031, 0, 1);
    assert.deepEqual(
      limits.creditEvents(context(5), 1, at, clock).map((e) => e.at.getTime()),
      [at],
    );
    assert.equal(reads, 3);
  });
});
