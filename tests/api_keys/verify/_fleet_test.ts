import { compileSettings } from "../../../api_keys/_settings.ts";
/**
 * The service's side of a change feed (`feed`, `maxStalenessMs`): options,
 * invalidation by notice and reset, the staleness rule (database down, start
 * during an outage), the prefix set (no lookup for an unknown prefix, a new key
 * accepted at once where it was made), the lookup budget of a miss in the set
 * (`unknownPrefixLookups`), and services coherent over one
 * in-memory storage (a rotation without grace on an instance whose clock is
 * behind included).
 */
import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  API_KEY_STORAGE_METHODS,
  type ApiKeyChangeListener,
  type ApiKeyChangeNotice,
  ApiKeysService,
  type ApiKeysServiceOptions,
  type ApiKeyStorage,
  ApiKeyStorageError,
  type ApiKeyVerificationMetric,
  generateKey,
  InMemoryApiKeyChangeFeed,
  InMemoryApiKeyStorage,
} from "../../../api_keys/mod.ts";
import { MAX_MAX_STALENESS_MS } from "../../../api_keys/_options.ts";
import { compileFeed, FeedFollower } from "../../../api_keys/verify/_fleet.ts";
import { FakeClocks, PEPPER_1, READ_ORDERS, rejection } from "../helpers.ts";
import { flush, ScriptedFeed } from "./fake_feed.ts";
import { keyOf } from "../../reliability/hostile_inputs.ts";
import { instrumentTelemetry } from "../../../telemetry/mod.ts";
import { setup } from "../../telemetry/_sdk.ts";

/**
 * Shared storage as the service sees Prisma: the seven operations only
 * (asynchronous, no capability), lookups counted, and a switch that makes
 * every call fail (the database is down).
 */
function sharedStorage(inner = new InMemoryApiKeyStorage()) {
  const state = { lookups: 0, down: false };
  const storage = Object.fromEntries(API_KEY_STORAGE_METHODS.map((method) => [
    method,
    (...args: unknown[]) => {
      if (method === "findByPrefix") state.lookups++;
      if (state.down) return Promise.reject(new Error("connection refused"));
      return (inner[method] as (...a: unknown[]) => unknown).apply(inner, args);
    },
  ])) as unknown as ApiKeyStorage;
  return { storage, state, inner };
}

/** A service over `storage` following `feed`, with fake clocks and a metric log. */
function follower(
  storage: ApiKeyStorage,
  feed: ApiKeysServiceOptions["feed"],
  overrides: Partial<ApiKeysServiceOptions> = {},
) {
  const clocks = new FakeClocks();
  const metrics: ApiKeyVerificationMetric[] = [];
  const service = new ApiKeysService({
    peppers: { 1: PEPPER_1 },
    storage,
    feed,
    clock: clocks.clock,
    monotonicClock: clocks.monotonicClock,
    onMetric: (metric) => {
      metrics.push(metric);
    },
    ...overrides,
  });
  return { service, clocks, metrics };
}

/** A key of the default namespace with a valid checksum and a random (unknown) prefix. */
const unknownKey = () => generateKey({ environment: "live" }).raw;

const info = console.info;
beforeEach(() => {
  console.info = () => {}; // the storage-capability line of every service over shared storage
});
afterEach(() => {
  console.info = info;
});

describe("options feed and maxStalenessMs", () => {
  const base = { peppers: { 1: PEPPER_1 }, storage: new InMemoryApiKeyStorage() };

  it("reject a feed of the wrong shape and a bad bound, naming the option", () => {
    for (const feed of [null, 1, {}, { subscribe() {} }, { subscribe() {}, status: 1 }]) {
      assert.throws(
        () => new ApiKeysService({ ...base, feed: feed as never }),
        /ApiKeysServiceOptions\.feed must be a change feed/,
      );
    }
    const withSnapshot = { subscribe() {}, status() {}, snapshot: "no" };
    assert.throws(
      () => new ApiKeysService({ ...base, feed: withSnapshot as never }),
      /ApiKeysServiceOptions\.feed/,
    );
    for (const bound of [-1, Number.NaN, Infinity, "2000", MAX_MAX_STALENESS_MS + 1]) {
      assert.throws(
        () =>
          new ApiKeysService({
            ...base,
            feed: new ScriptedFeed(),
            maxStalenessMs: bound as number,
          }),
        /ApiKeysServiceOptions\.maxStalenessMs must be/,
      );
    }
    assert.throws(
      () => new ApiKeysService({ ...base, maxStalenessMs: 1_000 }),
      /ApiKeysServiceOptions\.maxStalenessMs needs a feed/,
    );
  });

  it("validating options with a feed subscribes nothing, nor does loading the follower", async () => {
    const feed = new ScriptedFeed();
    const settings = compileSettings({ ...base, feed, maxStalenessMs: 0 });
    new ApiKeysService({ ...base, feed });
    await settings.loaded();
    assert.ok(settings.fleet instanceof FeedFollower);
    assert.equal(feed.subscribeCalls, 0);
    assert.equal(compileFeed(undefined, undefined, undefined, undefined, () => 0, "O."), undefined);
  });

  it("turn the verification cache on by default for shared storage", async () => {
    const { storage, state, inner } = sharedStorage();
    const maker = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: inner });
    const { key } = await maker.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const feed = new ScriptedFeed();
    const { service } = follower(storage, feed);
    for (let i = 0; i < 5; i++) await service.verify(key);
    assert.equal(state.lookups, 1);
    assert.equal(feed.subscribeCalls, 1);

    const { service: without } = follower(storage, undefined);
    for (let i = 0; i < 3; i++) await without.verify(key);
    assert.equal(state.lookups, 4, "without a feed, shared storage is not cached");
  });
});

describe("a service following a feed", () => {
  async function setup(overrides: Partial<ApiKeysServiceOptions> = {}) {
    const shared = sharedStorage();
    const feed = new ScriptedFeed();
    const made = follower(shared.storage, feed, overrides);
    const { id, key } = await made.service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
    });
    await made.service.verify(key); // cached
    shared.state.lookups = 0;
    return { ...shared, ...made, feed, id, key, prefix: key.split("_")[2] };
  }

  it("drops the entry of a notice's prefix, and every entry on a reset", async () => {
    const { service, feed, state, inner, key, id, prefix } = await setup();
    await service.verify(key);
    assert.equal(state.lookups, 0, "served from the cache");
    feed.change("updated", "SomeOtherPfx");
    await service.verify(key);
    assert.equal(state.lookups, 0, "another prefix's notice keeps the entry");
    // Revoked behind the service's back (another instance); the notice drops the entry.
    await inner.markRevoked(id, new Date());
    assert.ok(await service.verify(key), "still cached: no notice yet");
    feed.change("revoked", prefix);
    assert.equal((await rejection(service.verify(key))).code, "api_key_revoked");
    assert.equal(state.lookups, 1);

    const { service: other, feed: otherFeed, state: otherState, key: otherKey } = await setup();
    otherFeed.reset();
    await other.verify(otherKey);
    assert.equal(otherState.lookups, 1, "a reset drops every entry");
  });

  it("keeps the entry on a created notice (a new prefix had no row before; its own notice arrives after the first verify)", async () => {
    const { service, feed, state, key, prefix } = await setup();
    feed.change("created", prefix);
    await service.verify(key);
    assert.equal(state.lookups, 0);
  });

  it("a reset wins over a verify in flight: its fill is not stored", async () => {
    const { service, feed, state, key } = await setup();
    feed.reset();
    const inFlight = service.verify(key); // looks up; the fill lands after the reset below
    feed.reset();
    await inFlight;
    await service.verify(key);
    assert.equal(state.lookups, 2, "the in-flight verify did not refill the cache");
  });

  it("serves cached hits only while the feed's staleness is within maxStalenessMs; then the database decides (503 when down)", async () => {
    const { service, feed, state, key, metrics, clocks } = await setup({ maxStalenessMs: 2_000 });
    // The feed was last healthy now; the database goes down.
    const lastHealthy = clocks.mono;
    state.down = true;
    const stalenessNow = () => clocks.mono - lastHealthy;
    feed.stalenessMs = 0;
    clocks.advance(1_999);
    feed.stalenessMs = stalenessNow();
    assert.ok(await service.verify(key), "within the bound: served from memory");
    clocks.advance(2);
    feed.stalenessMs = stalenessNow();
    const error = await rejection(service.verify(key));
    assert.ok(error instanceof ApiKeyStorageError, String(error));
    assert.equal(error.httpStatus, 503);
    assert.equal(metrics.at(-1)?.outcome, "error");
    assert.equal(state.lookups, 1);
    // The database is back, the feed not yet: every verify asks the database.
    state.down = false;
    await service.verify(key);
    await service.verify(key);
    assert.equal(state.lookups, 3);
    // The feed is back in sync: the entry (refilled from storage) is served again.
    feed.stalenessMs = 10;
    await service.verify(key);
    assert.equal(state.lookups, 3);
  });

  it("started during an outage (staleness Infinity), it fails closed: nothing from memory, 503", async () => {
    const { storage, state, inner } = sharedStorage();
    const maker = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: inner });
    const { key } = await maker.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const feed = new ScriptedFeed(true);
    feed.stalenessMs = Infinity;
    const { service } = follower(storage, feed);
    await service.verify(key);
    await service.verify(key);
    assert.equal(state.lookups, 2, "a feed that never synced vouches for no entry");
    assert.equal(feed.snapshots.length, 0, "nor for a prefix set");
    state.down = true;
    assert.ok((await rejection(service.verify(key))) instanceof ApiKeyStorageError);
    assert.ok((await rejection(service.verify(unknownKey()))) instanceof ApiKeyStorageError);
  });

  it("one status() reading vouches until its staleness could pass the bound, then it is read again", async () => {
    const { service, feed, key, clocks } = await setup({ maxStalenessMs: 1_000 });
    let reads = 0;
    const status = feed.status.bind(feed);
    feed.status = () => {
      reads++;
      return status();
    };
    clocks.advance(1_000); // past the window of the reading made in setup
    feed.stalenessMs = 400;
    for (let i = 0; i < 100; i++) await service.verify(key);
    assert.equal(reads, 1, "staleness 400 vouches for the next 600 ms");
    clocks.advance(599);
    await service.verify(key);
    assert.equal(reads, 1);
    clocks.advance(1);
    feed.stalenessMs = 1_000; // no sync since the reading
    await service.verify(key);
    assert.equal(reads, 2);
    clocks.advance(1);
    feed.stalenessMs = 1_001;
    await service.verify(key);
    await service.verify(key);
    assert.equal(reads, 4, "stale: read on every verify");
  });

  it("a feed whose status() throws counts as stale (one warning, never a failed verify)", async () => {
    const { service, feed, state, key, clocks } = await setup();
    clocks.advance(2_000); // past the window of the reading made in setup
    const warnings: unknown[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => warnings.push(args.join(" "));
    try {
      feed.status = () => {
        throw new Error("secret-bearing message");
      };
      await service.verify(key);
      await service.verify(key);
    } finally {
      console.warn = warn;
    }
    assert.equal(state.lookups, 2);
    assert.deepEqual(warnings, [
      "api-keys: feed.status failed (Error); further failures are not logged",
    ]);
  });
});

describe("a feed whose subscribe() fails", () => {
  /**
   * A follower over shared storage whose feed's subscribe fails `failures`
   * times (with `fail`, which throws or rejects), and two keys made elsewhere.
   */
  async function flaky(failures: number, fail: (key: string) => unknown) {
    const shared = sharedStorage();
    const maker = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: shared.inner });
    const made = (name: string) =>
      maker.create({ tenantId: "t1", name, scopes: READ_ORDERS }).then(({ id, key }) => ({
        id,
        key,
        prefix: key.split("_")[2],
      }));
    const first = await made("a");
    const second = await made("b");
    const feed = new ScriptedFeed();
    const subscribe = feed.subscribe.bind(feed);
    feed.subscribe = (listener: ApiKeyChangeListener) => {
      if (failures-- <= 0) return subscribe(listener);
      feed.subscribeCalls++;
      return fail(first.key) as () => void;
    };
    return { ...shared, ...follower(shared.storage, feed), feed, first, second };
  }

  /** Runs `body` with `console.warn` recorded; answers the lines. */
  async function warnings(body: () => Promise<void>): Promise<string[]> {
    const lines: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => lines.push(args.join(" "));
    try {
      await body();
    } finally {
      console.warn = warn;
    }
    return lines;
  }

  it("a throw is contained: nothing cached is trusted, one redacted warning, tried again a second later, then followed", async () => {
    const { service, feed, state, inner, clocks, first, second } = await flaky(2, (key) => {
      throw new Error(`feed not connected (${key})`);
    });
    const lines = await warnings(async () => {
      for (let i = 0; i < 3; i++) await service.verify(first.key);
      assert.equal(state.lookups, 3, "not subscribed: no entry is trusted");
      assert.equal(feed.subscribeCalls, 1, "not tried again on every verify");
      clocks.advance(999);
      await service.verify(second.key);
      assert.equal(feed.subscribeCalls, 1);
      clocks.advance(1);
      await service.verify(second.key);
      assert.equal(feed.subscribeCalls, 2, "tried again a second after the failure (failed again)");
      assert.equal(state.lookups, 5);
      // Revoked elsewhere while this service hears nothing: its notice is lost.
      await inner.markRevoked(first.id, new Date());
      feed.change("revoked", first.prefix);
      clocks.advance(1_000);
      assert.equal((await rejection(service.verify(first.key))).code, "api_key_revoked");
      assert.equal(feed.subscribeCalls, 3, "subscribed");
      assert.equal(state.lookups, 6, "what was cached unsubscribed is dropped once subscribed");
      await service.verify(second.key);
      await service.verify(second.key);
      assert.equal(state.lookups, 7, "subscribed and fresh: the cache serves");
      await inner.markRevoked(second.id, new Date());
      feed.change("revoked", second.prefix);
      assert.equal((await rejection(service.verify(second.key))).code, "api_key_revoked");
    });
    assert.deepEqual(lines, [
      "api-keys: feed.subscribe failed (Error); further failures are not logged",
    ]);
  });

  it("a rejection (an async subscribe) is contained the same way", async () => {
    const { service, feed, state, clocks, first } = await flaky(1, (key) => {
      return Promise.reject(new Error(`feed not connected (${key})`));
    });
    const lines = await warnings(async () => {
      await service.verify(first.key);
      await flush();
      await service.verify(first.key);
      assert.equal(state.lookups, 2);
      assert.equal(feed.subscribeCalls, 1);
      clocks.advance(1_000);
      await service.verify(first.key);
      await service.verify(first.key);
      assert.equal(feed.subscribeCalls, 2);
      assert.equal(state.lookups, 3, "subscribed: the cache serves");
    });
    assert.deepEqual(lines, [
      "api-keys: feed.subscribe failed (Error); further failures are not logged",
    ]);
  });
});

describe("the prefix set", () => {
  /** A follower whose feed has snapshots; the set loaded with `prefixes` of `inner`. */
  async function loaded(overrides: Partial<ApiKeysServiceOptions> = {}) {
    const shared = sharedStorage();
    const feed = new ScriptedFeed(true);
    const made = follower(shared.storage, feed, {
      unknownPrefixLookups: { perSecond: 0 },
      ...overrides,
    });
    const maker = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: shared.inner });
    const existing = await maker.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const prefix = existing.key.split("_")[2];
    await rejection(made.service.verify(unknownKey())); // first use: subscribes, asks a snapshot
    assert.equal(feed.snapshots.length, 1);
    feed.answer([prefix]);
    await flush();
    shared.state.lookups = 0;
    return { ...shared, ...made, feed, maker, existing, prefix };
  }

  it("rejects unknown prefixes with valid checksums without a lookup, after the same HMAC work", async () => {
    const { service, state, metrics } = await loaded();
    const subtle = crypto.subtle;
    const verify = subtle.verify;
    let hmacs = 0;
    subtle.verify = function (...args: Parameters<typeof verify>) {
      hmacs++;
      return verify.apply(subtle, args);
    } as typeof verify;
    try {
      for (let i = 0; i < 1_000; i++) {
        assert.equal((await rejection(service.verify(unknownKey()))).code, "api_key_invalid");
      }
    } finally {
      subtle.verify = verify;
    }
    assert.equal(state.lookups, 0);
    assert.equal(hmacs, 1_000, "one (dummy) HMAC verification each");
    assert.equal(metrics.at(-1)?.outcome, "invalid");
  });

  it("a prefix refused without a lookup makes no api_key.storage.lookup span; a lookup makes one", async () => {
    const { service, state, existing } = await loaded();
    const { exporter, tracerProvider } = setup();
    const telemetry = instrumentTelemetry({ tracerProvider, service });
    const lookupSpans = () =>
      exporter.getFinishedSpans().filter((s) => s.name === "api_key.storage.lookup").length;
    for (let i = 0; i < 5; i++) await rejection(service.verify(unknownKey()));
    assert.equal(state.lookups, 0);
    assert.equal(lookupSpans(), 0, "the storage was not read");
    assert.ok(await service.verify(existing.key));
    assert.equal(state.lookups, 1);
    assert.equal(lookupSpans(), 1);
    telemetry.close();
  });

  it("still looks up a known prefix (revoked keys keep theirs)", async () => {
    const { service, state, existing, maker } = await loaded();
    assert.ok(await service.verify(existing.key));
    await maker.revoke(existing.id);
    // (no notice: this test is about the set, not the cache)
    assert.equal(state.lookups, 1);
  });

  it("with no lookup budget, a created notice lets the new prefix through; deleted takes it out", async () => {
    const { service, state, feed, maker } = await loaded();
    const made = await maker.create({ tenantId: "t1", name: "k2", scopes: READ_ORDERS });
    const prefix = made.key.split("_")[2];
    assert.equal((await rejection(service.verify(made.key))).code, "api_key_invalid");
    assert.equal(state.lookups, 0, "not in the set before its notice");
    feed.change("created", prefix);
    assert.ok(await service.verify(made.key));
    assert.equal(state.lookups, 1);
    feed.change("deleted", prefix);
    assert.equal((await rejection(service.verify(made.key))).code, "api_key_invalid");
    assert.equal(state.lookups, 1);
  });

  it("holds a key this service creates or rotates at once, before any notice", async () => {
    const { service } = await loaded();
    const { id, key } = await service.create({ tenantId: "t1", name: "mine", scopes: READ_ORDERS });
    assert.ok(await service.verify(key));
    const rotated = await service.rotate(id, { gracePeriodMs: 0 });
    assert.ok(await service.verify(rotated.key));
  });

  it("holds a key this service imports at once, before any notice", async () => {
    const { service, state } = await loaded();
    const elsewhere = new InMemoryApiKeyStorage();
    const exporter = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: elsewhere });
    const { id, key } = await exporter.create({ tenantId: "t1", name: "out", scopes: READ_ORDERS });
    const record = (await elsewhere.findById(id))!;
    const result = await service.importKeys([{
      tenantId: record.tenantId,
      name: record.name,
      environment: record.environment,
      prefix: record.prefix,
      hash: record.hash,
      hashScheme: "hmac-sha256",
      pepperVersion: record.pepperVersion,
      scopes: record.scopes,
    }]);
    assert.equal(result.imported, 1);
    state.lookups = 0;
    assert.ok(await service.verify(key), "no lookup budget: accepted only if in the set");
    assert.equal(state.lookups, 1);
  });

  it("is not trusted while the feed is stale, and is dropped by a reset until a new snapshot", async () => {
    const { service, state, feed, clocks } = await loaded({ maxStalenessMs: 1_000 });
    clocks.advance(1_001);
    feed.stalenessMs = 1_001; // no sync since the set was loaded
    await rejection(service.verify(unknownKey()));
    assert.equal(state.lookups, 1, "stale: looked up");
    feed.stalenessMs = 0;
    await rejection(service.verify(unknownKey()));
    assert.equal(state.lookups, 1, "fresh again: the set answers");

    feed.reset();
    await rejection(service.verify(unknownKey()));
    assert.equal(state.lookups, 2, "after a reset: looked up");
    assert.equal(feed.snapshots.length, 1, "and a new snapshot asked for");
    feed.snapshots.shift()!.reject(new Error("not in sync"));
    await flush();
    await rejection(service.verify(unknownKey()));
    assert.equal(feed.snapshots.length, 0, "a failed snapshot is not asked again at once");
    clocks.advance(1_000);
    await rejection(service.verify(unknownKey()));
    assert.equal(feed.snapshots.length, 1, "but a second later");
    feed.answer([]);
    await flush();
    state.lookups = 0;
    await rejection(service.verify(unknownKey()));
    assert.equal(state.lookups, 0);
  });

  it("applies the changes delivered while its snapshot was read, and only those newer than it", async () => {
    const { storage, state } = sharedStorage();
    const feed = new ScriptedFeed(true);
    const { service } = follower(storage, feed, { unknownPrefixLookups: { perSecond: 0 } });
    await rejection(service.verify(unknownKey()));
    // While the snapshot is read: A created (counter 1, in the snapshot), A deleted (2, not in it),
    // B created (3, not in it).
    feed.change("created", "PrefixAAAAAA");
    feed.change("deleted", "PrefixAAAAAA");
    feed.change("created", "PrefixBBBBBB");
    feed.answer(["PrefixAAAAAA"], 1);
    await flush();
    const keyWith = (prefix: string) => keyOf(prefix, "S".repeat(32));
    state.lookups = 0;
    await rejection(service.verify(keyWith("PrefixAAAAAA")));
    assert.equal(state.lookups, 0, "deleted after the snapshot: out");
    await rejection(service.verify(keyWith("PrefixBBBBBB")));
    assert.equal(state.lookups, 1, "created after the snapshot: in");
  });

  it("discards a snapshot older than a reset delivered while it was read", async () => {
    const { storage, state } = sharedStorage();
    const feed = new ScriptedFeed(true);
    const { service } = follower(storage, feed, { unknownPrefixLookups: { perSecond: 0 } });
    await rejection(service.verify(unknownKey()));
    feed.counter = 5;
    feed.reset(); // covers up to 5: a snapshot at 4 may miss a change
    feed.answer([], 4);
    await flush();
    state.lookups = 0;
    await rejection(service.verify(unknownKey()));
    assert.equal(state.lookups, 1, "the old snapshot was not used");
    assert.equal(feed.snapshots.length, 1, "a new one was asked for at once");
    feed.answer([], 5);
    await flush();
    await rejection(service.verify(unknownKey()));
    assert.equal(state.lookups, 1);
  });
});

describe("unknownPrefixLookups: a miss in the prefix set within a per-instance budget", () => {
  async function loaded(overrides: Partial<ApiKeysServiceOptions> = {}) {
    const shared = sharedStorage();
    const feed = new ScriptedFeed(true);
    const made = follower(shared.storage, feed, overrides);
    const maker = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: shared.inner });
    await made.service.verify(unknownKey()).catch(() => {}); // subscribes, asks a snapshot
    feed.answer([]);
    await flush();
    shared.state.lookups = 0;
    return { ...shared, ...made, feed, maker };
  }

  it("a key created on another instance is accepted at once, before its created notice", async () => {
    const { service, state, maker } = await loaded();
    const made = await maker.create({ tenantId: "t1", name: "new", scopes: READ_ORDERS });
    assert.equal((await service.verify(made.key)).keyId, made.id);
    assert.equal(state.lookups, 1);
  });

  it("a flood of unknown prefixes costs at most perSecond lookups a second (default 10)", async () => {
    const { service, state, clocks } = await loaded({ unknownPrefixLookups: { perSecond: 5 } });
    const flood = async (count: number) => {
      for (let i = 0; i < count; i++) {
        assert.equal((await rejection(service.verify(unknownKey()))).code, "api_key_invalid");
      }
    };
    await flood(100);
    assert.equal(state.lookups, 5, "the budget, then the set alone");
    clocks.advance(200);
    await flood(100);
    assert.equal(state.lookups, 6, "one more after 200 ms at 5 a second");
    clocks.advance(60_000);
    await flood(100);
    assert.equal(state.lookups, 11, "an idle minute refills no more than one second's budget");

    const byDefault = await loaded();
    for (let i = 0; i < 100; i++) await rejection(byDefault.service.verify(unknownKey()));
    assert.equal(byDefault.state.lookups, 10);
  });

  it("is validated, and needs a feed", () => {
    const base = { peppers: { 1: PEPPER_1 }, storage: new InMemoryApiKeyStorage() };
    const feed = new InMemoryApiKeyChangeFeed();
    for (
      const value of [null, 5, {}, { perSecond: -1 }, { perSecond: 1.5 }, { perSecond: 10_001 }]
    ) {
      assert.throws(
        () => compileSettings({ ...base, feed, unknownPrefixLookups: value as never }),
        (error: unknown) =>
          error instanceof TypeError && /unknownPrefixLookups/.test(error.message),
        JSON.stringify(value),
      );
    }
    assert.throws(
      () => compileSettings({ ...base, unknownPrefixLookups: { perSecond: 1 } }),
      /ApiKeysServiceOptions\.unknownPrefixLookups needs a feed/,
    );
    compileSettings({ ...base, feed, unknownPrefixLookups: { perSecond: 0 } });
  });
});

describe("services over one in-memory storage and one InMemoryApiKeyChangeFeed", () => {
  function fleet(withFeed: boolean) {
    const storage = new InMemoryApiKeyStorage();
    const feed = new InMemoryApiKeyChangeFeed();
    const services = [0, 1, 2].map(() =>
      new ApiKeysService({
        peppers: { 1: PEPPER_1 },
        storage,
        ...(withFeed ? { feed } : {}),
      })
    );
    return { services, feed };
  }

  it("publish after each write: create → created, revoke → revoked, rotate → created + rotated", async () => {
    const { services: [a], feed } = fleet(true);
    const seen: ApiKeyChangeNotice[] = [];
    feed.subscribe((notice) => {
      seen.push(notice);
    });
    const { id, key } = await a.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const rotated = await a.rotate(id);
    await a.revoke(rotated.id);
    await a.revoke(rotated.id); // already revoked: nothing written, nothing published
    const prefixOf = (raw: string) => raw.split("_")[2];
    assert.deepEqual(seen.map(({ kind, prefix }) => [kind, prefix]), [
      ["created", prefixOf(key)],
      ["created", prefixOf(rotated.key)],
      ["rotated", prefixOf(key)],
      ["revoked", prefixOf(rotated.key)],
    ]);
  });

  for (const withFeed of [true, false]) {
    it(
      `revoke and rotate (grace 0) on one service hold on the others at once ${
        withFeed ? "with" : "(control: not without)"
      } the feed`,
      async () => {
        const { services: [a, b, c] } = fleet(withFeed);
        const first = await a.create({ tenantId: "t1", name: "k1", scopes: READ_ORDERS });
        const second = await a.create({ tenantId: "t1", name: "k2", scopes: READ_ORDERS });
        for (const service of [b, c]) {
          await service.verify(first.key);
          await service.verify(second.key);
        }
        await a.revoke(first.id);
        await a.rotate(second.id, { gracePeriodMs: 0 });
        for (const service of [b, c]) {
          const revoked = await service.verify(first.key).then(() => "accepted", (e) => e.code);
          const rotated = await service.verify(second.key).then(() => "accepted", (e) => e.code);
          if (withFeed) {
            assert.equal(revoked, "api_key_revoked");
            assert.equal(rotated, "api_key_expired");
          } else {
            assert.equal(revoked, "accepted", "without a feed the cache answers");
            assert.equal(rotated, "accepted");
          }
        }
      },
    );
  }

  it("a rotation with gracePeriodMs 0 holds at once on an instance whose clock is behind the rotating one's; a grace's end is judged on each instance's clock", async () => {
    const storage = new InMemoryApiKeyStorage();
    const feed = new InMemoryApiKeyChangeFeed();
    const clocks = new FakeClocks();
    const instance = (behindMs: number, cache?: false) =>
      new ApiKeysService({
        peppers: { 1: PEPPER_1 },
        storage,
        feed,
        clock: () => new Date(clocks.now - behindMs),
        monotonicClock: clocks.monotonicClock,
        ...(cache === false ? { cache } : {}),
      });
    const a = instance(0);
    const behind = [instance(5_000), instance(5_000, false)]; // with its cache, and without
    const codeOf = (service: ApiKeysService, key: string) =>
      service.verify(key).then(() => "accepted", (error) => error.code);
    const first = await a.create({ tenantId: "t1", name: "k1", scopes: READ_ORDERS });
    for (const service of behind) assert.equal(await codeOf(service, first.key), "accepted");
    await a.rotate(first.id, { gracePeriodMs: 0 });
    for (const service of [a, ...behind]) {
      assert.equal(await codeOf(service, first.key), "api_key_expired");
      assert.equal(await codeOf(service, first.key), "api_key_expired", "from the cache too");
    }
    // With a grace, its end is a time: each instance reaches it on its own clock.
    const second = await a.create({ tenantId: "t1", name: "k2", scopes: READ_ORDERS });
    await a.rotate(second.id, { gracePeriodMs: 1_000 });
    clocks.advance(1_000);
    assert.equal(await codeOf(a, second.key), "api_key_expired");
    for (const service of behind) assert.equal(await codeOf(service, second.key), "accepted");
    clocks.advance(5_000);
    for (const service of behind) {
      assert.equal(await codeOf(service, second.key), "api_key_expired");
    }
  });

  it("a publish that throws is contained: the write stands, one warning", async () => {
    const storage = new InMemoryApiKeyStorage();
    const feed = new InMemoryApiKeyChangeFeed();
    feed.publish = () => {
      throw new Error("boom");
    };
    const service = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage, feed });
    const warnings: unknown[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => warnings.push(args.join(" "));
    try {
      const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      assert.ok(await service.verify(key));
      await service.create({ tenantId: "t1", name: "k2", scopes: READ_ORDERS });
    } finally {
      console.warn = warn;
    }
    assert.deepEqual(warnings, [
      "api-keys: feed.publish failed (Error); further failures are not logged",
    ]);
  });

  it("after the feed closes, nothing is served from memory past maxStalenessMs of the last reading", async () => {
    const { storage: counted, state } = sharedStorage(new InMemoryApiKeyStorage());
    const feed = new InMemoryApiKeyChangeFeed();
    const { service, clocks } = follower(counted, feed);
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    await service.verify(key);
    await service.verify(key);
    assert.equal(state.lookups, 1);
    await feed.close();
    clocks.advance(2_000);
    await service.verify(key);
    await service.verify(key);
    assert.equal(state.lookups, 3);
  });
});
