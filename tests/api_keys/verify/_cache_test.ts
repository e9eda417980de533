/**
 * The verification cache against revoke and rotate: an invalidation wins over
 * a verify already in flight (generation number), shown by a deterministic
 * interleaving with a storage lookup held open while the revoke or rotate
 * completes.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeyError,
  type ApiKeyRecord,
  ApiKeysService,
  InMemoryApiKeyStorage,
} from "../../../api_keys/mod.ts";
import { VerificationCache } from "../../../api_keys/verify/_cache.ts";
import type { ApiKeyContext } from "../../../api_keys/types.ts";
import { overrideStorage, PEPPER_1, READ_ORDERS, rejection } from "../helpers.ts";

/** A cached service over a storage whose next `findByPrefix` can be held open. */
function heldLookupService() {
  const inner = new InMemoryApiKeyStorage();
  let holdNext = false;
  let release: (() => void) | undefined;
  const counts = { lookups: 0 };
  const storage = overrideStorage(inner, {
    findByPrefix: (prefix: string) => {
      counts.lookups++;
      const lookup = inner.findByPrefix(prefix); // read now, answered when released
      if (!holdNext) return lookup;
      holdNext = false;
      return new Promise<ApiKeyRecord | null>((resolve) => {
        release = () => resolve(lookup);
      });
    },
  });
  const service = new ApiKeysService({
    peppers: { 1: PEPPER_1 },
    storage,
    cache: { ttlMs: 60_000 },
  });
  return {
    service,
    counts,
    /** Starts a verify whose storage lookup is held until `release()`. */
    verifyHeld(key: string): { result: Promise<ApiKeyContext>; release: () => void } {
      holdNext = true;
      release = undefined;
      const result = service.verify(key);
      assert.ok(release !== undefined, "the lookup did not start synchronously");
      return { result, release };
    },
  };
}

describe("verification cache and key management", () => {
  it("a verify in flight during revoke() does not re-fill the cache", async () => {
    const { service, verifyHeld } = heldLookupService();
    const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const inFlight = verifyHeld(key);
    await service.revoke(id);
    inFlight.release();
    // It read the record before the revoke: accepted, but must not be cached.
    assert.equal((await inFlight.result).keyId, id);
    const error = await rejection(service.verify(key));
    assert.ok(error instanceof ApiKeyError);
    assert.equal(error.code, "api_key_revoked");
  });

  it("a verify in flight during rotate() does not re-fill the cache", async () => {
    const { service, verifyHeld } = heldLookupService();
    const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const inFlight = verifyHeld(key);
    await service.rotate(id, { gracePeriodMs: 0 });
    inFlight.release();
    assert.equal((await inFlight.result).keyId, id);
    const error = await rejection(service.verify(key));
    assert.ok(error instanceof ApiKeyError);
    assert.equal(error.code, "api_key_expired");
  });

  it("a verify that started after the revoke fills the cache as usual", async () => {
    const { service, counts } = heldLookupService();
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const other = await service.create({ tenantId: "t1", name: "o", scopes: READ_ORDERS });
    await service.revoke(other.id);
    await service.verify(key);
    const lookups = counts.lookups;
    assert.equal((await service.verify(key)).tenantId, "t1");
    assert.equal(counts.lookups, lookups, "the second verify was not served from the cache");
  });
});

describe("VerificationCache generations", () => {
  const entry = (secret: string) => ({
    secret,
    context: {} as ApiKeyContext,
    expiresAtMs: Infinity,
    cachedUntil: Infinity,
  });

  it("a fill read at an older generation is dropped", () => {
    const cache = new VerificationCache(10, 60_000);
    const generation = cache.generation;
    cache.invalidate("AAAAAAAAAAAA");
    assert.notEqual(cache.generation, generation);
    assert.equal(cache.set("BBBBBBBBBBBB", entry("s"), generation), false);
    assert.equal(cache.get("BBBBBBBBBBBB"), undefined);
    assert.equal(cache.set("BBBBBBBBBBBB", entry("s"), cache.generation), true);
    assert.equal(cache.get("BBBBBBBBBBBB")?.secret, "s");
  });

  it("invalidate drops the entry and every fill read before it", () => {
    const cache = new VerificationCache(10, 60_000);
    const generation = cache.generation;
    assert.equal(cache.set("AAAAAAAAAAAA", entry("s"), generation), true);
    cache.invalidate("AAAAAAAAAAAA");
    assert.equal(cache.get("AAAAAAAAAAAA"), undefined);
    assert.equal(cache.set("AAAAAAAAAAAA", entry("s"), generation), false);
  });
});

describe("VerificationCache order and bound", () => {
  const entry = (secret: string) => ({
    secret,
    context: {} as ApiKeyContext,
    expiresAtMs: Infinity,
    cachedUntil: Infinity,
  });
  const prefix = (i: number) => `P${String(i).padStart(11, "0")}`;

  it("evicts the least recently used entry: a touch or a refill makes an entry the most recent", () => {
    const cache = new VerificationCache(3, 60_000);
    for (const i of [1, 2, 3]) cache.set(prefix(i), entry(`s${i}`), cache.generation);
    cache.touch(prefix(1)); // order: 2, 3, 1
    cache.set(prefix(2), entry("s2b"), cache.generation); // order: 3, 1, 2
    cache.set(prefix(4), entry("s4"), cache.generation); // evicts 3
    assert.equal(cache.size, 3);
    assert.equal(cache.get(prefix(3)), undefined);
    assert.equal(cache.get(prefix(2))?.secret, "s2b");
    cache.invalidate(prefix(1)); // order: 2, 4
    for (const i of [5, 6]) cache.set(prefix(i), entry(`s${i}`), cache.generation); // evicts 2
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((i) => cache.get(prefix(i)) !== undefined), [
      false,
      false,
      false,
      true,
      true,
      true,
    ]);
    cache.clear();
    assert.equal(cache.size, 0);
    cache.set(prefix(7), entry("s7"), cache.generation);
    assert.equal(cache.get(prefix(7))?.secret, "s7");
  });

  it("a hit (touch) neither deletes nor re-inserts in a Map: V8 makes that cost grow with the size", () => {
    const cache = new VerificationCache(10_000, 60_000);
    for (let i = 0; i < 5_000; i++) cache.set(prefix(i), entry("s"), cache.generation);
    const { delete: remove, set } = Map.prototype;
    let mutations = 0;
    Map.prototype.delete = function (this: Map<unknown, unknown>, key: unknown) {
      mutations++;
      return remove.call(this, key);
    };
    Map.prototype.set = function (this: Map<unknown, unknown>, key: unknown, value: unknown) {
      mutations++;
      return set.call(this, key, value);
    };
    try {
      for (let i = 0; i < 100; i++) cache.touch(prefix(i));
    } finally {
      Map.prototype.delete = remove;
      Map.prototype.set = set;
    }
    assert.equal(mutations, 0);
  });
});
