/**
 * Credits on keys, the manage side, in memory with a fake clock: credits on
 * create and rotate (a rotated key and its successor spend one balance),
 * `updateCredits` (tenant-bound; racing with spends against the reference
 * model), summaries, and the options. The Redis write-back is in
 * tests/limits/api_key_credits_test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type ApiKeysServiceOptions,
  type ApiKeyStorage,
  ApiKeyValidationError,
  InMemoryApiKeyStorage,
} from "../../../api_keys/mod.ts";
import {
  counterSubjectOf,
  creditCounterOf,
  creditSubjectOf,
} from "../../../api_keys/metering/_limits.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../../rate_limits/memory_store.ts";
import type { CreditBalance, CreditCounter, RateLimitStore } from "../../../rate_limits/store.ts";
import { ReferenceCredits, REFILLS } from "../../rate_limits/_model.ts";
import { CreditBook } from "../../../api_keys/metering/_credits.ts";
import { StorageAccess } from "../../../api_keys/storage/_access.ts";
import { FakeClocks, makeService, overrideStorage, READ_ORDERS, rejection } from "../helpers.ts";

const DAY = 86_400_000;

/** A service over in-memory storage and a memory limiter store on one fake clock (and `options`). */
function creditService(
  storage: ApiKeyStorage = new InMemoryApiKeyStorage(),
  store?: RateLimitStore,
  storageTimeoutMs?: number,
  options: Partial<ApiKeysServiceOptions> = {},
) {
  const clocks = new FakeClocks();
  const limiter = createRateLimiter({
    store: store ?? createMemoryRateLimitStore({ now: () => clocks.now }),
    logger: () => {},
  });
  const made = makeService({
    storage,
    limiter,
    clock: clocks.clock,
    monotonicClock: clocks.monotonicClock,
    storageTimeoutMs,
    ...options,
  });
  /** Spends `cost` of key `id`'s balance as a request would (its stored credits as the counter). */
  const spend = async (id: string, cost = 1) => {
    const record = (await storage.findById(id))!;
    const credits = record.credits!;
    return (await limiter.check("unused", [], {
      cost,
      credits: {
        ...creditCounterOf(credits, record.tenantId),
        subject: creditSubjectOf(id, credits),
      },
    })).credits!;
  };
  return { ...made, clocks, limiter, spend };
}

/**
 * Services over one in-memory storage, the service's clock and the store's
 * (`store.now`) both at `startMs`: `open()` makes one with a new memory store,
 * a process started afresh (its balances lost).
 */
function restartable(startMs: number) {
  const clocks = new FakeClocks();
  clocks.now = startMs;
  const store = { now: startMs };
  const storage = new InMemoryApiKeyStorage();
  const open = () =>
    makeService({
      storage,
      limiter: createRateLimiter({
        store: createMemoryRateLimitStore({ now: () => store.now }),
        logger: () => {},
      }),
      clock: clocks.clock,
      monotonicClock: clocks.monotonicClock,
    }).service;
  return { clocks, store, storage, open };
}

/**
 * Holds `storage`'s `method` once called (`when` its arguments say so):
 * `reached` resolves when it is, and it runs on `release()`. Wrapped before
 * the service is made for `setCredits` (the service takes it then).
 */
function holdAt(
  storage: InMemoryApiKeyStorage,
  method: "insert" | "rotate" | "setCredits",
  when: (...args: unknown[]) => boolean = () => true,
) {
  let release = () => {};
  let reach = () => {};
  const held = new Promise<void>((resolve) => release = resolve);
  const reached = new Promise<void>((resolve) => reach = resolve);
  const inner = storage[method].bind(storage) as (...args: unknown[]) => Promise<unknown>;
  Object.assign(storage, {
    [method]: async (...args: unknown[]) => {
      if (when(...args)) {
        reach();
        await held;
      }
      return await inner(...args);
    },
  });
  return { reached, release };
}

/** A storage with credits but without the tenant-bound capability (read, then act). */
function untenanted(inner: InMemoryApiKeyStorage): ApiKeyStorage {
  return Object.assign(overrideStorage(inner, {}), {
    storesCredits: true,
    setCredits: inner.setCredits.bind(inner),
  });
}

describe("creditCounterOf", () => {
  it("starts a balance the store lacks from the stored one, as of its updatedAt", () => {
    const updatedAt = new Date("2030-01-01T00:00:00.000Z");
    assert.deepEqual(creditCounterOf({ remaining: 4, updatedAt, balanceKeyId: "k0" }, "t1"), {
      initial: 4,
      initialAt: updatedAt.getTime(),
      slot: "tenant:t1", // the tenant's Redis Cluster slot
    });
    const refill = { amount: 9, everyMs: 60_000 };
    assert.deepEqual(creditCounterOf({ remaining: 0, refill, updatedAt }, "t1").refill, refill);
  });
});

describe("credits on create and rotate", () => {
  it("create stores validated credits with updatedAt now; refuses bad ones naming the field, or without the capability or a limiter", async () => {
    const { service, storage, clocks } = creditService();
    const refill = { amount: 100, interval: "monthly" as const, day: 31 };
    const { id } = await service.create({
      tenantId: "t1",
      name: "plan",
      scopes: READ_ORDERS,
      credits: { remaining: 100, refill },
    });
    assert.deepEqual((await storage.findById(id))!.credits, {
      remaining: 100,
      refill,
      updatedAt: new Date(clocks.now),
    });
    const input = { tenantId: "t1", name: "bad", scopes: READ_ORDERS };
    for (
      const [credits, field] of [
        [{ remaining: -1 }, /credits\.remaining/],
        [{ remaining: 1, refill: { amount: 0, everyMs: 1 } }, /credits\.refill\.amount/],
        [
          { remaining: 1, refill: { amount: 1, interval: "daily", day: 3 } },
          /credits\.refill\.day/,
        ],
        ["lots", /credits must be an object/],
        // Misspelt fields, silently dropped before: no refill, no pool, no sharing.
        [{ remaining: 1, refil: { amount: 1, everyMs: 1 } }, /credits: unknown field `refil`/],
        [{ remaining: 1, sharedby: "tenant" }, /credits: unknown field `sharedby`/],
        [
          { remaining: 1, pool: { remaining: 5, refil: { amount: 5, everyMs: 1 } } },
          /credits\.pool: unknown field `refil`/,
        ],
        [
          { remaining: 1, refill: { amount: 1, interval: "monthly", dayOfMonth: 15 } },
          /credits\.refill: unknown field `dayOfMonth` \(known: amount, everyMs, interval, day\)/,
        ],
      ] as const
    ) {
      await assert.rejects(service.create({ ...input, credits: credits as never }), field);
    }
    const noCapability = makeService({
      storage: overrideStorage(new InMemoryApiKeyStorage(), {}),
      limiter: createRateLimiter({ logger: () => {} }),
    }).service;
    await assert.rejects(
      noCapability.create({ ...input, credits: { remaining: 1 } }),
      /TypeError: credits need a storage with the storesCredits capability/,
    );
    await assert.rejects(
      makeService().service.create({ ...input, credits: { remaining: 1 } }),
      /TypeError: credits need the service's limiter/,
    );
    assert.equal((await storage.listByTenant("t1")).length, 1);
  });

  for (
    const [label, rotate] of [
      [
        "rotate",
        (s: ReturnType<typeof creditService>["service"], id: string, input = {}) =>
          s.rotate(id, input),
      ],
      [
        "rotateForTenant",
        (s: ReturnType<typeof creditService>["service"], id: string, input = {}) =>
          s.rotateForTenant("t1", id, input),
      ],
    ] as const
  ) {
    for (const tenantBound of [true, false]) {
      it(`${label}${tenantBound ? "" : " without the tenant-bound capability"}: the new key keeps the balance, both spend it during the grace; with credits it gets its own`, async () => {
        const inner = new InMemoryApiKeyStorage();
        const { service, spend, clocks } = creditService(tenantBound ? inner : untenanted(inner));
        const refill = { amount: 50, everyMs: DAY };
        const { id: first } = await service.create({
          tenantId: "t1",
          name: "plan",
          scopes: READ_ORDERS,
          credits: { remaining: 10, refill },
        });
        for (let i = 0; i < 3; i++) assert.equal((await spend(first)).allowed, true);
        clocks.advance(1_000);
        const { id: second } = await rotate(service, first, { gracePeriodMs: 60_000 });
        assert.deepEqual((await inner.findById(second))!.credits, {
          remaining: 7,
          refill,
          updatedAt: new Date(clocks.now),
          balanceKeyId: first,
        });
        assert.equal((await spend(second, 2)).remaining, 5);
        assert.equal((await spend(first, 5)).remaining, 0);
        assert.equal((await spend(second)).allowed, false);
        const { id: third } = await rotate(service, second);
        assert.equal((await inner.findById(third))!.credits!.balanceKeyId, first);
        assert.equal((await inner.findById(third))!.credits!.remaining, 0);
        const { id: own } = await rotate(service, third, { credits: { remaining: 4 } });
        assert.deepEqual((await inner.findById(own))!.credits, {
          remaining: 4,
          updatedAt: new Date(clocks.now),
        });
        assert.equal((await spend(own)).remaining, 3);
        assert.equal((await spend(third)).allowed, false);
      });
    }
  }

  it("a key without credits rotates to a key without credits", async () => {
    const { service, storage } = creditService();
    const { id } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const rotated = await service.rotate(id);
    assert.equal((await storage.findById(rotated.id))!.credits, undefined);
  });
});

describe("a service without a limiter", () => {
  it("refuses a key stored with credits or rate limits (api_key_rate_limit_unavailable, one warning line), never serving it unmetered; serves other keys", async () => {
    const storage = new InMemoryApiKeyStorage();
    const metered = makeService({ storage, limiter: createRateLimiter({ logger: () => {} }) })
      .service;
    const credited = await metered.create({
      tenantId: "t1",
      name: "credited",
      scopes: READ_ORDERS,
      credits: { remaining: 1 },
    });
    const limited = await metered.create({
      tenantId: "t1",
      name: "limited",
      scopes: READ_ORDERS,
      rateLimits: [{ name: "day", limit: 1, windowMs: 86_400_000 }],
    });
    const plain = await metered.create({ tenantId: "t1", name: "plain", scopes: READ_ORDERS });
    const lines: string[] = [];
    const warn = console.warn;
    console.warn = (line: string) => lines.push(line);
    try {
      const failures: unknown[] = [];
      const worker = makeService({ storage, onAuthFailed: (e: unknown) => failures.push(e) })
        .service; // built without a limiter
      for (const { key } of [credited, limited, credited]) {
        const error = await rejection(worker.authorize(key, { cost: 1 }));
        assert.equal(error.code, "api_key_rate_limit_unavailable");
      }
      assert.equal((await worker.authorize(plain.key)).keyId, plain.id);
      assert.equal(
        (await worker.verify(credited.key)).keyId,
        credited.id,
        "verify alone checks no limit",
      );
      assert.deepEqual(failures, [], "not an authentication failure");
      assert.equal(lines.length, 1, lines.join("\n"));
      assert.match(lines[0], /no limiter/);
      assert.ok(!lines[0].includes(credited.key) && !lines[0].includes(credited.id));
    } finally {
      console.warn = warn;
    }
    assert.equal((await metered.authorize(credited.key)).creditResult?.remaining, 0, "none spent");
  });
});

describe("ApiKeysService.updateCredits", () => {
  for (const tenantBound of [true, false]) {
    it(`is tenant-bound${tenantBound ? "" : " without the tenant-bound capability"}: another tenant's key is the unknown id's error and changes nothing`, async () => {
      const inner = new InMemoryApiKeyStorage();
      const { service, spend } = creditService(tenantBound ? inner : untenanted(inner));
      const { id } = await service.create({
        tenantId: "t1",
        name: "k",
        scopes: READ_ORDERS,
        credits: { remaining: 5 },
      });
      const foreign = await rejection(service.updateCredits("t2", id, { set: 100 }));
      const unknown = await rejection(service.updateCredits("t2", "no-such-key", { set: 100 }));
      assert.equal(foreign.code, "api_key_record_not_found");
      assert.deepEqual(
        [foreign.name, foreign.message, foreign.code],
        [unknown.name, unknown.message, unknown.code],
      );
      assert.equal((await spend(id, 0)).remaining, 5);
      assert.equal((await inner.findById(id))!.credits!.remaining, 5);
    });
  }

  it("refuses a key without credits (ApiKeyValidationError on credits), a bad change and a service without a limiter", async () => {
    const { service } = creditService();
    const { id } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const error = await rejection(service.updateCredits("t1", id, { add: 1 }));
    assert.ok(error instanceof ApiKeyValidationError);
    assert.equal(error.field, "credits");
    for (const bad of [{}, { set: -1 }, { set: 1, add: 1 }, { add: 1.5 }, null]) {
      await assert.rejects(service.updateCredits("t1", id, bad as never), TypeError);
    }
    // Misspelt fields, silently dropped before: the refill rule kept, the balance set alone.
    for (
      const [bad, message] of [
        [{ set: 5, refil: { amount: 5, everyMs: 1 } }, /unknown field `refil`/],
        [
          { set: 5, refill: { amount: 5, interval: "daily", every: 1 } },
          /refill: unknown field `every`/,
        ],
      ] as const
    ) {
      await assert.rejects(
        service.updateCredits("t1", id, bad as never),
        (error: Error) => error instanceof TypeError && message.test(error.message),
      );
    }
    await assert.rejects(
      makeService().service.updateCredits("t1", id, { add: 1 }),
      /TypeError: updateCredits needs the service's limiter/,
    );
  });

  it("sets and adds, writes the balance back to every record spending it, answers the next refill", async () => {
    const { service, storage, clocks, spend } = creditService();
    const { id: first } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      credits: { remaining: 5, refill: { amount: 5, interval: "daily" } },
    });
    const { id: second } = await service.rotate(first);
    const { id: own } = await service.rotate(second, { credits: { remaining: 9 } });
    clocks.advance(3_600_000);
    assert.deepEqual(await service.updateCredits("t1", second, { add: 3 }), {
      remaining: 8,
      nextRefillAt: new Date(Date.parse("2030-01-02T00:00:00.000Z")),
    });
    assert.equal((await spend(first)).remaining, 7);
    assert.deepEqual(await service.updateCredits("t1", first, { set: 2 }), {
      remaining: 2,
      nextRefillAt: new Date(Date.parse("2030-01-02T00:00:00.000Z")),
    });
    for (const id of [first, second]) {
      assert.deepEqual(
        [
          (await storage.findById(id))!.credits!.remaining,
          +(await storage.findById(id))!.credits!
            .updatedAt,
        ],
        [2, clocks.now],
      );
    }
    assert.equal((await storage.findById(own))!.credits!.remaining, 9);
    assert.deepEqual(await service.updateCredits("t1", own, { add: -20 }), {
      remaining: 0,
      nextRefillAt: null,
    });
  });

  it("a change the store applied across a refill boundary from the service's clock restarts from the store's view: the change after the refill, the refill after the change (own balance, pool)", async () => {
    const boundary = Date.parse("2030-02-01T00:00:00.000Z");
    const plan = { remaining: 100, refill: { amount: 1_000, interval: "monthly" as const } };
    // [service clock, store clock] at the change, the next refill it answers, the balance after a restart.
    const cases = [
      [boundary - 3, boundary + 2, "2030-03-01", 4], // applied after the refill: 5 stays
      [boundary + 3, boundary - 2, "2030-02-01", 999], // applied before it: the refill comes
    ] as const;
    for (const pooled of [false, true]) {
      for (const [serviceAt, storeAt, next, after] of cases) {
        const { clocks, store, open } = restartable(boundary - 500);
        const service = open();
        const { id, key } = await service.create({
          tenantId: "t1",
          name: "k",
          scopes: READ_ORDERS,
          credits: pooled ? { ...plan, sharedBy: "tenant" } : plan,
        });
        clocks.now = serviceAt;
        store.now = storeAt;
        assert.deepEqual(await service.updateCredits("t1", pooled ? null : id, { set: 5 }), {
          remaining: 5,
          nextRefillAt: new Date(`${next}T00:00:00.000Z`),
        });
        clocks.now = store.now = boundary + 600;
        // The balance is lost (the process restarts): it reloads from the record.
        const context = await open().authorize(key);
        assert.equal(context.creditResult?.remaining, after, `pooled: ${pooled}, ${next}`);
      }
    }
  });

  it("a rotation reading the balances across a refill boundary from the service's clock keeps the store's view in the new record (own balance, pool)", async () => {
    const boundary = Date.parse("2030-02-01T00:00:00.000Z");
    const plan = { remaining: 3, refill: { amount: 1_000, interval: "monthly" as const } };
    const { clocks, store, open } = restartable(boundary - 500);
    const service = open();
    const { id } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      credits: { ...plan, pool: plan },
    });
    // The store reads 3 and 3 just before midnight; the service's clock is 5 ms ahead.
    clocks.now = boundary + 3;
    store.now = boundary - 2;
    const { key } = await service.rotate(id);
    clocks.now = store.now = boundary + 600;
    // The balances are lost (the process restarts): they reload from the new record, refilled.
    const context = await open().authorize(key);
    assert.deepEqual(
      [context.creditResult?.remaining, context.tenantCreditResult?.remaining],
      [999, 999],
    );
  });

  it("changes racing with spends agree with the reference model (refills across days and month ends)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: REFILLS.length - 1 }),
        fc.array(
          fc.record({
            advanceMs: fc.oneof(
              fc.constant(0),
              fc.integer({ min: 1, max: 3 * DAY }),
              fc.integer({ min: 1, max: 40 * DAY }),
            ),
            costs: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 8 }),
            adds: fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 3 }),
            then: fc.option(
              fc.oneof(
                fc.record({ set: fc.integer({ min: 0, max: 20 }) }),
                fc.record({ add: fc.integer({ min: -10, max: 10 }) }),
              ),
              { nil: undefined },
            ),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        async (refillIndex, steps) => {
          const { service, storage, clocks, spend } = creditService();
          const refill = REFILLS[refillIndex];
          const { id } = await service.create({
            tenantId: "t1",
            name: "k",
            scopes: READ_ORDERS,
            credits: { remaining: 10, ...(refill === undefined ? {} : { refill }) },
          });
          const model = new ReferenceCredits();
          const counter: CreditCounter = {
            kind: "credit",
            subject: "k",
            name: "credits",
            cost: 0,
            initial: 10,
            initialAt: clocks.now,
            ...(refill === undefined ? {} : { refill }),
          };
          for (const step of steps) {
            clocks.advance(step.advanceMs);
            const { state } = model.settle(counter, clocks.now);
            const before = state.credits;
            const [spends, changes] = await Promise.all([
              Promise.all(step.costs.map((cost) => spend(id, cost))),
              Promise.all(step.adds.map((add) => service.updateCredits("t1", id, { add }))),
            ]);
            const spent = step.costs.filter((_, i) => spends[i].allowed)
              .reduce((a, b) => a + b, 0);
            const added = step.adds.reduce((a, b) => a + b, 0);
            assert.ok(spends.every((r) => r.remaining >= 0));
            assert.ok(changes.every((r) => r.remaining >= 0));
            state.credits = before + added - spent;
            assert.equal((await spend(id, 0)).remaining, state.credits);
            if (step.then === undefined) continue;
            const expected = model.change(counter, step.then, clocks.now);
            const answer = await service.updateCredits("t1", id, step.then);
            assert.deepEqual(answer, {
              remaining: expected.remaining,
              nextRefillAt: expected.resetMs < 0 ? null : new Date(clocks.now + expected.resetMs),
            });
            assert.equal((await storage.findById(id))!.credits!.remaining, expected.remaining);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("a credit change landing while a key joining the balance is stored", () => {
  const start = Date.parse("2030-01-10T08:00:00.000Z");

  /** Moves the service's clock and the store's 1 s on. */
  const later = ({ clocks, store }: ReturnType<typeof restartable>) => {
    clocks.advance(1_000);
    store.now = clocks.now;
  };

  /**
   * A service of `made` (`open`), and `race`: `join` held at `method` (its
   * balance read) while `topUp` lands: done before the key is stored, or
   * (`late`) its write-back reading the tenant's keys then, its write to key
   * `firstId` held until the key joined. Answers the top-up and the joined key.
   */
  function joinRace(
    made: ReturnType<typeof restartable>,
    method: "insert" | "rotate",
    late: boolean,
  ) {
    const held = { id: "" }; // the record whose write is held, once known
    const write = holdAt(made.storage, "setCredits", (recordId) => recordId === held.id);
    const race = async (
      firstId: string,
      join: () => Promise<{ id: string; key: string }>,
      topUp: () => Promise<{ remaining: number }>,
    ) => {
      const stored = holdAt(made.storage, method);
      const joining = join();
      await stored.reached;
      later(made);
      if (late) held.id = firstId;
      const toppedUp = topUp();
      await (late ? write.reached : toppedUp);
      stored.release();
      const joined = await joining;
      write.release();
      return { balance: await toppedUp, joined };
    };
    return { service: made.open(), race };
  }

  /** Landing before the key is stored, or (`late`) written after it joined. */
  const cases = [
    ["rotate", false],
    ["limitsOf", false],
    ["rotate", true],
  ] as const;
  for (const [how, late] of cases) {
    it(
      late
        ? "a top-up whose write-back read the tenant's keys before a rotation stored its successor, its write landing after the successor joined: the top-up reads them again and writes the successor"
        : `a top-up of the key's balance landing between the ${how} key's balance read and its insert reaches its record: a store reloading from it keeps the top-up`,
      async () => {
        const made = restartable(start);
        const { storage, open } = made;
        const { service, race } = joinRace(made, how === "rotate" ? "rotate" : "insert", late);
        const { id, key } = await service.create({
          tenantId: "t1",
          name: "k",
          scopes: READ_ORDERS,
          credits: { remaining: 1_000 },
        });
        await service.authorize(key, { cost: 10 }); // the store holds 990
        const { balance, joined } = await race(
          id,
          () =>
            how === "rotate"
              ? service.rotate(id)
              : service.create({ tenantId: "t1", name: "m", scopes: READ_ORDERS, limitsOf: id }),
          () => service.updateCredits("t1", id, { add: 500 }),
        ); // its copy of the balance read: 990
        assert.equal(balance.remaining, 1_490);
        assert.equal((await storage.findById(joined.id))!.credits!.remaining, 1_490);
        // The balance is lost (the process restarts): it reloads from the joined key, spending first.
        later(made);
        assert.equal((await open().authorize(joined.key)).creditResult?.remaining, 1_489);
      },
    );
  }

  for (const late of [false, true]) {
    it(
      late
        ? "a pool top-up written key by key (no setTenantPool) whose read of the tenant's keys missed a joining key, its write landing after the key joined: the top-up reads them again and writes the joined key"
        : "a top-up of the tenant's pool landing between a joining key's pool read and its insert reaches its record: a store reloading from it keeps the top-up",
      async () => {
        const made = restartable(start);
        const { storage, open } = made;
        if (late) Object.assign(storage, { setTenantPool: undefined });
        const { service, race } = joinRace(made, "insert", late);
        const { id } = await service.create({
          tenantId: "t1",
          name: "first",
          scopes: READ_ORDERS,
          credits: { remaining: 100, sharedBy: "tenant" },
        });
        const { balance, joined } = await race(
          id,
          () =>
            service.create({
              tenantId: "t1",
              name: "joiner",
              scopes: READ_ORDERS,
              credits: { remaining: 5, pool: { remaining: 100 } },
            }),
          () => service.updateCredits("t1", null, { add: 10_000 }),
        ); // its copy of the pool read: 100
        assert.equal(balance.remaining, 10_100);
        const credits = (await storage.findById(joined.id))!.credits!;
        assert.deepEqual([credits.remaining, credits.pool?.remaining], [5, 10_100]);
        later(made);
        const context = await open().authorize(joined.key);
        assert.deepEqual(
          [context.creditResult?.remaining, context.tenantCreditResult?.remaining],
          [4, 10_099],
        );
      },
    );
  }
});

describe("a stored pool rule with a field of another version", () => {
  it("is read past, as a key's: tenantCredits shows the rule without it, a key joining with the rule is accepted (another still refused), the audit's rule before is without it", async () => {
    const storage = new InMemoryApiKeyStorage();
    const info = console.info;
    console.info = () => {}; // the audit log's start-up line
    let made!: ReturnType<typeof creditService>;
    try {
      made = creditService(storage, undefined, undefined, {
        audit: { checkpointKey: "an-audit-key-of-at-least-thirty-two-bytes" },
      });
    } finally {
      console.info = info;
    }
    const { service } = made;
    const hourly = { amount: 50, everyMs: 3_600_000 };
    const credits = { remaining: 5, pool: { remaining: 50, refill: hourly } };
    const { id } = await service.create({
      tenantId: "t1",
      name: "old",
      scopes: READ_ORDERS,
      credits,
    });
    // Written by another version: its rules carry a field this one does not know.
    const stored = (await storage.findById(id))!.credits!;
    const cap = { ...hourly, cap: 9 } as typeof hourly;
    await storage.setCredits(id, {
      ...stored,
      refill: cap,
      pool: { ...stored.pool!, refill: cap },
    });
    assert.deepEqual((await service.tenantCredits("t1"))?.refill, hourly);
    const { id: joined } = await service.create({
      tenantId: "t1",
      name: "new",
      scopes: READ_ORDERS,
      credits,
    });
    // It copies the pool as stored: the other version's field kept for it, as the old key's.
    assert.deepEqual((await storage.findById(joined))!.credits!.pool!.refill, cap);
    const other = { ...credits, pool: { remaining: 50, refill: { amount: 50, everyMs: DAY } } };
    const refused = await rejection(
      service.create({ tenantId: "t1", name: "other", scopes: READ_ORDERS, credits: other }),
    );
    assert.ok(refused instanceof ApiKeyValidationError);
    assert.match(String(refused.message), /must keep the refill rule/);
    for (const target of [null, id]) {
      await service.updateCredits("t1", target, { refill: null }, { actor: `a-${target}` });
      const [entry] = (await service.auditLog("t1", { actor: `a-${target}` })).records;
      assert.deepEqual(entry.changes.refill, { before: hourly, after: null });
    }
    await service.close();
  });
});

describe("listSummaries with credits", () => {
  it("shows the balance read from the store and the next refill; no balanceKeyId; absent without credits or a limiter", async () => {
    const { service, spend, storage, clocks } = creditService();
    const refill = { amount: 30, interval: "monthly" as const, day: 31 };
    const { id: first } = await service.create({
      tenantId: "t1",
      name: "plan",
      scopes: READ_ORDERS,
      credits: { remaining: 30, refill },
    });
    const { id: plain } = await service.create({ tenantId: "t1", name: "p", scopes: READ_ORDERS });
    const { id: second } = await service.rotate(first);
    await spend(second, 4);
    clocks.advance(40 * DAY); // 2030-02-10: the refill of Jan 31 is behind, Feb 28's next
    await spend(second, 1);
    const byId = new Map((await service.listSummaries("t1")).map((s) => [s.id, s]));
    const expected = {
      remaining: 29,
      nextRefillAt: new Date(Date.parse("2030-02-28T00:00:00.000Z")),
      refill,
    };
    assert.deepEqual(byId.get(first)!.credits, expected);
    assert.deepEqual(byId.get(second)!.credits, expected);
    assert.equal(byId.get(plain)!.credits, undefined);
    assert.equal(JSON.stringify([...byId.values()]).includes("balanceKeyId"), false);
    const noLimiter = makeService({ storage }).service;
    for (const summary of await noLimiter.listSummaries("t1")) {
      assert.equal(summary.credits, undefined);
    }
  });

  it("shows the refill boundary itself when the store's clock reads later than the service's (a round trip away): own balance and pool", async () => {
    const { clocks, store, open } = restartable(Date.parse("2030-01-10T12:00:00.000Z"));
    const service = open();
    await service.create({
      tenantId: "t1",
      name: "plan",
      scopes: READ_ORDERS,
      credits: {
        remaining: 5,
        refill: { amount: 5, interval: "daily" },
        pool: { remaining: 50, refill: { amount: 50, interval: "monthly", day: 31 } },
      },
    });
    store.now = clocks.now + 300; // the read lands 300 ms after the service read its clock
    const [summary] = await service.listSummaries("t1");
    assert.deepEqual(
      summary.credits?.nextRefillAt,
      new Date(Date.parse("2030-01-11T00:00:00.000Z")),
    );
    assert.deepEqual(
      summary.tenantCredits?.nextRefillAt,
      new Date(Date.parse("2030-01-31T00:00:00.000Z")),
    );
  });

  it("answers the last written-back balance, refills due applied, when the store fails", async () => {
    const failing: RateLimitStore = {
      name: "failing",
      checkBatch: () => Promise.reject(new Error("down")),
      changeCredits: () => Promise.reject(new Error("down")),
      readCredits: () => Promise.reject(new Error("down")),
    };
    const { service, clocks } = creditService(new InMemoryApiKeyStorage(), failing);
    await service.create({
      tenantId: "t1",
      name: "plan",
      scopes: READ_ORDERS,
      credits: { remaining: 3, refill: { amount: 12, interval: "daily" } },
    });
    assert.deepEqual((await service.listSummaries("t1"))[0].credits!.remaining, 3);
    clocks.advance(DAY);
    assert.deepEqual((await service.listSummaries("t1"))[0].credits, {
      remaining: 12,
      nextRefillAt: new Date(Date.parse("2030-01-03T00:00:00.000Z")),
      refill: { amount: 12, interval: "daily" },
    });
  });
});

describe("reads write nothing (issue 42)", () => {
  it("listSummaries and rotate read balances with readCredits only, one call for many keys", async () => {
    const memory = createMemoryRateLimitStore();
    const calls: string[] = [];
    const spy: RateLimitStore = {
      name: "spy",
      checkBatch: (checks) => (calls.push("checkBatch"), memory.checkBatch(checks)),
      changeCredits: (counter, change, deadline) => (
        calls.push("changeCredits"), memory.changeCredits(counter, change, deadline)
      ),
      readCredits: (
        counters,
      ) => (calls.push(`readCredits ${counters.length}`), memory.readCredits(counters)),
    };
    const { service } = creditService(new InMemoryApiKeyStorage(), spy);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await service.create({
          tenantId: "t1",
          name: `plan ${i}`,
          scopes: READ_ORDERS,
          credits: { remaining: 5 },
        })).id,
      );
    }
    calls.length = 0;
    const summaries = await service.listSummaries("t1");
    assert.deepEqual(summaries.map((s) => s.credits?.remaining), [5, 5, 5]);
    await service.rotate(ids[0]);
    assert.deepEqual(calls, ["readCredits 3", "readCredits 1"]);
  });
});

describe("a credit store that hangs", () => {
  it("is given up after the limiter's timeoutMs: summaries show the stored balance, updateCredits rejects", async () => {
    const memory = createMemoryRateLimitStore();
    const hanging: RateLimitStore = {
      name: "hanging",
      checkBatch: (checks) => memory.checkBatch(checks),
      changeCredits: () => new Promise(() => {}),
      readCredits: () => new Promise(() => {}),
    };
    const { service } = creditService(new InMemoryApiKeyStorage(), hanging, 50);
    const { id } = await service.create({
      tenantId: "t1",
      name: "plan",
      scopes: READ_ORDERS,
      credits: { remaining: 3 },
    });
    const hung = (ms: number) => new Promise((resolve) => setTimeout(() => resolve("hung"), ms));
    const listed = await Promise.race([service.listSummaries("t1"), hung(2_000)]);
    assert.notEqual(listed, "hung");
    assert.equal((listed as { credits?: { remaining: number } }[])[0].credits!.remaining, 3);
    const updated = await Promise.race([
      service.updateCredits("t1", id, { add: 1 }).then(() => "resolved", (e: Error) => e.message),
      hung(2_000),
    ]);
    assert.match(String(updated), /did not answer changeCredits within/);
  });
});

describe("the credit write-back", () => {
  it("drains through the limiter's door: a drain answered late is given up after timeoutMs and its balances are written back by the next pass", async () => {
    const storage = new InMemoryApiKeyStorage();
    const queue: DrainQueue = { balances: [] };
    const draining = drainingStore(queue, createMemoryRateLimitStore());
    const limiter = createRateLimiter({ store: draining, timeoutMs: 100, logger: () => {} });
    const { service } = makeService({ storage, limiter, persistIntervalMs: 3_600_000 });
    const { id } = await service.create({
      tenantId: "t1",
      name: "plan",
      scopes: READ_ORDERS,
      credits: { remaining: 9 },
    });
    const credits = (await storage.findById(id))!.credits!;
    const at = Date.now() + 1_000;
    queue.balances = [{ subject: creditSubjectOf(id, credits), name: "credits", remaining: 4, at }];
    queue.delayMs = 1_000;
    const started = performance.now();
    await assert.rejects(service.close(), /did not answer drainCreditChanges within 100 ms/);
    assert.ok(performance.now() - started < 900, "the drain was given up at the deadline");
    assert.equal((await storage.findById(id))!.credits!.remaining, 9);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    queue.delayMs = 0;
    await service.close();
    assert.deepEqual(
      [
        (await storage.findById(id))!.credits!.remaining,
        +(await storage.findById(id))!.credits!.updatedAt,
      ],
      [4, at],
    );
  });
  it("a drain answered late keeps a hashed (long) tenant id's subject known until it is answered: passes succeeding meanwhile forget nothing, its pool is written back", async () => {
    const storage = new InMemoryApiKeyStorage();
    const queue: DrainQueue = { balances: [] };
    const draining = drainingStore(queue, createMemoryRateLimitStore());
    const limiter = createRateLimiter({ store: draining, timeoutMs: 100, logger: () => {} });
    const { service } = makeService({ storage, limiter, persistIntervalMs: 3_600_000 });
    const tenantId = "t".repeat(250);
    const { id, key } = await service.create({
      tenantId,
      name: "plan",
      scopes: READ_ORDERS,
      credits: { remaining: 9, sharedBy: "tenant" },
    });
    assert.equal((await service.authorize(key)).creditResult?.remaining, 8);
    const subject = counterSubjectOf("tenant", tenantId);
    assert.match(subject, /^tenant#/);
    const at = Date.now() + 1_000;
    Object.assign(queue, {
      balances: [{ subject, name: "credits", remaining: 8, at }],
      delayMs: 1_000,
    });
    await assert.rejects(service.close(), /did not answer drainCreditChanges within 100 ms/);
    queue.delayMs = 0;
    await service.close(); // a pass succeeding while the late drain is pending
    await service.close();
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the late drain answers
    await service.close(); // writes what it drained
    const { credits } = (await storage.findById(id))!;
    assert.deepEqual([credits!.remaining, +credits!.updatedAt], [8, at]);
  });
  it("reads each tenant once per pass, not each balance (7 balances of 2 tenants: 2 reads, and 1 for a key no longer stored: its balance dropped with one warning line)", async () => {
    const { storage, service, drained, ids, at } = await drainedKeys({ t1: 5, t2: 2 });
    const written = [...drained];
    drained.push({ subject: "key:gone", name: "credits", remaining: 3, at });
    const find = storage.findById.bind(storage);
    let finds = 0;
    storage.findById = (id) => (finds++, find(id));
    const warned: string[] = [];
    const warn = console.warn;
    console.warn = (line: string) => warned.push(line);
    try {
      await service.close();
    } finally {
      console.warn = warn;
      storage.findById = find;
    }
    assert.equal(finds, 3, "one read per tenant, and one for the key no longer stored");
    for (const [i, id] of [...ids.t1, ...ids.t2].entries()) {
      const { credits } = (await storage.findById(id))!;
      assert.deepEqual([credits!.remaining, +credits!.updatedAt], [written[i].remaining, at]);
    }
    assert.deepEqual(warned, [
      "api-keys: credits write-back: 1 drained balance(s) of keys no longer stored were not written back",
    ]);
  });
  it("a throwing console.warn on a balance of a key no longer stored fails no pass (the timer's passes would stop)", async () => {
    const { storage, service, drained, ids, at } = await drainedKeys({ t1: 2 });
    const written = [...drained];
    drained.push({ subject: "key:gone", name: "credits", remaining: 3, at });
    const warn = console.warn;
    console.warn = () => {
      throw new Error("the console is closed");
    };
    try {
      await service.close(); // resolves: the pass wrote every balance it could
    } finally {
      console.warn = warn;
    }
    for (const [i, id] of ids.t1.entries()) {
      const { credits } = (await storage.findById(id))!;
      assert.deepEqual([credits!.remaining, +credits!.updatedAt], [written[i].remaining, at]);
    }
  });
  it("a tenant whose write fails keeps its balances for the next pass; another tenant's are written in the same pass", async () => {
    const { storage, service, ids, fail } = await drainedKeys({ t1: 3, t2: 1 });
    fail.add("t1");
    const remaining = async (id: string) => (await storage.findById(id))!.credits!.remaining;
    const warn = console.warn;
    console.warn = () => {};
    try {
      await assert.rejects(service.close(), /API key storage is unavailable/);
    } finally {
      console.warn = warn;
    }
    assert.deepEqual(
      [...await Promise.all(ids.t1.map(remaining)), await remaining(ids.t2[0])],
      [9, 9, 9, 0],
    );
    fail.clear();
    await service.close();
    assert.deepEqual(await Promise.all(ids.t1.map(remaining)), [0, 1, 2]);
  });
});

/** What a `drainingStore`'s next drain answers, after `delayMs` (default at once). */
interface DrainQueue {
  balances: CreditBalance[];
  delayMs?: number;
}

/**
 * A store draining (`drainCreditChanges`) `queue.balances`, then none till
 * given others; its credits are `memory`'s (without: it answers no check).
 */
function drainingStore(
  queue: DrainQueue,
  memory?: RateLimitStore,
): RateLimitStore {
  return {
    name: "draining",
    checkBatch: (checks) => memory?.checkBatch(checks) ?? Promise.resolve({ results: [] }),
    ...(memory === undefined ? {} : {
      changeCredits: (c, change, deadline) => memory.changeCredits!(c, change, deadline),
      readCredits: (counters) => memory.readCredits!(counters),
      anchorsCredits: true,
    }),
    async drainCreditChanges() {
      const answer = queue.balances;
      queue.balances = []; // draining clears what it returns
      if (queue.delayMs) await new Promise((resolve) => setTimeout(resolve, queue.delayMs));
      return answer;
    },
  };
}

/**
 * A service whose limiter's store drains `drained` once (then nothing), with
 * `keys` keys per tenant of 9 credits each, a balance of `i` drained for its
 * `i`th key at `at`; `setCredits` of a tenant in `fail` rejects.
 */
async function drainedKeys(keys: Record<string, number>) {
  const storage = new InMemoryApiKeyStorage();
  const fail = new Set<string>();
  const [find, setCredits] = [storage.findById.bind(storage), storage.setCredits.bind(storage)];
  storage.setCredits = async (id, credits) => {
    if (fail.has((await find(id))!.tenantId)) throw new Error("down");
    return setCredits(id, credits);
  };
  const queue = { balances: [] as CreditBalance[] };
  const drained = queue.balances;
  const limiter = createRateLimiter({ store: drainingStore(queue), logger: () => {} });
  const { service } = makeService({ storage, limiter, persistIntervalMs: 3_600_000 });
  const at = Date.now() + 1_000;
  const ids: Record<string, string[]> = {};
  for (const [tenantId, n] of Object.entries(keys)) {
    ids[tenantId] = [];
    for (let i = 0; i < n; i++) {
      const { id } = await service.create({
        tenantId,
        name: `k${i}`,
        scopes: READ_ORDERS,
        credits: { remaining: 9 },
      });
      ids[tenantId].push(id);
      const credits = (await storage.findById(id))!.credits!;
      drained.push({ subject: creditSubjectOf(id, credits), name: "credits", remaining: i, at });
    }
  }
  return { storage, service, drained, ids, at, fail };
}

describe("updateCredits whose write-back fails (a storage blip once the store applied it)", () => {
  const HOURLY = { amount: 100, everyMs: 3_600_000 };
  const hour = (h: number) => new Date(Date.parse("2030-01-01T00:00:00.000Z") + h * 3_600_000);
  /** The lines `console[name]` logged while `run` ran. */
  async function logged(name: "warn" | "info", run: () => unknown): Promise<string[]> {
    const lines: string[] = [];
    const log = console[name];
    console[name] = (line: string) => lines.push(line);
    try {
      await run();
    } finally {
      console[name] = log;
    }
    return lines;
  }
  /**
   * An audited service over in-memory storage whose credit writes (`setCredits`,
   * `setTenantPool`) and reads (`findById`, `findTenantPool`) reject while `blip.writes` or
   * `blip.reads`, with two keys of tenant `acme` spending one balance of 1,000 credits (refilled
   * daily): its own (a key and its rotation) or the pool. `target` is `updateCredits`' id.
   */
  async function blipping(pooled: boolean, options: Partial<ApiKeysServiceOptions> = {}) {
    const storage = new InMemoryApiKeyStorage();
    const blip = { writes: false, reads: false };
    function failing<A extends unknown[], R>(on: () => boolean, method: (...a: A) => Promise<R>) {
      return (...args: A): Promise<R> => on() ? Promise.reject(new Error("blip")) : method(...args);
    }
    storage.setCredits = failing(() => blip.writes, storage.setCredits.bind(storage));
    storage.setTenantPool = failing(() => blip.writes, storage.setTenantPool.bind(storage));
    storage.findById = failing(() => blip.reads, storage.findById.bind(storage));
    storage.findTenantPool = failing(() => blip.reads, storage.findTenantPool.bind(storage));
    let made!: ReturnType<typeof creditService>;
    await logged("info", () => { // the audit log's start-up line
      made = creditService(storage, undefined, undefined, {
        audit: { checkpointKey: "an-audit-key-of-at-least-thirty-two-bytes" },
        ...options,
      });
    });
    const { service, clocks } = made;
    const balance = { remaining: 1_000, refill: { amount: 1_000, interval: "daily" as const } };
    const { id: first } = await service.create({
      tenantId: "acme",
      name: "k",
      scopes: READ_ORDERS,
      credits: pooled ? { ...balance, sharedBy: "tenant" } : balance,
    });
    const { id: second } = pooled
      ? await service.create({
        tenantId: "acme",
        name: "k2",
        scopes: READ_ORDERS,
        credits: { ...balance, sharedBy: "tenant" },
      })
      : await service.rotate(first);
    /** Each key's stored balance and rule (its record's copy). */
    const stored = async () =>
      await Promise.all([first, second].map(async (id) => {
        const credits = (await storage.findById(id))!.credits!;
        return [credits.remaining, credits.refill ?? null];
      }));
    /** The balance read from the store. */
    const read = async () =>
      pooled
        ? (await service.tenantCredits("acme"))!.remaining
        : (await service.listSummaries("acme")).find((s) => s.id === first)!.credits!.remaining;
    return { service, storage, clocks, blip, target: pooled ? null : first, stored, read };
  }

  for (const pooled of [false, true]) {
    const which = pooled ? "the pool" : "a key's own balance";
    it(`${which}: resolves the balance the store applied, audited and logged; the next pass writes it to the records (a retry would double it)`, async () => {
      const { service, blip, target, stored, read } = await blipping(pooled);
      const daily = { amount: 1_000, interval: "daily" };
      blip.reads = true; // before the change: rejected, nothing changed
      const before = await rejection(service.updateCredits("acme", target, { add: 500 }));
      blip.reads = false;
      assert.equal(before.code, "api_key_storage_unavailable");
      assert.equal(await read(), 1_000);
      blip.writes = true;
      const warned = await logged("warn", async () => {
        assert.deepEqual(
          await service.updateCredits("acme", target, { add: 500 }, { actor: "billing" }),
          { remaining: 1_500, nextRefillAt: hour(24) },
        );
      });
      blip.writes = false;
      assert.deepEqual(warned, [
        "api-keys: credits write-back failed (ApiKeyStorageError); further failures are not " +
        "logged until it recovers",
      ]);
      assert.equal(await read(), 1_500, "the store holds it");
      assert.deepEqual(await stored(), [[1_000, daily], [1_000, daily]], "not written yet");
      const { records } = await service.auditLog("acme", { actor: "billing" });
      assert.deepEqual(
        records.map((r) => [r.action, r.changes.credits]),
        [["key.credits_updated", { before: 1_000, after: 1_500 }]],
      );
      await service.close(); // the next write-back pass
      assert.deepEqual(await stored(), [[1_500, daily], [1_500, daily]]);
    });

    it(`${which}: a rule change whose write fails resolves; a change after it applies under the new rule and writes it, and the audit log names it as before`, async () => {
      const { service, blip, target, stored, clocks } = await blipping(pooled);
      clocks.advance(1_800_000);
      blip.writes = true;
      const warned = await logged("warn", async () => {
        assert.deepEqual(
          await service.updateCredits("acme", target, { set: 700, refill: HOURLY }),
          { remaining: 700, nextRefillAt: hour(1) },
        );
        assert.deepEqual(
          await service.updateCredits("acme", target, { add: 5 }),
          { remaining: 705, nextRefillAt: hour(1) },
          "under the new rule, not yet written",
        );
      });
      assert.equal(warned.length, 1, "logged once per outage");
      blip.writes = false;
      await service.updateCredits("acme", target, { add: 1 });
      assert.deepEqual(await stored(), [[706, HOURLY], [706, HOURLY]], "the rule written too");
      await service.updateCredits("acme", target, { refill: null }, { actor: "third" });
      const [entry] = (await service.auditLog("acme", { actor: "third" })).records;
      assert.deepEqual(entry.changes.refill, { before: HOURLY, after: null });
      assert.deepEqual(await stored(), [[706, null], [706, null]]);
      await service.close();
    });

    it(`${which}: a rule change whose write fails is written, with the rule, by the next pass after persistIntervalMs (no draining store)`, async () => {
      const { service, blip, target, stored } = await blipping(pooled, { persistIntervalMs: 100 });
      blip.writes = true;
      await logged("warn", async () => {
        await service.updateCredits("acme", target, { set: 700, refill: HOURLY });
      });
      blip.writes = false;
      const recovered = await logged("info", async () => {
        await new Promise((resolve) => setTimeout(resolve, 300));
      });
      assert.deepEqual(await stored(), [[700, HOURLY], [700, HOURLY]]);
      assert.equal(recovered.length, 1);
      assert.match(recovered[0], /^api-keys: credits write-back recovered after 1 failed pass/);
      await service.close();
    });
  }

  it("with a draining store: a balance drained after a rule change whose write failed is written with the new rule", async () => {
    const storage = new InMemoryApiKeyStorage();
    let failing = false;
    const setCredits = storage.setCredits.bind(storage);
    storage.setCredits = (...args) =>
      failing ? Promise.reject(new Error("blip")) : setCredits(...args);
    const queue = { balances: [] as CreditBalance[] };
    const store = drainingStore(queue, createMemoryRateLimitStore());
    const { service } = creditService(storage, store, undefined, { persistIntervalMs: 3_600_000 });
    const made = { tenantId: "t1", name: "k", scopes: READ_ORDERS, credits: { remaining: 9 } };
    const { id } = await service.create(made);
    failing = true;
    await logged("warn", async () => {
      await service.updateCredits("t1", id, { set: 50, refill: HOURLY });
    });
    failing = false;
    const at = Date.now() + 1_000;
    const subject = creditSubjectOf(id, (await storage.findById(id))!.credits!);
    queue.balances = [{ subject, name: "credits", remaining: 42, at }];
    await service.close();
    const credits = (await storage.findById(id))!.credits!;
    assert.deepEqual([credits.remaining, +credits.updatedAt, credits.refill], [42, at, HOURLY]);
  });
});

describe("ApiKeysServiceOptions.persistIntervalMs", () => {
  it("is 100 to 3,600,000 ms and needs a limiter; close() resolves without a draining store", async () => {
    const limiter = createRateLimiter({ logger: () => {} });
    for (const bad of [99, 3_600_001, 1.5, "10"]) {
      assert.throws(
        () => makeService({ limiter, persistIntervalMs: bad as never }),
        /TypeError: ApiKeysServiceOptions\.persistIntervalMs must be a whole number from 100 to 3600000/,
      );
    }
    assert.throws(
      () => makeService({ persistIntervalMs: 1_000 }),
      /persistIntervalMs needs a limiter/,
    );
    await makeService({ limiter, persistIntervalMs: 100 }).service.close();
  });
});

describe("CreditBook", () => {
  it("compiles a new key's credits only with storesCredits and a limiter", async () => {
    const now = new Date(0);
    const limiter = createRateLimiter({ logger: () => {} });
    const memory = new StorageAccess(new InMemoryApiKeyStorage(), 1_000, "storage");
    const book = new CreditBook(memory, limiter, undefined, () => now, "o.");
    assert.equal(await book.compile(undefined, "t1", now), undefined);
    assert.deepEqual(await book.compile({ remaining: 3 }, "t1", now), {
      remaining: 3,
      updatedAt: now,
    });
    const noLimiter = new CreditBook(memory, undefined, undefined, () => now, "o.");
    await assert.rejects(
      () => noLimiter.compile({ remaining: 3 }, "t1", now),
      /need the service's limiter/,
    );
    const bare = Object.create(new InMemoryApiKeyStorage(), {
      storesCredits: { value: false },
      setCredits: { value: undefined },
    });
    const withoutCapability = new StorageAccess(bare, 1_000, "storage");
    await assert.rejects(
      () =>
        new CreditBook(withoutCapability, limiter, undefined, () => now, "o.").compile(
          {
            remaining: 3,
          },
          "t1",
          now,
        ),
      /storesCredits capability/,
    );
  });
});
