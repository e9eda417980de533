/**
 * Structural timing test: every verify failure path of a key-shaped input
 * whose secret is not proven does the same work in the same order, cache hits
 * and legacy records (legacy layouts and hash schemes) included: the same
 * hasher call (operation, key, byte lengths), the same synchronous SHA-256
 * work (hashes finished and blocks compressed, counted on `@noble/hashes`'
 * SHA-256 class: the legacy digests), the same storage step, the same number
 * of awaits (microtask turns with every step answering at once).
 * An unknown prefix that a change feed's prefix set refuses does the same
 * work but the lookup. Measured times are printed, never asserted; the
 * statistics are a `deno task bench` row (bench/core.ts).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { sha256 } from "@noble/hashes/sha2";
import {
  API_KEY_STORAGE_METHODS,
  ApiKeyError,
  ApiKeysService,
  type ApiKeyStorage,
  InMemoryApiKeyStorage,
  parseKey,
} from "../../api_keys/mod.ts";
import { VerificationCache } from "../../api_keys/verify/_cache.ts";
import { keyOf } from "./hostile_inputs.ts";
import { flush, ScriptedFeed } from "../api_keys/verify/fake_feed.ts";
import { legacyRecord, nestarcHash, nestarcKey, plainSha256 } from "../api_keys/verify/nestarc.ts";
import {
  type HashCall,
  PEPPER_1,
  PEPPER_2,
  spyHasher,
  spyStorage,
  turnsToSettle,
} from "./harness.ts";

const SCOPES = [{ resource: "orders", level: "read" as const }];
/** An old deployment's pepper, shorter than the current one (a block fewer to compress). */
const SHORT_PEPPER = "old-pepper-short";

/** A nestarc-v0 key with its secret's last character changed (no checksum to keep). */
function withWrongLegacySecret(raw: string): string {
  return raw.slice(0, -1) + (raw.endsWith("Q") ? "R" : "Q");
}

/** Same prefix, different secret, valid checksum. */
function withWrongSecret(key: string): string {
  const { prefix, secret, environment } = parseKey(key)!;
  return keyOf(prefix, (secret[0] === "Q" ? "R" : "Q") + secret.slice(1), environment);
}

/** What one verification did, in order. */
interface Trace {
  code: string;
  cache: string[];
  storage: string[];
  hasher: Omit<HashCall, "key">[];
  keys: CryptoKey[];
  /** Synchronous SHA-256 work, sorted (counted): `digest` per hash finished, `block` per compression. */
  sha256: string[];
  turns: number;
}

/** SHA-256 work of `@noble/hashes` (the legacy digests), in order. */
const sha256Calls: string[] = [];
{
  const prototype = Object.getPrototypeOf(sha256.create()) as Record<string, unknown>;
  const process = prototype.process as (...args: unknown[]) => unknown;
  const digestInto = prototype.digestInto as (...args: unknown[]) => unknown;
  Object.defineProperty(prototype, "process", {
    value: function (this: unknown, ...args: unknown[]) {
      sha256Calls.push("block");
      return process.apply(this, args);
    },
  });
  Object.defineProperty(prototype, "digestInto", {
    value: function (this: { length: number }, ...args: unknown[]) {
      sha256Calls.push("digest");
      return digestInto.apply(this, args);
    },
  });
}

/** Calls to the verification cache (any instance), by method name. */
const cacheCalls: string[] = [];
for (const method of ["get", "set", "invalidate"] as const) {
  const original = VerificationCache.prototype[method] as (...args: unknown[]) => unknown;
  Object.defineProperty(VerificationCache.prototype, method, {
    value: function (this: VerificationCache, ...args: unknown[]) {
      cacheCalls.push(method);
      return original.apply(this, args);
    },
  });
}

/** A storage under test, the record store behind it, and the lookups it has seen. */
interface Shape {
  inner: InMemoryApiKeyStorage;
  storage: ApiKeyStorage;
  /** Storage steps since `reset`: method and prefix length (`touchLastUsed` left out). */
  steps(): string[];
  reset(): void;
}

/**
 * The two storage shapes a verify meets: an `InMemoryApiKeyStorage` (read
 * synchronously through `peekByPrefix`; its lookup counted) and an
 * asynchronous one (the spec's seven operations of a spy proxy, no capability).
 */
function shapes(): Record<string, Shape> {
  const synchronous = new InMemoryApiKeyStorage();
  const lookups: string[] = [];
  const peek = synchronous.peekByPrefix.bind(synchronous);
  Object.defineProperty(synchronous, "peekByPrefix", {
    value: (prefix: string) => {
      lookups.push(`lookup ${prefix.length}`);
      return peek(prefix);
    },
  });
  const asyncInner = new InMemoryApiKeyStorage();
  const { storage: spy, calls } = spyStorage(asyncInner);
  const storage = Object.fromEntries(
    API_KEY_STORAGE_METHODS.map((method) => [method, spy[method].bind(spy)]),
  ) as unknown as ApiKeyStorage;
  return {
    "in-process storage": {
      inner: synchronous,
      storage: synchronous,
      steps: () => [...lookups],
      reset: () => lookups.length = 0,
    },
    "asynchronous storage": {
      inner: asyncInner,
      storage,
      steps: () =>
        calls.filter((c) => c.method !== "touchLastUsed").map((c) =>
          `${c.method} ${(c.args[0] as string).length}`
        ),
      reset: () => calls.length = 0,
    },
  };
}

for (const [shape, { inner, storage, steps, reset }] of Object.entries(shapes())) {
  describe(`verify failure paths are structurally alike (${shape})`, () => {
    const paths: Record<string, string> = {};
    let service: ApiKeysService;
    const warn = console.warn;
    after(() => {
      console.warn = warn;
    });

    before(async () => {
      // Keys hashed with pepper 2, which the verifying service no longer has (retired).
      const old = new ApiKeysService({ peppers: { 1: PEPPER_1, 2: PEPPER_2 }, storage: inner });
      const retired = await old.create({ tenantId: "t", name: "retired", scopes: SCOPES });
      service = new ApiKeysService({
        // The old deployment's pepper, kept as version 3, shorter than the current one.
        peppers: { 1: PEPPER_1, 3: SHORT_PEPPER },
        currentPepperVersion: 1,
        storage,
        cache: { ttlMs: 60_000 },
        legacyKeyLayouts: ["nestarc-v0"],
      });
      // Imported records of the legacy schemes, with nestarc-v0 keys.
      const peppered = nestarcKey("ak");
      const plain = nestarcKey("ak");
      const retiredLegacy = nestarcKey("ak");
      await inner.insert(legacyRecord(peppered, nestarcHash(peppered.secret, PEPPER_1), {
        hashScheme: "sha256-pepper",
      }));
      await inner.insert(legacyRecord(plain, plainSha256(plain.secret), {
        hashScheme: "sha256",
        pepperVersion: 0,
      }));
      await inner.insert(legacyRecord(retiredLegacy, nestarcHash(retiredLegacy.secret, PEPPER_2), {
        hashScheme: "sha256-pepper",
        pepperVersion: 2,
      }));
      const shortPeppered = nestarcKey("ak");
      await inner.insert(
        legacyRecord(shortPeppered, nestarcHash(shortPeppered.secret, SHORT_PEPPER), {
          hashScheme: "sha256-pepper",
          pepperVersion: 3,
        }),
      );
      const cached = await service.create({ tenantId: "t", name: "cached", scopes: SCOPES });
      const active = await service.create({ tenantId: "t", name: "active", scopes: SCOPES });
      const revoked = await service.create({ tenantId: "t", name: "revoked", scopes: SCOPES });
      await service.revoke(revoked.id);
      await service.verify(cached.key); // cached: a wrong secret must still cost the full path
      console.warn = () => {}; // the retired-pepper warning
      paths["unknown prefix"] = keyOf("UnknownPref1", "S".repeat(32));
      paths["wrong secret"] = withWrongSecret(active.key);
      paths["wrong secret, cached prefix"] = withWrongSecret(cached.key);
      paths["revoked, wrong secret"] = withWrongSecret(revoked.key);
      paths["retired pepper"] = retired.key;
      paths["retired pepper, wrong secret"] = withWrongSecret(retired.key);
      paths["legacy layout, unknown prefix"] = nestarcKey("ak").raw;
      paths["sha256-pepper record, wrong secret"] = withWrongLegacySecret(peppered.raw);
      paths["sha256 record, wrong secret"] = withWrongLegacySecret(plain.raw);
      paths["sha256-pepper record, retired pepper"] = retiredLegacy.raw;
      paths["sha256-pepper record, shorter pepper, wrong secret"] = withWrongLegacySecret(
        shortPeppered.raw,
      );
      // Warm up: the hasher's keys are imported, the retired warning given.
      for (const key of Object.values(paths)) await service.verify(key).catch(() => {});
    });

    /** Verifies `key` with a hasher answering `false` at once, recording what it did. */
    async function trace(key: string): Promise<Trace> {
      reset();
      cacheCalls.length = 0;
      sha256Calls.length = 0;
      const hasher = spyHasher(false);
      try {
        const verification = service.verify(key);
        const turns = await turnsToSettle(verification);
        const error = await verification.then(() => null, (e) => e);
        assert.ok(error instanceof ApiKeyError, String(error));
        return {
          code: error.code,
          cache: [...cacheCalls],
          storage: steps(),
          hasher: hasher.calls.map(({ key: _, ...call }) => call),
          keys: hasher.calls.map((c) => c.key),
          // Counted, not in order: a shorter pepper's digest compresses a block fewer, its
          // discarded hash of zeros a block more.
          sha256: [...sha256Calls].sort(),
          turns,
        };
      } finally {
        hasher.restore();
      }
    }

    it("each path: one lookup, one HMAC verification with the same key and lengths, the same SHA-256 work, the same awaits, api_key_invalid", async () => {
      const reference = await trace(paths["unknown prefix"]);
      assert.deepEqual(reference.hasher, [{
        operation: "verify",
        dataBytes: 32,
        signatureBytes: 32,
      }]);
      assert.equal(reference.storage.length, 1);
      assert.ok(reference.turns < 1_000, "the verification did not settle");
      for (const [name, key] of Object.entries(paths)) {
        for (let round = 0; round < 3; round++) {
          const seen = await trace(key);
          assert.equal(seen.code, "api_key_invalid", name);
          assert.deepEqual(seen.cache, reference.cache, `${name}: cache steps`);
          assert.deepEqual(seen.storage, reference.storage, `${name}: storage steps`);
          assert.deepEqual(seen.hasher, reference.hasher, `${name}: hasher calls`);
          assert.equal(seen.keys[0], reference.keys[0], `${name}: HMAC key`);
          assert.deepEqual(seen.sha256, reference.sha256, `${name}: SHA-256 work`);
          assert.equal(seen.turns, reference.turns, `${name}: awaits (microtask turns)`);
        }
      }
    });

    it("prints the measured time of each path (not asserted)", async () => {
      const rounds = 2_000;
      const lines: string[] = [];
      for (const [name, key] of Object.entries(paths)) {
        const samples: number[] = [];
        for (let i = 0; i < rounds; i++) {
          const start = performance.now();
          await service.verify(key).catch(() => {});
          samples.push(performance.now() - start);
        }
        samples.sort((a, b) => a - b);
        const at = (q: number) => (samples[Math.floor(q * (samples.length - 1))] * 1000).toFixed(1);
        lines.push(
          `# ${shape}: failure path ${name.padEnd(36)} median ${at(0.5)} µs  p90 ${at(0.9)} µs`,
        );
      }
      console.log(lines.join("\n"));
      assert.equal(lines.length, Object.keys(paths).length);
    });
  });
}

describe("an unknown prefix refused by a feed's prefix set does a wrong secret's work but the lookup", () => {
  const { inner, storage, steps, reset } = shapes()["asynchronous storage"];
  const feed = new ScriptedFeed(true);
  let service: ApiKeysService;
  const paths: Record<string, string> = {};
  const info = console.info;
  after(() => {
    console.info = info;
  });

  before(async () => {
    console.info = () => {}; // the storage-capability line
    service = new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage,
      feed,
      unknownPrefixLookups: { perSecond: 0 }, // the set alone refuses: no lookup budget
    });
    const cached = await service.create({ tenantId: "t", name: "cached", scopes: SCOPES });
    const active = await service.create({ tenantId: "t", name: "active", scopes: SCOPES });
    await service.verify(cached.key);
    feed.answer((await inner.listByTenant("t")).map((record) => record.prefix));
    await flush();
    paths["unknown prefix (refused by the set)"] = keyOf("UnknownPref1", "S".repeat(32));
    paths["wrong secret"] = withWrongSecret(active.key);
    paths["wrong secret, cached prefix"] = withWrongSecret(cached.key);
    for (const key of Object.values(paths)) await service.verify(key).catch(() => {});
  });

  async function trace(key: string): Promise<Omit<Trace, "turns" | "sha256">> {
    reset();
    cacheCalls.length = 0;
    const hasher = spyHasher(false);
    try {
      const error = await service.verify(key).then(() => null, (e) => e);
      assert.ok(error instanceof ApiKeyError, String(error));
      return {
        code: error.code,
        cache: [...cacheCalls],
        storage: steps(),
        hasher: hasher.calls.map(({ key: _, ...call }) => call),
        keys: hasher.calls.map((c) => c.key),
      };
    } finally {
      hasher.restore();
    }
  }

  it("the same cache comparison and HMAC verification (key, lengths), api_key_invalid; no lookup", async () => {
    const refused = await trace(paths["unknown prefix (refused by the set)"]);
    assert.deepEqual(refused.storage, [], "the set answered: no storage call");
    for (const name of ["wrong secret", "wrong secret, cached prefix"]) {
      const seen = await trace(paths[name]);
      assert.deepEqual(seen.storage, ["findByPrefix 12"], `${name}: one lookup`);
      assert.equal(seen.code, refused.code, name);
      assert.deepEqual(seen.cache, refused.cache, `${name}: cache steps`);
      assert.deepEqual(seen.hasher, refused.hasher, `${name}: hasher calls`);
      assert.equal(seen.keys[0], refused.keys[0], `${name}: HMAC key`);
    }
    assert.equal(refused.code, "api_key_invalid");
    assert.equal(refused.hasher.length, 1);
  });
});
