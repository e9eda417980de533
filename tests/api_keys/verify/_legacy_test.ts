/**
 * Bring your keys: legacy key layouts and hash schemes in the verify flow,
 * upgrade on use, the hash report and the retirement check, on the service
 * with in-memory storage (the same on PostgreSQL: tests/postgres/legacy_test.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ApiKeyRecord,
  ApiKeyStorageError,
  InMemoryApiKeyStorage,
  parseKey,
  Sha256Hasher,
} from "../../../api_keys/mod.ts";
import { validateRetiredVersions } from "../../../api_keys/verify/_legacy.ts";
import { importNestarcKey, legacyRecord, nestarcHash, nestarcKey, plainSha256 } from "./nestarc.ts";
import { crc32Ascii } from "../../../api_keys/key_format.ts";
import { encodeBase62Fixed } from "../../../api_keys/_base62.ts";
import { makeService, overrideStorage, PEPPER_1, PEPPER_2, spyStorage } from "../helpers.ts";
import { spyHasher } from "../../reliability/harness.ts";
import { sha256 } from "@noble/hashes/sha2";
import { eventually } from "../../eventually.ts";

const LEGACY = { namespace: "ak", legacyKeyLayouts: ["nestarc-v0" as const] }; // the keys are ak_…
const READ = [{ resource: "orders", level: "read" as const }];

/** Counts `crypto.subtle` calls (the hasher's primitives). */
function countSubtle() {
  const subtle = crypto.subtle as unknown as Record<string, (...args: unknown[]) => unknown>;
  const originals = { sign: subtle.sign, verify: subtle.verify };
  const counter = {
    calls: 0,
    restore: () => Object.assign(subtle, originals),
  };
  for (const name of ["sign", "verify"] as const) {
    subtle[name] = function (this: unknown, ...args: unknown[]) {
      counter.calls++;
      return originals[name].apply(this, args);
    };
  }
  return counter;
}

describe("legacy key layouts in the verify flow", () => {
  it("a nestarc-v0 key is parsed into its prefix and secret and looked up like any other", async () => {
    const storage = new InMemoryApiKeyStorage();
    const key = nestarcKey("ak", "test");
    const { hash } = await new Sha256Hasher({ peppers: { 1: PEPPER_1 } }).hash(key.secret);
    await storage.insert(legacyRecord(key, hash, { id: "k-layout" }));
    const { service } = makeService({ storage, ...LEGACY });
    const context = await service.verify(key.raw);
    assert.equal(context.keyId, "k-layout");
    assert.equal(context.environment, "test");
    const viaHeader = await service.authorizeRequest(
      (name) => name === "authorization" ? `Bearer ${key.raw}` : undefined,
    );
    assert.equal(viaHeader.keyId, "k-layout");
  });

  it("without the option a legacy key is malformed: no storage or hasher call", async () => {
    const { storage, calls } = spyStorage();
    const { service } = makeService({ storage, cache: false });
    const subtle = countSubtle();
    try {
      await assert.rejects(service.verify(nestarcKey("ak").raw), { code: "api_key_malformed" });
    } finally {
      subtle.restore();
    }
    assert.deepEqual(calls, []);
    assert.equal(subtle.calls, 0);
  });

  it("with the option, malformed input still costs no storage or hasher call", async () => {
    const { storage, calls } = spyStorage();
    const { service } = makeService({ storage, cache: false, ...LEGACY });
    const { raw } = nestarcKey("ak");
    const subtle = countSubtle();
    try {
      for (
        const bad of [
          raw + "x",
          raw.slice(0, -1),
          raw.replace("ak_", "zz_"),
          raw.replace("_live_", "_prod_"),
          raw.slice(0, 25) + "$" + raw.slice(26),
          "x".repeat(10_000),
        ]
      ) {
        await assert.rejects(service.verify(bad), { code: "api_key_malformed" }, bad);
      }
    } finally {
      subtle.restore();
    }
    assert.deepEqual(calls, []);
    assert.equal(subtle.calls, 0);
  });

  it("new keys are always issued in the current layout", async () => {
    const { service } = makeService(LEGACY);
    const { key } = await service.create({
      tenantId: "t",
      name: "n",
      scopes: [{ resource: "orders", level: "read" }],
    });
    assert.notEqual(parseKey(key), null);
  });

  it("an invalid layout stops the service from being built, naming the option", () => {
    assert.throws(
      () => makeService({ legacyKeyLayouts: ["nestarc-v1" as never] }),
      /ApiKeysServiceOptions\.legacyKeyLayouts\[0\] is an unknown layout/,
    );
  });
});

/** A storage holding `records`. */
async function storageWith(...records: ApiKeyRecord[]): Promise<InMemoryApiKeyStorage> {
  const storage = new InMemoryApiKeyStorage();
  for (const record of records) await storage.insert(record);
  return storage;
}

/** `raw` with the current layout's checksum appended. */
const withChecksum = (raw: string) => raw + encodeBase62Fixed(crc32Ascii(raw), 6);

describe("the layout is bound to the record (storesLayout)", () => {
  it("a current key with its checksum cut off does not verify, warm cache or not", async () => {
    for (const cache of [undefined, false] as const) {
      const { service } = makeService({ ...LEGACY, cache });
      const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ });
      assert.equal((await service.verify(key)).tenantId, "t1");
      await assert.rejects(service.verify(key.slice(0, -6)), { code: "api_key_invalid" });
      assert.equal((await service.verify(key)).tenantId, "t1");
    }
  });

  it("an imported legacy key with a CRC appended does not verify, before and after its hash is upgraded", async () => {
    const storage = new InMemoryApiKeyStorage();
    const { service } = makeService({ storage, ...LEGACY, peppers: { 1: PEPPER_1, 2: PEPPER_2 } });
    const key = await importNestarcKey(service, PEPPER_1);
    assert.equal((await storage.findByPrefix(key.prefix))?.layout, "nestarc-v0");
    await assert.rejects(service.verify(withChecksum(key.raw)), { code: "api_key_invalid" });
    assert.equal((await service.verify(key.raw)).tenantId, "t1");
    await eventually(
      async () => (await storage.findByPrefix(key.prefix))?.pepperVersion === 2,
      "the hash upgraded",
    );
    const upgraded = (await storage.findByPrefix(key.prefix))!;
    assert.deepEqual([upgraded.hashScheme, upgraded.pepperVersion, upgraded.layout], [
      undefined,
      2,
      "nestarc-v0",
    ]);
    const fresh = makeService({ storage, ...LEGACY, peppers: { 2: PEPPER_2 }, cache: false });
    assert.equal((await fresh.service.verify(key.raw)).tenantId, "t1");
    await assert.rejects(fresh.service.verify(withChecksum(key.raw)), {
      code: "api_key_invalid",
    });
  });

  it("a refused layout costs what a wrong secret does: one lookup, the same hasher calls, no event of the key", async () => {
    const { storage, calls } = spyStorage();
    const { service, events } = makeService({ storage, ...LEGACY, cache: false });
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ });
    const cutKey = key.slice(0, -6);
    // The same prefix in the legacy layout (no checksum) with a wrong secret.
    const wrongSecret = cutKey.slice(0, -1) + (cutKey.endsWith("A") ? "B" : "A");
    const work = async (raw: string) => {
      calls.length = 0;
      events.length = 0;
      const subtle = countSubtle();
      try {
        await assert.rejects(service.verify(raw), { code: "api_key_invalid" });
      } finally {
        subtle.restore();
      }
      return { calls: [...calls], subtle: subtle.calls, events: events.map((e) => e.type) };
    };
    const cut = await work(cutKey);
    assert.deepEqual(cut, await work(wrongSecret));
    assert.deepEqual(cut.calls.filter((call) => call.endsWith("ByPrefix")).length, 1);
    assert.ok(!JSON.stringify(events).includes("keyId"), "no key state revealed");
  });

  it("records without a layout read as the current one; a storage without storesLayout keeps accepting any layout and says so", async () => {
    const key = nestarcKey("ak");
    const { hash } = await new Sha256Hasher({ peppers: { 1: PEPPER_1 } }).hash(key.secret);
    const bound = new InMemoryApiKeyStorage();
    await bound.insert(legacyRecord(key, hash, { id: "k-none", layout: undefined }));
    await assert.rejects(makeService({ storage: bound, ...LEGACY }).service.verify(key.raw), {
      code: "api_key_invalid",
    });
    const lines: string[] = [];
    const info = console.info;
    console.info = (line: string) => void lines.push(line);
    try {
      const storage = overrideStorage(bound, {});
      const { service } = makeService({ storage, ...LEGACY });
      assert.equal((await service.verify(key.raw)).keyId, "k-none");
      assert.equal((await service.verify(withChecksum(key.raw))).keyId, "k-none");
    } finally {
      console.info = info;
    }
    assert.match(lines.join("\n"), /no storesLayout \(a key verifies in any accepted layout\)/);
  });
});

describe("legacy hash schemes in the verify flow", () => {
  it("keys and records made by the legacy algorithms verify: sha256-pepper and sha256", async () => {
    const peppered = nestarcKey("ak", "live");
    const plain = nestarcKey("ak", "test");
    const storage = await storageWith(
      legacyRecord(peppered, nestarcHash(peppered.secret, PEPPER_2), {
        id: "k-peppered",
        hashScheme: "sha256-pepper",
        pepperVersion: 2,
      }),
      legacyRecord(plain, plainSha256(plain.secret), {
        id: "k-plain",
        hashScheme: "sha256",
        pepperVersion: 0,
      }),
    );
    const { service } = makeService({
      storage,
      peppers: { 1: PEPPER_1, 2: PEPPER_2 },
      currentPepperVersion: 1,
      cache: false,
      ...LEGACY,
    });
    assert.equal((await service.verify(peppered.raw)).keyId, "k-peppered");
    assert.equal((await service.verify(plain.raw)).keyId, "k-plain");
  });

  it("a wrong secret, another pepper or a retired one is api_key_invalid", async () => {
    const key = nestarcKey("ak");
    const storage = await storageWith(
      legacyRecord(key, nestarcHash(key.secret, PEPPER_1), {
        hashScheme: "sha256-pepper",
        pepperVersion: 1,
      }),
    );
    const wrong = key.raw.slice(0, -1) + (key.raw.endsWith("A") ? "B" : "A");
    const { service } = makeService({ storage, cache: false, ...LEGACY });
    await assert.rejects(service.verify(wrong), { code: "api_key_invalid" });
    const other = makeService({ storage, peppers: { 1: PEPPER_2 }, cache: false, ...LEGACY });
    await assert.rejects(other.service.verify(key.raw), { code: "api_key_invalid" });
    const warn = console.warn;
    const lines: string[] = [];
    console.warn = (line: string) => lines.push(line);
    try {
      const retired = makeService({ storage, peppers: { 2: PEPPER_2 }, cache: false, ...LEGACY });
      await assert.rejects(retired.service.verify(key.raw), { code: "api_key_invalid" });
    } finally {
      console.warn = warn;
    }
    assert.equal(lines.length, 1);
    assert.match(lines[0], /pepper version 1, which is not configured/);
  });

  it("a stored record with an unknown hashScheme is a storage error, not a key", async () => {
    const key = nestarcKey("ak");
    const record = legacyRecord(key, plainSha256(key.secret), { pepperVersion: 0 });
    const storage = overrideStorage(await storageWith(), {
      findByPrefix: () => Promise.resolve({ ...record, hashScheme: "md5" }),
    });
    const { service } = makeService({ storage, cache: false, ...LEGACY });
    await assert.rejects(service.verify(key.raw), ApiKeyStorageError);
  });
});

/** Counts the synchronous SHA-256 digests of `@noble/hashes` (the legacy digests). */
function countDigests() {
  const prototype = Object.getPrototypeOf(sha256.create()) as Record<string, unknown>;
  const digestInto = prototype.digestInto as (...args: unknown[]) => unknown;
  const counter = {
    digests: 0,
    restore: () => Object.defineProperty(prototype, "digestInto", { value: digestInto }),
  };
  Object.defineProperty(prototype, "digestInto", {
    configurable: true,
    writable: true,
    value: function (this: unknown, ...args: unknown[]) {
      counter.digests++;
      return digestInto.apply(this, args);
    },
  });
  return counter;
}

describe("legacy hash schemes without legacyKeyLayouts (dropped last)", () => {
  it("a legacy-scheme record is refused after an unknown prefix's work: no legacy digest, one HMAC verification, api_key_invalid", async () => {
    const revokedAt = new Date("2029-12-01T00:00:00.000Z");
    const peppered = nestarcKey("ak");
    const plain = nestarcKey("ak");
    const usable = nestarcKey("ak");
    const storage = await storageWith(
      legacyRecord(peppered, nestarcHash(peppered.secret, PEPPER_1), {
        hashScheme: "sha256-pepper",
        revokedAt,
      }),
      legacyRecord(plain, plainSha256(plain.secret), {
        hashScheme: "sha256",
        pepperVersion: 0,
        revokedAt,
      }),
      // Imported in the current layout (layout null): its secret is right.
      legacyRecord(usable, nestarcHash(usable.secret, PEPPER_1), {
        hashScheme: "sha256-pepper",
        layout: undefined,
      }),
    );
    const { service, events } = makeService({ storage, cache: false });
    const wrong = (key: { prefix: string }) =>
      withChecksum(`ak_live_${key.prefix}_${"Q".repeat(32)}`);
    const cases = {
      unknownPrefix: withChecksum(`ak_live_${"U".repeat(12)}_${"Q".repeat(32)}`),
      sha256PepperRevokedWrong: wrong(peppered),
      sha256RevokedWrong: wrong(plain),
      sha256PepperRightSecret: withChecksum(`ak_live_${usable.prefix}_${usable.secret}`),
    };
    const seen: Record<string, unknown> = {};
    for (const [name, raw] of Object.entries(cases)) {
      await service.verify(raw).catch(() => {}); // warm: keys imported
      const digests = countDigests();
      const hasher = spyHasher();
      let code: string;
      try {
        code = await service.verify(raw).then(() => "accepted", (e) => e.code);
      } finally {
        digests.restore();
        hasher.restore();
      }
      const calls = hasher.calls.map(({ operation, dataBytes, signatureBytes }) =>
        `${operation} ${dataBytes}/${signatureBytes}`
      );
      seen[name] = { code, digests: digests.digests, calls, key: hasher.calls[0]?.key };
    }
    for (const name of Object.keys(cases)) assert.deepEqual(seen[name], seen.unknownPrefix, name);
    assert.deepEqual(seen.unknownPrefix, {
      code: "api_key_invalid",
      digests: 0,
      calls: ["verify 32/32"],
      key: (seen.unknownPrefix as { key: CryptoKey }).key,
    });
    assert.deepEqual(events.filter((e) => e.type !== "api_key.auth_failed"), []);
  });
});

/** Lets detached work (the upgrade) run: a few macrotask turns. */
async function settleDetached(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

/** A sha256-pepper record of a nestarc-v0 key in a fresh in-memory storage. */
async function peppered(overrides: Partial<ApiKeyRecord> = {}) {
  const key = nestarcKey("ak");
  const record = legacyRecord(key, nestarcHash(key.secret, PEPPER_1), {
    id: "k-old",
    hashScheme: "sha256-pepper",
    pepperVersion: 1,
    ...overrides,
  });
  const inner = await storageWith(record);
  return { key, record, inner };
}

/** `inner` with `replaceHash` recorded (and optionally replaced). */
function recordingReplace(
  inner: InMemoryApiKeyStorage,
  replace: (...args: Parameters<InMemoryApiKeyStorage["replaceHash"]>) => Promise<boolean> = (
    ...args
  ) => inner.replaceHash(...args),
) {
  const calls: { args: Parameters<InMemoryApiKeyStorage["replaceHash"]>; answer?: boolean }[] = [];
  const storage = Object.assign(overrideStorage(inner, {}), {
    replaceHash: async (...args: Parameters<InMemoryApiKeyStorage["replaceHash"]>) => {
      const call: (typeof calls)[number] = { args };
      calls.push(call);
      call.answer = await replace(...args);
      return call.answer;
    },
  });
  return { storage, calls };
}

describe("upgrade on use", () => {
  it("under 50 concurrent verifies a legacy record is upgraded exactly once, then verifies under the new scheme", async () => {
    const { key, inner } = await peppered();
    const { storage, calls } = recordingReplace(inner);
    const peppers = { 1: PEPPER_1, 2: PEPPER_2 };
    const { service, events } = makeService({ storage, peppers, cache: false, ...LEGACY });
    const contexts = await Promise.all(Array.from({ length: 50 }, () => service.verify(key.raw)));
    assert.ok(contexts.every((context) => context.keyId === "k-old"));
    await settleDetached();
    assert.equal(calls.length, 1, "one replaceHash");
    assert.equal(calls[0].answer, true);
    const [id, expected, next] = calls[0].args;
    assert.deepEqual([id, expected, next.hashScheme, next.pepperVersion], [
      "k-old",
      nestarcHash(key.secret, PEPPER_1),
      "hmac-sha256",
      2,
    ]);
    const stored = (await inner.findById("k-old"))!;
    assert.deepEqual([stored.hashScheme, stored.pepperVersion, stored.hash], [
      undefined,
      2,
      next.hash,
    ]);
    // A fresh instance (nothing cached, nothing remembered) verifies it under the new scheme.
    const fresh = makeService({ storage, peppers: { 2: PEPPER_2 }, cache: false, ...LEGACY });
    assert.equal((await fresh.service.verify(key.raw)).keyId, "k-old");
    await settleDetached();
    assert.equal(calls.length, 1, "nothing left to upgrade");
    assert.deepEqual(events.filter((e) => e.type === "api_key.rehash_failed"), []);
  });

  it("a record on an old pepper version is re-hashed with the current one; a current one is not touched", async () => {
    const inner = new InMemoryApiKeyStorage();
    const old = makeService({ storage: inner });
    const created = await old.service.create({ tenantId: "t", name: "n", scopes: READ });
    const { storage, calls } = recordingReplace(inner);
    const { service } = makeService({
      storage,
      peppers: { 1: PEPPER_1, 2: PEPPER_2 },
      cache: false,
    });
    await service.verify(created.key);
    await settleDetached();
    assert.equal(calls.length, 1);
    assert.equal((await inner.findById(created.id))!.pepperVersion, 2);
    await service.verify(created.key);
    const current = await service.create({ tenantId: "t", name: "new", scopes: READ });
    await service.verify(current.key);
    await settleDetached();
    assert.equal(calls.length, 1, "current records are never re-hashed");
  });

  it("an instance whose current version is older leaves a newer record alone: no downgrade, nothing to upgrade", async () => {
    const inner = new InMemoryApiKeyStorage();
    const peppers = { 1: PEPPER_1, 2: PEPPER_2 };
    const newer = makeService({ storage: inner, peppers });
    const created = await newer.service.create({ tenantId: "t", name: "v2", scopes: READ });
    const { storage, calls } = recordingReplace(inner);
    // A rolling rotation: this instance still has version 1 current.
    const pinned = makeService({ storage, peppers, currentPepperVersion: 1, cache: false });
    assert.equal((await pinned.service.verify(created.key)).keyId, created.id);
    await settleDetached();
    assert.equal(calls.length, 0, "no replaceHash");
    assert.equal((await inner.findById(created.id))!.pepperVersion, 2);
    const report = await makeService({ storage: inner, peppers, currentPepperVersion: 1 })
      .service.hashReport();
    assert.deepEqual([report.currentPepperVersion, report.toUpgrade], [1, 0]);
  });

  it("a record whose hash changed underneath is left alone, without an event", async () => {
    const { key, inner } = await peppered();
    const elsewhere = {
      hash: "Z".repeat(43),
      hashScheme: "hmac-sha256" as const,
      pepperVersion: 1,
    };
    const { storage, calls } = recordingReplace(inner, async (id, expected, next) => {
      // Another process re-hashed (or rotated the hash of) the record first.
      await inner.replaceHash(id, expected, elsewhere);
      return inner.replaceHash(id, expected, next);
    });
    const { service, events } = makeService({ storage, cache: false, ...LEGACY });
    await service.verify(key.raw);
    await settleDetached();
    assert.equal(calls[0].answer, false);
    assert.equal((await inner.findById("k-old"))!.hash, elsewhere.hash);
    assert.deepEqual(events.filter((e) => e.type === "api_key.rehash_failed"), []);
  });

  it("an in-between hash written first by an instance whose current version is older (a rolling deploy) is upgraded from, once, proven with the secret: the key ends on the current version", async () => {
    const { key, inner } = await peppered();
    const peppers = { 1: PEPPER_1, 2: PEPPER_2 };
    // The instance still on version 1 upgrades the legacy hash to hmac-sha256 v1 just before ours.
    const older = makeService({
      storage: inner,
      peppers,
      currentPepperVersion: 1,
      cache: false,
      ...LEGACY,
    });
    let raced = false;
    const { storage, calls } = recordingReplace(inner, async (...args) => {
      if (!raced) {
        raced = true;
        await older.service.verify(key.raw);
        await settleDetached();
        assert.equal((await inner.findById("k-old"))!.pepperVersion, 1, "the in-between hash");
      }
      return inner.replaceHash(...args);
    });
    const { service, events } = makeService({ storage, peppers, cache: false, ...LEGACY });
    await service.verify(key.raw);
    await settleDetached(40);
    assert.deepEqual(calls.map((call) => call.answer), [false, true]);
    const stored = (await inner.findById("k-old"))!;
    assert.deepEqual([stored.hashScheme, stored.pepperVersion], [undefined, 2]);
    assert.equal(
      (await makeService({ storage: inner, peppers, ...LEGACY }).service.hashReport()).toUpgrade,
      0,
    );
    assert.deepEqual(events.filter((e) => e.type === "api_key.rehash_failed"), []);
  });

  it("a failed upgrade emits api_key.rehash_failed, never reaches the caller, and is not retried", async () => {
    const { key, inner } = await peppered();
    const { storage, calls } = recordingReplace(
      inner,
      () => Promise.reject(new Error(`db down (${key.secret})`)),
    );
    const { service, events } = makeService({ storage, cache: false, ...LEGACY });
    assert.equal((await service.verify(key.raw)).keyId, "k-old");
    await settleDetached();
    const failed = events.filter((e) => e.type === "api_key.rehash_failed");
    assert.equal(failed.length, 1);
    assert.deepEqual({ ...failed[0], at: undefined }, {
      type: "api_key.rehash_failed",
      at: undefined,
      keyId: "k-old",
      tenantId: "t-legacy",
      prefix: key.prefix,
      environment: "live",
      hashScheme: "sha256-pepper",
      pepperVersion: 1,
    });
    assert.ok(!JSON.stringify(failed).includes(key.secret), "no secret in the event");
    await service.verify(key.raw);
    await settleDetached();
    assert.equal(calls.length, 1, "at most once per record per instance");
    assert.equal((await inner.findById("k-old"))!.hashScheme, "sha256-pepper");
  });

  it("the upgrade is off the request's path: verify settles before replaceHash is called, even one that never answers", async () => {
    const { key, inner } = await peppered();
    const order: string[] = [];
    const { storage } = recordingReplace(inner, () => {
      order.push("replaceHash");
      return new Promise<boolean>(() => {});
    });
    const { service } = makeService({ storage, cache: false, ...LEGACY });
    await service.verify(key.raw).then(() => order.push("verified"));
    await settleDetached();
    assert.deepEqual(order, ["verified", "replaceHash"]);
  });

  it("with upgradeHashesOnUse: false a legacy record verifies again and again and stays as stored", async () => {
    const { key, record, inner } = await peppered();
    const { storage, calls } = recordingReplace(inner);
    const peppers = { 1: PEPPER_1, 2: PEPPER_2 };
    const options = { storage, peppers, cache: false as const, ...LEGACY };
    const { service } = makeService({ ...options, upgradeHashesOnUse: false });
    for (let i = 0; i < 3; i++) {
      assert.equal((await service.verify(key.raw)).keyId, "k-old");
      await settleDetached();
    }
    assert.equal(calls.length, 0, "no replaceHash");
    const stored = (await inner.findById("k-old"))!;
    assert.deepEqual([stored.hash, stored.hashScheme, stored.pepperVersion], [
      record.hash,
      "sha256-pepper",
      1,
    ]);
    const report = await makeService({ storage: inner, peppers }).service.hashReport();
    assert.deepEqual([report.counts, report.toUpgrade], [
      [{ hashScheme: "sha256-pepper", pepperVersion: 1, count: 1 }],
      1,
    ]);
    // Turned on (the default), the next verify upgrades it.
    await makeService(options).service.verify(key.raw);
    await settleDetached();
    assert.equal(calls.length, 1);
  });

  it("a storage without replaceHash is announced and its records stay as they are", async () => {
    const { key, inner } = await peppered();
    const info = console.info;
    const lines: string[] = [];
    console.info = (line: string) => lines.push(line);
    try {
      const { service } = makeService({ storage: overrideStorage(inner, {}), ...LEGACY });
      await service.verify(key.raw);
    } finally {
      console.info = info;
    }
    await settleDetached();
    assert.match(lines.join("\n"), /no replaceHash \(records on a legacy hash scheme/);
    assert.equal((await inner.findById("k-old"))!.hashScheme, "sha256-pepper");
  });
});

describe("knowing when to retire: hashReport and retiredPepperVersions", () => {
  /** Records on every scheme: 2 current, 1 on pepper 1, 2 sha256-pepper, 1 sha256, 1 revoked, 1 expired. */
  async function mixed() {
    const inner = new InMemoryApiKeyStorage();
    const old = makeService({ storage: inner });
    const onOne = await old.service.create({ tenantId: "t", name: "v1", scopes: READ });
    const current = makeService({ storage: inner, peppers: { 1: PEPPER_1, 2: PEPPER_2 } });
    for (const name of ["a", "b"]) {
      await current.service.create({ tenantId: "t", name, scopes: READ });
    }
    const peppered = [nestarcKey("ak"), nestarcKey("ak")];
    for (const key of peppered) {
      await inner.insert(
        legacyRecord(key, nestarcHash(key.secret, PEPPER_1), { hashScheme: "sha256-pepper" }),
      );
    }
    const plain = nestarcKey("ak");
    await inner.insert(
      legacyRecord(plain, plainSha256(plain.secret), { hashScheme: "sha256", pepperVersion: 0 }),
    );
    const revoked = nestarcKey("ak");
    await inner.insert(legacyRecord(revoked, plainSha256(revoked.secret), {
      hashScheme: "sha256",
      pepperVersion: 0,
      revokedAt: new Date("2029-12-01T00:00:00.000Z"),
    }));
    const expired = nestarcKey("ak");
    await inner.insert(legacyRecord(expired, nestarcHash(expired.secret, PEPPER_1), {
      hashScheme: "sha256-pepper",
      expiresAt: new Date("2029-12-31T23:59:59.999Z"),
    }));
    return { inner, onOne, peppered, plain };
  }

  it("hashReport counts usable records per scheme and pepper version, and those to upgrade", async () => {
    const { inner, peppered } = await mixed();
    const { service } = makeService({
      storage: inner,
      peppers: { 1: PEPPER_1, 2: PEPPER_2 },
      cache: false,
      ...LEGACY,
    });
    const report = await service.hashReport();
    assert.deepEqual(report, {
      at: new Date("2030-01-01T00:00:00.000Z"),
      currentPepperVersion: 2,
      counts: [
        { hashScheme: "hmac-sha256", pepperVersion: 1, count: 1 },
        { hashScheme: "hmac-sha256", pepperVersion: 2, count: 2 },
        { hashScheme: "sha256-pepper", pepperVersion: 1, count: 2 },
        { hashScheme: "sha256", pepperVersion: 0, count: 1 },
      ],
      usable: 6,
      toUpgrade: 4,
    });
    await service.verify(peppered[0].raw);
    await settleDetached();
    const after = await service.hashReport();
    assert.equal(after.toUpgrade, 3, "one upgraded on use");
    assert.deepEqual(after.counts[1], { hashScheme: "hmac-sha256", pepperVersion: 2, count: 3 });
  });

  it("refuses to start while usable records remain on a retired version or on sha256, naming the count", async () => {
    const { inner, onOne, peppered, plain } = await mixed();
    const start = (retiredPepperVersions: number[]) =>
      makeService({
        storage: inner,
        peppers: { 2: PEPPER_2 },
        cache: false,
        retiredPepperVersions,
        ...LEGACY,
      }).service.ready();
    await assert.rejects(
      start([1]),
      (error: Error) => {
        assert.match(
          error.message,
          /refusing to start: 4 usable API keys still need a retired hash/,
        );
        assert.match(
          error.message,
          /1 on pepper version 1, 2 on pepper version 1 \(sha256-pepper\), 1 on sha256/,
        );
        return true;
      },
    );
    await assert.rejects(
      start([]),
      /refusing to start: 1 usable API key still needs a retired hash \(1 on sha256\)/,
    );
    // Upgrade them on use (a service that still has pepper 1), then retiring is safe.
    const upgrading = makeService({
      storage: inner,
      peppers: { 1: PEPPER_1, 2: PEPPER_2 },
      cache: false,
      ...LEGACY,
    });
    for (const key of [onOne.key, peppered[0].raw, peppered[1].raw, plain.raw]) {
      await upgrading.service.verify(key);
    }
    await settleDetached();
    await start([1]);
    await makeService({ storage: inner, peppers: { 2: PEPPER_2 } }).service.ready();
  });

  it("a record on a retired version, or on sha256, stored after start verifies as invalid, with a warning", async () => {
    const { inner, onOne, plain } = await mixed();
    const warn = console.warn;
    const lines: string[] = [];
    console.warn = (line: string) => lines.push(line);
    try {
      for (const retiredPepperVersions of [[1], []]) {
        const { service, events } = makeService({
          storage: inner,
          peppers: { 1: PEPPER_1, 2: PEPPER_2 },
          cache: false,
          retiredPepperVersions,
          ...LEGACY,
        });
        // Start passed before these records came (a restore, a write of another system).
        if (retiredPepperVersions.length > 0) {
          await assert.rejects(service.verify(onOne.key), { code: "api_key_invalid" });
        }
        await assert.rejects(service.verify(plain.raw), { code: "api_key_invalid" });
        await settleDetached();
        assert.deepEqual(events.filter((e) => e.type !== "api_key.auth_failed"), []);
      }
    } finally {
      console.warn = warn;
    }
    assert.equal((await inner.findById(onOne.id))!.pepperVersion, 1, "not upgraded");
    assert.match(lines.join("\n"), /pepper version 1, which is retired/);
    assert.match(lines.join("\n"), /sha256, which is retired/);
  });

  it("fails to start when the storage is down, and refuses bad options at construction", async () => {
    const inner = new InMemoryApiKeyStorage();
    const down = Object.assign(overrideStorage(inner, {}), {
      countHashes: () => Promise.reject(new Error("connection refused")),
    });
    const { service } = makeService({ storage: down, retiredPepperVersions: [7] });
    await assert.rejects(service.ready(), ApiKeyStorageError);
    assert.throws(
      () => makeService({ retiredPepperVersions: [1] }),
      /retiredPepperVersions must not include the current pepper version 1/,
    );
    assert.throws(
      () => makeService({ retiredPepperVersions: [0] }),
      /retiredPepperVersions must be an array of positive integers/,
    );
    assert.deepEqual(validateRetiredVersions([1], 2, true, "retiredPepperVersions"), [1]);
    assert.throws(
      () => makeService({ storage: overrideStorage(inner, {}), retiredPepperVersions: [3] }),
      /retiredPepperVersions needs the storage capability countHashes/,
    );
    await assert.rejects(
      makeService({ storage: overrideStorage(inner, {}) }).service.hashReport(),
      ApiKeyStorageError,
    );
  });
});
