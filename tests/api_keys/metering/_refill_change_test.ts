/**
 * Changing a refill rule with `updateCredits` (`{ set, refill }`, and
 * `{ refill }` alone keeping the balance in one store call), in memory
 * on a pinned clock: a key's own rule (and its rotation chain's), the tenant's
 * pool (every key spending it), no refill granted at the change nor by the old
 * rule after it (a shorter and a longer period), `refill: null`, a cached
 * context, the audit log, creating keys under the changed pool, validation, a
 * store that cannot keep a balance across a rule change (refused, nothing written).
 * The same on PostgreSQL and Redis: tests/limits/refill_change_test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeyValidationError,
  InMemoryApiKeyChangeFeed,
  InMemoryApiKeyStorage,
} from "../../../api_keys/mod.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../../rate_limits/memory_store.ts";
import type {
  CreditChange,
  CreditCounter,
  CreditRefill,
  RateLimitStore,
} from "../../../rate_limits/store.ts";
import type { ApiKeyCreditBalance } from "../../../api_keys/types.ts";
import { FakeClocks, makeService, READ_ORDERS, rejection } from "../helpers.ts";

const CHECKPOINT_KEY = "an-audit-key-of-at-least-thirty-two-bytes";
const at = (iso: string) => Date.parse(`${iso}Z`);
const MONTHLY = { amount: 1_000, interval: "monthly" as const };
const DAILY = { amount: 50, interval: "daily" as const };

/**
 * A service over in-memory storage and a memory store on one fake clock at
 * `startIso` (audited); `wrap` may wrap the store, `storage` is the service's.
 */
function ruleService(
  startIso: string,
  wrap = (store: RateLimitStore) => store,
  storage = new InMemoryApiKeyStorage(),
) {
  const clocks = new FakeClocks();
  clocks.now = at(startIso);
  const info = console.info;
  console.info = () => {}; // the audit log's start-up line
  try {
    const made = makeService({
      storage,
      limiter: createRateLimiter({
        store: wrap(createMemoryRateLimitStore({ now: () => clocks.now })),
        logger: () => {},
      }),
      clock: clocks.clock,
      monotonicClock: clocks.monotonicClock,
      audit: { checkpointKey: CHECKPOINT_KEY },
    });
    return { ...made, storage, clocks };
  } finally {
    console.info = info;
  }
}

/**
 * Makes a key with `join` while the balance it joins goes down to 100 a month
 * with `change` (its record held at its insert or rotation until the change is
 * done, the clock 1 s on), then checks it spends by the new rule: its record
 * has it, and the old daily rule's midnight (2030-01-16) refills nothing through it.
 */
async function joinDuringChange(
  { service, storage, clocks }: ReturnType<typeof ruleService>,
  join: () => Promise<{ id: string; key: string }>,
  change: (refill: CreditRefill) => Promise<ApiKeyCreditBalance>,
): Promise<void> {
  let release = () => {};
  const held = new Promise<void>((resolve) => release = resolve);
  const insert = storage.insert.bind(storage);
  const rotate = storage.rotate.bind(storage);
  storage.insert = async (...args) => {
    await held;
    return await insert(...args);
  };
  storage.rotate = async (...args) => {
    await held;
    return await rotate(...args);
  };
  const joining = join();
  await new Promise((resolve) => setTimeout(resolve, 10)); // it has read the balance's rule
  clocks.advance(1_000);
  const monthly = { amount: 100, interval: "monthly" as const };
  assert.equal((await change(monthly)).remaining, 100);
  release();
  const joined = await joining;
  const credits = (await storage.findById(joined.id))!.credits!;
  assert.deepEqual(credits.refill, monthly, "the joined key's record has the new rule");
  clocks.now = at("2030-01-16T00:00:01.000"); // the old rule's midnight
  assert.equal(
    (await service.authorize(joined.key)).creditResult?.remaining,
    99,
    "no daily refill through the joined key",
  );
}

describe("updateCredits with a refill rule: a key's own balance", () => {
  for (const set of [true, false]) {
    const how = set ? "set with the rule" : "the rule alone (the balance kept)";
    it(`a shorter period (monthly to daily) mid-month, ${how}: no refill until the new rule's next boundary; the rotation chain's records get the rule`, async () => {
      const { service, storage, clocks } = ruleService("2030-01-10T08:00:00.000");
      const { id: first, key: firstKey } = await service.create({
        tenantId: "t1",
        name: "k",
        scopes: READ_ORDERS,
        credits: { remaining: 100, refill: MONTHLY },
      });
      // Spent first: the store holds the balance.
      await service.authorize(firstKey, { cost: 10 });
      const { id: second, key } = await service.rotate(first);
      clocks.now = at("2030-01-15T12:00:00.000");
      const change = set ? { set: 90, refill: DAILY } : { refill: DAILY };
      assert.deepEqual(await service.updateCredits("t1", first, change), {
        remaining: 90,
        nextRefillAt: new Date(at("2030-01-16T00:00:00.000")),
      });
      for (const id of [first, second]) {
        const credits = (await storage.findById(id))!.credits!;
        assert.deepEqual(credits.refill, DAILY, id);
        assert.deepEqual([credits.remaining, +credits.updatedAt], [90, clocks.now]);
      }
      const spent = await service.authorize(key);
      assert.deepEqual(
        [spent.creditResult?.remaining, spent.creditResult?.resetMs],
        [89, 12 * 3_600_000],
        "no free refill at the change",
      );
      clocks.now = at("2030-01-16T00:00:01.000");
      assert.equal(
        (await service.authorize(key)).creditResult?.remaining,
        49,
        "the new rule refills",
      );
    });

    it(`a longer period (daily to monthly), ${how}: no refill by the old rule's boundaries after the change, the first at the new rule's`, async () => {
      const { service, clocks } = ruleService("2030-01-14T10:00:00.000");
      const { id, key } = await service.create({
        tenantId: "t1",
        name: "k",
        scopes: READ_ORDERS,
        credits: { remaining: 50, refill: DAILY },
      });
      await service.authorize(key, { cost: 47 });
      clocks.now = at("2030-01-15T12:00:00.000"); // the daily refill of 00:00 is due, not yet taken
      const change = set ? { set: 50, refill: MONTHLY } : { refill: MONTHLY };
      // Alone: the daily refill due at the change is taken (50), as the set gives.
      assert.deepEqual(await service.updateCredits("t1", id, change), {
        remaining: 50,
        nextRefillAt: new Date(at("2030-02-01T00:00:00.000")),
      });
      clocks.now = at("2030-01-16T01:00:00.000");
      assert.equal((await service.authorize(key)).creditResult?.remaining, 49, "no daily refill");
      clocks.now = at("2030-02-01T00:00:01.000");
      assert.equal((await service.authorize(key)).creditResult?.remaining, 999);
    });
  }

  for (const set of [true, false]) {
    it(`set with a rule sets the balance at the change; refill: null ${set ? "with set" : "alone"} ends the refills`, async () => {
      const { service, storage, clocks } = ruleService("2030-01-15T12:00:00.000");
      const { id, key } = await service.create({
        tenantId: "t1",
        name: "k",
        scopes: READ_ORDERS,
        credits: { remaining: 100, refill: MONTHLY },
      });
      const upgrade = { amount: 10_000, interval: "daily" as const };
      assert.deepEqual(await service.updateCredits("t1", id, { set: 10_000, refill: upgrade }), {
        remaining: 10_000,
        nextRefillAt: new Date(at("2030-01-16T00:00:00.000")),
      });
      assert.equal((await service.authorize(key)).creditResult?.remaining, 9_999);
      const none = set ? { set: 9_999, refill: null } : { refill: null };
      assert.deepEqual(await service.updateCredits("t1", id, none), {
        remaining: 9_999,
        nextRefillAt: null,
      });
      assert.equal("refill" in (await storage.findById(id))!.credits!, false);
      clocks.now = at("2030-03-01T00:00:01.000");
      const spent = await service.authorize(key);
      assert.deepEqual([spent.creditResult?.remaining, spent.creditResult?.resetMs], [9_998, -1]);
    });
  }

  for (const set of [true, false]) {
    it(
      `a key minted with limitsOf spends the balance: it gets the new rule too (${
        set ? "with set" : "alone"
      }), its cached context dropped, so the old rule's refill is never granted through it`,
      async () => {
        const { service, storage, clocks } = ruleService("2030-01-15T23:59:00.000");
        const { id: first } = await service.create({
          tenantId: "t1",
          name: "k",
          scopes: READ_ORDERS,
          credits: { remaining: 1_000, refill: { amount: 1_000, interval: "daily" } },
        });
        const { id: minted, key } = await service.create({
          tenantId: "t1",
          name: "minted",
          scopes: READ_ORDERS,
          limitsOf: first,
        });
        assert.equal((await service.authorize(key, { cost: 900 })).creditResult?.remaining, 100);
        // The plan goes down: 100 a month from now on (the key's own balance, named by its first key).
        const change = set ? { set: 100, refill: { amount: 100, interval: "monthly" as const } } : {
          refill: { amount: 100, interval: "monthly" as const },
        };
        assert.equal((await service.updateCredits("t1", first, change)).remaining, 100);
        const credits = (await storage.findById(minted))!.credits!;
        assert.deepEqual(credits.refill, change.refill, "the minted key's record has the new rule");
        assert.deepEqual([credits.remaining, +credits.updatedAt], [100, clocks.now]);
        clocks.now = at("2030-01-16T00:00:01.000"); // the old rule's midnight, within the cache's TTL
        const spent = await service.authorize(key);
        assert.deepEqual(
          [spent.creditResult?.remaining, spent.creditResult?.resetMs],
          [99, at("2030-02-01T00:00:00.000") - clocks.now],
          "no daily refill through the minted key",
        );
      },
    );
  }

  for (const how of ["rotate", "limitsOf"] as const) {
    it(`a key joining a key's balance (${how}) while its rule changes, stored after the change read the tenant's keys: it takes the first key's new rule`, async () => {
      const made = ruleService("2030-01-15T23:58:00.000");
      const { service } = made;
      const { id: first, key: firstKey } = await service.create({
        tenantId: "t1",
        name: "k",
        scopes: READ_ORDERS,
        credits: { remaining: 1_000, refill: { amount: 1_000, interval: "daily" } },
      });
      await service.authorize(firstKey, { cost: 900 });
      await joinDuringChange(
        made,
        () =>
          how === "rotate" ? made.service.rotate(first) : made.service.create({
            tenantId: "t1",
            name: "m",
            scopes: READ_ORDERS,
            limitsOf: first,
          }),
        (refill) => made.service.updateCredits("t1", first, { set: 100, refill }),
      );
    });
  }

  for (const how of ["rotate", "limitsOf"] as const) {
    it(`a key joining a key's balance (${how}) while its rule changes, the storage failing at its join write: the key is handed out (the failure logged), and the next rule change writes it`, async () => {
      const storage = new InMemoryApiKeyStorage();
      // Taken by the service when it is made: replaced before.
      const setCredits = storage.setCredits.bind(storage);
      let down = false;
      storage.setCredits = (...args) =>
        down ? Promise.reject(new Error("down")) : setCredits(...args);
      const { service, clocks } = ruleService("2030-01-15T23:58:00.000", undefined, storage);
      const daily = { amount: 1_000, interval: "daily" as const };
      const { id: first, key: firstKey } = await service.create({
        tenantId: "t1",
        name: "k",
        scopes: READ_ORDERS,
        credits: { remaining: 1_000, refill: daily },
      });
      await service.authorize(firstKey, { cost: 900 });
      let release = () => {};
      const held = new Promise<void>((resolve) => release = resolve);
      const insert = storage.insert.bind(storage);
      const rotate = storage.rotate.bind(storage);
      storage.insert = async (...args) => (await held, await insert(...args));
      storage.rotate = async (...args) => (await held, await rotate(...args));
      const lines: string[] = [];
      const warn = console.warn;
      console.warn = (line: string) => void lines.push(String(line));
      try {
        const joining = how === "rotate" ? service.rotate(first) : service.create({
          tenantId: "t1",
          name: "m",
          scopes: READ_ORDERS,
          limitsOf: first,
        });
        await new Promise((resolve) => setTimeout(resolve, 10)); // it has read the balance's rule
        clocks.advance(1_000);
        const monthly = { amount: 100, interval: "monthly" as const };
        await service.updateCredits("t1", first, { set: 100, refill: monthly });
        down = true; // from the key's join write on
        release();
        const joined = await joining;
        down = false;
        assert.match(joined.key, /^ak_live_/, "the stored key's secret is handed out");
        assert.deepEqual(lines, [
          "api-keys: credits join failed (ApiKeyStorageError); further failures are not logged until it recovers",
        ]);
        assert.deepEqual((await storage.findById(joined.id))!.credits!.refill, daily);
        assert.equal((await service.authorize(joined.key)).creditResult?.remaining, 99);
        // The next rule change writes every key spending the balance, this one too.
        await service.updateCredits("t1", first, { refill: monthly });
        assert.deepEqual((await storage.findById(joined.id))!.credits!.refill, monthly);
      } finally {
        console.warn = warn;
      }
    });
  }

  it("a cached context spends with the new rule at once; the audit log records the rule before and after", async () => {
    const { service, clocks } = ruleService("2030-01-15T12:00:00.000");
    const { id, key } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      credits: { remaining: 100, refill: MONTHLY },
    });
    assert.equal((await service.authorize(key)).creditResult?.remaining, 99); // cached now
    await service.updateCredits("t1", id, { set: 99, refill: DAILY }, { actor: "billing" });
    clocks.advance(1_000);
    const spent = await service.authorize(key);
    assert.equal(spent.creditResult?.resetMs, at("2030-01-16T00:00:00.000") - clocks.now);
    const [entry] = (await service.auditLog("t1", { actor: "billing" })).records;
    assert.equal(entry.action, "key.credits_updated");
    assert.deepEqual(entry.changes.refill, { before: MONTHLY, after: DAILY });
    assert.deepEqual(entry.changes.credits, { before: 99, after: 99 }); // the store's answer
    assert.deepEqual(entry.changes.request, { before: null, after: { set: 99, refill: DAILY } });
  });

  it("a rule change with set records the balance before under the old rule (the new rule's due refill never settled into it)", async () => {
    const { service, clocks } = ruleService("2030-01-15T12:00:00.000");
    const { id, key } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      credits: { remaining: 100, refill: MONTHLY },
    });
    assert.equal((await service.authorize(key)).creditResult?.remaining, 99);
    // A day boundary passed: the daily rule would have refilled to 50, the monthly one nothing.
    clocks.now = at("2030-01-16T01:00:00.000");
    const changed = await service.updateCredits("t1", id, { set: 500, refill: DAILY }, {
      actor: "billing",
    });
    assert.equal(changed.remaining, 500);
    assert.deepEqual(changed.nextRefillAt, new Date(at("2030-01-17T00:00:00.000")));
    const [entry] = (await service.auditLog("t1", { actor: "billing" })).records;
    assert.deepEqual(entry.changes.credits, { before: 99, after: 500 });
  });

  it("across a fleet: another instance's cached context spends with the new rule once the change feed tells it", async () => {
    const clocks = new FakeClocks();
    clocks.now = at("2030-01-15T12:00:00.000");
    const storage = new InMemoryApiKeyStorage();
    const feed = new InMemoryApiKeyChangeFeed();
    const limiter = createRateLimiter({
      store: createMemoryRateLimitStore({ now: () => clocks.now }),
      logger: () => {},
    });
    const [a, b] = [0, 1].map(() =>
      makeService({
        storage,
        feed,
        limiter,
        clock: clocks.clock,
        monotonicClock: clocks.monotonicClock,
      }).service
    );
    const { id, key } = await a.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      credits: { remaining: 100, refill: MONTHLY },
    });
    const cached = await b.authorize(key); // b caches the context with the monthly rule
    assert.equal(cached.creditResult?.resetMs, at("2030-02-01T00:00:00.000") - clocks.now);
    await a.updateCredits("t1", id, { set: 99, refill: DAILY });
    const spent = await b.authorize(key);
    assert.deepEqual(
      [spent.creditResult?.remaining, spent.creditResult?.resetMs],
      [98, at("2030-01-16T00:00:00.000") - clocks.now],
    );
    await feed.close();
  });

  it("set with a rule: another instance's context cached under the old rule gets no refill by an old boundary crossed before the change (anchored at it)", async () => {
    const clocks = new FakeClocks();
    clocks.now = at("2030-01-15T09:00:00.000");
    const storage = new InMemoryApiKeyStorage();
    const limiter = createRateLimiter({
      store: createMemoryRateLimitStore({ now: () => clocks.now }),
      logger: () => {},
    });
    const [admin, edge] = [0, 1].map(() =>
      makeService({ storage, limiter, clock: clocks.clock, monotonicClock: clocks.monotonicClock })
        .service
    );
    const hourly = { amount: 1_000, everyMs: 3_600_000 };
    const { id, key } = await admin.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      credits: { remaining: 1_000, refill: hourly },
    });
    clocks.now = at("2030-01-15T09:10:00.000");
    assert.equal((await admin.authorize(key, { cost: 1_000 })).creditResult?.remaining, 0);
    clocks.now = at("2030-01-15T10:29:50.000"); // past the old rule's 10:00, no write since
    await rejection(edge.authorize(key, { requiredScope: { resource: "admin", level: "write" } }));
    clocks.now = at("2030-01-15T10:30:00.000");
    assert.equal((await admin.updateCredits("t1", id, { set: 0, refill: null })).remaining, 0);
    clocks.now = at("2030-01-15T10:30:05.000");
    const refused = await rejection(edge.authorize(key)); // its context still has the hourly rule
    assert.equal((refused as { code?: string }).code, "api_key_usage_exceeded");
    assert.equal((await admin.listSummaries("t1"))[0].credits?.remaining, 0);
  });

  it("refuses a bad rule naming the field, a rule without set or with add, and a rule left undefined (TypeError); a key without a balance of its own (ApiKeyValidationError)", async () => {
    const { service, storage } = ruleService("2030-01-15T12:00:00.000");
    const { id } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      credits: { remaining: 100, refill: MONTHLY },
    });
    for (
      const [bad, message] of [
        [{ set: 1, refill: { amount: 0, interval: "daily" } }, /refill\.amount/],
        [{ set: 1, refill: { amount: 5, interval: "daily", day: 3 } }, /refill\.day/],
        [{ set: 1, refill: { amount: 5, everyMs: 1_000, interval: "daily" } }, /refill takes/],
        [{ set: 1, refill: "daily" }, /refill must be an object/],
        [{ set: 1, refill: undefined }, /refill must be a rule or null/],
        [{ refill: undefined }, /refill must be a rule or null/],
        [{ anchor: true }, /anchor/],
        [{ add: 5, refill: DAILY }, /add cannot be given with refill/],
        [{ set: -1, refill: DAILY }, /set/],
      ] as const
    ) {
      const error = await rejection(service.updateCredits("t1", id, bad as never));
      assert.ok(error instanceof TypeError, `${JSON.stringify(bad)}: ${error}`);
      assert.match(String(error.message), message);
    }
    assert.deepEqual((await storage.findById(id))!.credits!.refill, MONTHLY, "nothing written");
    const pooled = await service.create({
      tenantId: "t1",
      name: "pooled",
      scopes: READ_ORDERS,
      credits: { remaining: 5, sharedBy: "tenant" },
    });
    const error = await rejection(
      service.updateCredits("t1", pooled.id, { set: 1, refill: DAILY }),
    );
    assert.ok(error instanceof ApiKeyValidationError);
    assert.equal(error.field, "credits");
  });
});

describe("updateCredits with a refill rule alone: the balance kept", () => {
  it("the tenant's pool: the balance kept under the new rule for every key spending it", async () => {
    const { service, storage, clocks } = ruleService("2030-01-10T08:00:00.000");
    const { id, key } = await service.create({
      tenantId: "acme",
      name: "ci",
      scopes: READ_ORDERS,
      credits: { remaining: 500, refill: MONTHLY, sharedBy: "tenant" },
    });
    await service.authorize(key, { cost: 100 });
    clocks.now = at("2030-01-15T12:00:00.000");
    assert.deepEqual(await service.updateCredits("acme", null, { refill: DAILY }), {
      remaining: 400,
      nextRefillAt: new Date(at("2030-01-16T00:00:00.000")),
    });
    assert.deepEqual((await storage.findById(id))!.credits!.refill, DAILY);
    assert.equal((await service.authorize(key)).creditResult?.remaining, 399, "no refill");
    clocks.now = at("2030-01-16T00:00:01.000");
    assert.equal((await service.authorize(key)).creditResult?.remaining, 49, "refilled");
  });

  it("one store call (atomic with concurrent spends): { anchor: true } under the old rule", async () => {
    const calls: [CreditCounter, CreditChange][] = [];
    const { service } = ruleService("2030-01-15T12:00:00.000", (store) => ({
      ...store,
      changeCredits: (counter, change, deadline) => {
        calls.push([counter, change]);
        return store.changeCredits!(counter, change, deadline);
      },
    }));
    const { id } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      credits: { remaining: 100, refill: MONTHLY },
    });
    await service.updateCredits("t1", id, { refill: DAILY });
    assert.equal(calls.length, 1, "exactly one store call");
    const [[counter, change]] = calls;
    assert.deepEqual(change, { anchor: true });
    assert.deepEqual(counter.refill, MONTHLY, "settled under the old rule");
    await service.updateCredits("t1", id, { set: 7, refill: MONTHLY });
    assert.equal(calls.length, 2, "set with a rule: one store call too");
    assert.deepEqual(calls[1][1], { set: 7, anchor: true }, "set, anchored at the change");
    assert.deepEqual(
      calls[1][0].refill,
      DAILY,
      "under the old rule too (the balance before is its)",
    );
  });

  it("a store that cannot anchor a balance (no anchorsCredits): a TypeError naming it, nothing changed or written", async () => {
    const changes: CreditChange[] = [];
    const { service, storage } = ruleService("2030-01-15T12:00:00.000", (store) => {
      const { anchorsCredits: _, ...rest } = store;
      return {
        ...rest,
        changeCredits: (counter, change, deadline) => {
          changes.push(change);
          return store.changeCredits!(counter, change, deadline);
        },
      };
    });
    const { id, key } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      credits: { remaining: 100, refill: MONTHLY },
    });
    await service.authorize(key);
    const error = await rejection(service.updateCredits("t1", id, { refill: DAILY }));
    assert.ok(error instanceof TypeError, String(error));
    assert.match(String(error.message), /anchorsCredits/);
    assert.deepEqual(changes, [], "no store call");
    const credits = (await storage.findById(id))!.credits!;
    assert.deepEqual([credits.refill, credits.remaining], [MONTHLY, 100], "nothing written");
    assert.equal((await service.authorize(key)).creditResult?.remaining, 98);
  });
});

/** A key of tenant acme joining its pool of 1,000 a day. */
const NEW_ON_POOL = {
  tenantId: "acme",
  name: "new",
  scopes: READ_ORDERS,
  credits: {
    remaining: 1_000,
    refill: { amount: 1_000, interval: "daily" as const },
    sharedBy: "tenant" as const,
  },
};

/** The first key of tenant acme's pool of 1,000 a day, 900 of it spent. */
async function dailyPool(service: ReturnType<typeof ruleService>["service"]) {
  const first = await service.create({ ...NEW_ON_POOL, name: "first" });
  await service.authorize(first.key, { cost: 900 });
  return first;
}

describe("updateCredits with a refill rule: the tenant's pool", () => {
  it("a key joining the pool stored after the change read the tenant's keys but checked before any was written: the change's second read writes it the new rule", async () => {
    // The change is held at its first write, once it has read the tenant's keys (the storage's
    // capabilities are read when the service is made: patched before).
    const storage = new InMemoryApiKeyStorage();
    let release = () => {};
    const held = new Promise<void>((resolve) => release = resolve);
    let reached = () => {};
    const writing = new Promise<void>((resolve) => reached = resolve);
    let holding = false;
    const setCredits = storage.setCredits.bind(storage);
    storage.setCredits = async (...args) => {
      if (holding) {
        reached();
        await held;
      }
      return await setCredits(...args);
    };
    const { service, clocks } = ruleService("2030-01-15T23:58:00.000", undefined, storage);
    await dailyPool(service);
    holding = true;
    clocks.advance(1_000);
    const monthly = { amount: 100, interval: "monthly" as const };
    const change = service.updateCredits("acme", null, { set: 100, refill: monthly });
    await writing;
    const joined = await service.create(NEW_ON_POOL);
    holding = false;
    release();
    assert.equal((await change).remaining, 100);
    const credits = (await storage.findById(joined.id))!.credits!;
    assert.deepEqual(credits.refill, monthly, "the joined key's record has the new rule");
    clocks.now = at("2030-01-16T00:00:01.000");
    assert.equal((await service.authorize(joined.key)).creditResult?.remaining, 99);
  });

  for (const how of ["create", "rotate"] as const) {
    it(`a key joining the pool (${how}) while its rule changes, its record stored after the change listed the tenant's keys: it takes the new rule, never refilling by the old one`, async () => {
      const made = ruleService("2030-01-15T23:58:00.000");
      const { service } = made;
      const first = await dailyPool(service);
      await joinDuringChange(
        made,
        () => how === "create" ? service.create(NEW_ON_POOL) : service.rotate(first.id),
        (refill) => made.service.updateCredits("acme", null, { set: 100, refill }),
      );
    });
  }

  it("reaches every key spending the pool (own + pool too), a new check spends with it; keys then join under the new rule, the old one refused naming how to change it", async () => {
    const { service, storage, clocks } = ruleService("2030-01-10T08:00:00.000");
    const plan = { remaining: 50_000, refill: { amount: 50_000, interval: "monthly" as const } };
    const input = { tenantId: "acme", scopes: READ_ORDERS };
    const ci = await service.create({
      ...input,
      name: "ci",
      credits: { ...plan, sharedBy: "tenant" },
    });
    const mixed = await service.create({
      ...input,
      name: "mixed",
      credits: { remaining: 100, refill: DAILY, pool: plan },
    });
    const other = await service.create({
      ...input,
      tenantId: "other",
      name: "theirs",
      credits: { ...plan, sharedBy: "tenant" },
    });
    await service.authorize(ci.key, { cost: 40_000 });
    clocks.now = at("2030-01-15T12:00:00.000");
    const pro = { amount: 200_000, interval: "daily" as const };
    assert.deepEqual(await service.updateCredits("acme", null, { set: 10_000, refill: pro }), {
      remaining: 10_000,
      nextRefillAt: new Date(at("2030-01-16T00:00:00.000")),
    });
    assert.deepEqual((await storage.findById(ci.id))!.credits!.refill, pro);
    assert.deepEqual((await storage.findById(mixed.id))!.credits!.pool!.refill, pro);
    assert.deepEqual((await storage.findById(mixed.id))!.credits!.refill, DAILY, "its own kept");
    assert.deepEqual((await storage.findById(other.id))!.credits!.refill, plan.refill);
    const spent = await service.authorize(mixed.key);
    assert.deepEqual(
      [spent.tenantCreditResult?.remaining, spent.tenantCreditResult?.resetMs],
      [9_999, 12 * 3_600_000],
    );
    assert.deepEqual(await service.tenantCredits("acme"), {
      remaining: 9_999,
      nextRefillAt: new Date(at("2030-01-16T00:00:00.000")),
      refill: pro,
    });
    // The upgraded plan's keys join the pool as it is; the old plan's rule is refused.
    const joined = await service.create({
      ...input,
      name: "pro",
      credits: { remaining: 200_000, refill: pro, sharedBy: "tenant" },
    });
    assert.equal((await storage.findById(joined.id))!.credits!.remaining, 9_999);
    const refused = await rejection(
      service.create({ ...input, name: "old", credits: { ...plan, sharedBy: "tenant" } }),
    );
    assert.ok(refused instanceof ApiKeyValidationError);
    assert.match(String(refused.message), /updateCredits\(tenantId, null, \{ set, refill \}\)/);
    clocks.now = at("2030-01-16T00:00:01.000");
    assert.equal((await service.authorize(joined.key)).tenantCreditResult?.remaining, 199_999);
    assert.equal(
      (await service.authorize(other.key)).tenantCreditResult?.remaining,
      49_999,
      "another tenant's pool untouched",
    );
  });

  it("set with a rule on the pool; the audit log records the pool's rule before and after", async () => {
    const { service, clocks } = ruleService("2030-01-15T12:00:00.000");
    const plan = { remaining: 500, refill: MONTHLY };
    const { key } = await service.create({
      tenantId: "acme",
      name: "ci",
      scopes: READ_ORDERS,
      credits: { ...plan, sharedBy: "tenant" },
    });
    await service.authorize(key); // the store holds the pool (read for the audit log's before)
    const upgrade = { amount: 10_000, everyMs: 3_600_000 };
    await service.updateCredits("acme", null, { set: 10_000, refill: upgrade }, { actor: "b" });
    const spent = await service.authorize(key);
    assert.deepEqual(
      [spent.creditResult?.remaining, spent.creditResult?.resetMs],
      [9_999, 3_600_000],
    );
    clocks.now = at("2030-01-15T13:00:00.000");
    assert.equal((await service.authorize(key)).creditResult?.remaining, 9_999, "refilled");
    const [entry] = (await service.auditLog("acme", { actor: "b" })).records;
    assert.equal(entry.keyId, null);
    assert.deepEqual(entry.changes.refill, { before: MONTHLY, after: upgrade });
    assert.deepEqual(entry.changes.credits, { before: 499, after: 10_000 }); // the store's answer
  });
});

describe("updateCredits queued behind a rule change reads the rule in its turn", () => {
  const PER_MINUTE = { amount: 1_000, everyMs: 60_000 };
  const FIVE_K_DAILY = { amount: 5_000, interval: "daily" as const };
  /** A key of tenant acme with 1,000 credits refilled by `refill`, its own or the pool's (`target`: `updateCredits`' id). */
  async function keyOn(
    service: ReturnType<typeof ruleService>["service"],
    pooled: boolean,
    refill: CreditRefill,
  ) {
    const credits = { remaining: 1_000, refill };
    const { id } = await service.create({
      tenantId: "acme",
      name: "k",
      scopes: READ_ORDERS,
      credits: pooled ? { ...credits, sharedBy: "tenant" } : credits,
    });
    return { id, target: pooled ? null : id };
  }
  for (const pooled of [false, true]) {
    const which = pooled ? "the pool" : "a key's own balance";
    it(`${which}: a plan change and a top-up sent together, the plan's write-back crossing the old rule's boundary: the top-up applies under the new rule`, async () => {
      const storage = new InMemoryApiKeyStorage();
      const setCredits = storage.setCredits.bind(storage);
      let during = () => {};
      storage.setCredits = async (...args) => {
        during();
        during = () => {};
        return await setCredits(...args);
      };
      // 1 s before a minute boundary of the old rule.
      const { service, clocks } = ruleService("2030-01-15T12:00:59.000", undefined, storage);
      const { id, target } = await keyOn(service, pooled, PER_MINUTE);
      during = () => clocks.advance(2_000); // the plan's write-back takes 2 s
      const [planned, added] = await Promise.all([
        service.updateCredits("acme", target, { set: 100, refill: FIVE_K_DAILY }),
        service.updateCredits("acme", target, { add: 5 }),
      ]);
      const midnight = new Date(at("2030-01-16T00:00:00.000"));
      assert.deepEqual(planned, { remaining: 100, nextRefillAt: midnight });
      assert.deepEqual(added, { remaining: 105, nextRefillAt: midnight }, "no old-rule refill");
      const credits = (await storage.findById(id))!.credits!;
      assert.deepEqual([credits.remaining, credits.refill], [105, FIVE_K_DAILY]);
    });

    it(`${which}: two rule changes sent together: the second's audit record names the first's rule as before`, async () => {
      const { service } = ruleService("2030-01-15T12:00:00.000");
      const { target } = await keyOn(service, pooled, FIVE_K_DAILY);
      await Promise.all([
        service.updateCredits("acme", target, { set: 7, refill: PER_MINUTE }, { actor: "first" }),
        service.updateCredits("acme", target, { set: 7, refill: null }, { actor: "second" }),
      ]);
      const rules = async (actor: string) =>
        (await service.auditLog("acme", { actor })).records[0].changes.refill;
      assert.deepEqual(await rules("first"), { before: FIVE_K_DAILY, after: PER_MINUTE });
      assert.deepEqual(await rules("second"), { before: PER_MINUTE, after: null });
    });
  }
});
