import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import {
  ApiKeysService,
  InMemoryApiKeyStorage,
  parseKey,
  Sha256Hasher,
} from "../../api_keys/mod.ts";
import { compileSettings } from "../../api_keys/_settings.ts";
import type { ApiKeysServiceOptions } from "../../api_keys/service_options.ts";
import { PEPPER_1, PEPPER_2 } from "./helpers.ts";

const READ = { resource: "orders", level: "read" } as const;

const valid = (): ApiKeysServiceOptions => ({
  peppers: { 1: PEPPER_1 },
  storage: new InMemoryApiKeyStorage(),
});

describe("ApiKeysServiceOptions (validated by compileSettings)", () => {
  it("takes 0.1's shape, { storage, hasher: new Sha256Hasher(...), namespace }, in place of peppers", async () => {
    const hasher = new Sha256Hasher({ peppers: { 1: PEPPER_1, 2: PEPPER_2 }, currentVersion: 1 });
    const storage = new InMemoryApiKeyStorage();
    const service = new ApiKeysService({ storage, hasher, namespace: "nk" });
    const { id, key } = await service.create({ tenantId: "t", name: "k", scopes: [READ] });
    assert.match(key, /^nk_/);
    assert.equal((await service.verify(key)).keyId, id);
    const record = (await storage.findById(id))!;
    assert.equal(record.pepperVersion, 1);
    assert.equal(hasher.verify(parseKey(key)!.secret, record.hash, record.pepperVersion), true);
    assert.deepEqual(
      await service.list("t"),
      await new ApiKeysService({
        storage,
        peppers: { 1: PEPPER_1, 2: PEPPER_2 },
        currentPepperVersion: 1,
        namespace: "nk",
      }).list("t"),
    );
  });

  it("refuses a hasher beside peppers, and one that is not a Sha256Hasher", () => {
    const hasher = new Sha256Hasher({ peppers: { 1: PEPPER_1 } });
    const storage = new InMemoryApiKeyStorage();
    assert.throws(
      () => compileSettings({ storage, hasher, peppers: { 1: PEPPER_1 } }),
      /^TypeError: ApiKeysServiceOptions\.hasher replaces peppers and currentPepperVersion/,
    );
    assert.throws(
      () => compileSettings({ storage, hasher: { hash() {}, verify() {} } }),
      /^TypeError: ApiKeysServiceOptions\.hasher must be a Sha256Hasher/,
    );
    // One of another copy of the library (an app mixing its ESM and CommonJS builds): said so.
    assert.throws(
      () => compileSettings({ storage, hasher: { hash() {}, verify() {} } }),
      /of this copy of the library \(an app loading both its ESM and its CommonJS build has two\)/,
    );
    assert.throws(
      () => compileSettings({ storage }),
      /^TypeError: ApiKeysServiceOptions\.peppers must be an object/,
    );
  });

  it("accepts a minimal configuration", () => {
    compileSettings(valid());
    new ApiKeysService(valid());
  });

  it("throws a TypeError naming the option", () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ peppers: { 1: "short" } }, /ApiKeysServiceOptions\.peppers version 1/],
      [{ peppers: {} }, /ApiKeysServiceOptions\.peppers must configure/],
      [{ currentPepperVersion: 3 }, /ApiKeysServiceOptions\.currentPepperVersion 3 has no pepper/],
      [{ storage: undefined }, /ApiKeysServiceOptions\.storage is required/],
      [{ storage: { insert() {} } }, /storage is missing method findById/],
      [
        { storage: Object.assign(new InMemoryApiKeyStorage(), { markRevokedIfActive: "yes" }) },
        /ApiKeysServiceOptions\.storage\.markRevokedIfActive must be a function/,
      ],
      [{ namespace: "Bad_ns" }, /ApiKeysServiceOptions\.namespace must be/],
      [
        { namespace: "Acme" },
        /ApiKeysServiceOptions\.namespace must be .*\{ \.\.\.LEGACY_KEY_LAYOUTS\["nestarc-v0"\], namespace: "Acme" \}/,
      ],
      [{ storage: InMemoryApiKeyStorage }, /storage must be .*new InMemoryApiKeyStorage\(\)/],
      [{ debounceMs: -1 }, /ApiKeysServiceOptions\.debounceMs must be a non-negative whole number/],
      [{ debounceMs: Infinity }, /ApiKeysServiceOptions\.debounceMs must be a non-negative/],
      [{ debounceMs: 1e16 }, /ApiKeysServiceOptions\.debounceMs .*9999-12-31T23:59:59\.999Z/],
      [{ storageTimeoutMs: 0 }, /storageTimeoutMs must be a positive number/],
      [{ storageTimeoutMs: 1e16 }, /ApiKeysServiceOptions\.storageTimeoutMs /],
      // Timers longer than 2^31 - 1 ms fire at once: every storage call would time out.
      [{ storageTimeoutMs: 2 ** 31 }, /ApiKeysServiceOptions\.storageTimeoutMs .*2147483647/],
      [{ emitUsageEvents: "yes" }, /emitUsageEvents must be a boolean/],
      [
        { upgradeHashesOnUse: "off" },
        /ApiKeysServiceOptions\.upgradeHashesOnUse must be a boolean/,
      ],
      [{ onEvent: "log" }, /ApiKeysServiceOptions\.onEvent must be a function/],
      [{ ttlPolicy: { maxExpiresInMs: -5 } }, /ttlPolicy\.maxExpiresInMs/],
      [{ ttlPolicy: { maxExpiresInMs: NaN } }, /ttlPolicy\.maxExpiresInMs/],
      [
        { ttlPolicy: { defaultExpiresInMs: 1e16 } },
        /ApiKeysServiceOptions\.ttlPolicy\.defaultExpiresInMs .*9999-12-31T23:59:59\.999Z/,
      ],
      [
        { ttlPolicy: { maxExpiresInMs: 1e16 } },
        /ApiKeysServiceOptions\.ttlPolicy\.maxExpiresInMs .*9999-12-31T23:59:59\.999Z/,
      ],
      [
        { ttlPolicy: { defaultExpiresInMs: 10, maxExpiresInMs: 5 } },
        /defaultExpiresInMs must not exceed maxExpiresInMs/,
      ],
      [{ ttlPolicy: { allowNeverExpires: 1 } }, /allowNeverExpires must be a boolean/],
      [{ cache: { ttlMs: 60_001 } }, /cache\.ttlMs .* 60000/],
      [{ cache: { maxEntries: 0 } }, /cache\.maxEntries/],
      [{ cache: true }, /ApiKeysServiceOptions\.cache/],
    ];
    for (const [override, message] of cases) {
      assert.throws(
        () => new ApiKeysService({ ...valid(), ...override } as never),
        (error: Error) => error instanceof TypeError && message.test(error.message),
        String(message),
      );
    }
    assert.throws(() => compileSettings(null), /must be an object/);
  });

  it("accepts string pepper versions and never echoes a pepper", () => {
    new ApiKeysService({
      ...valid(),
      peppers: { "1": PEPPER_1, "2": PEPPER_1 },
      currentPepperVersion: 2,
    });
    try {
      new ApiKeysService({ ...valid(), peppers: { 1: "tiny-pepper" } });
      assert.fail("expected a throw");
    } catch (error) {
      assert.equal((error as Error).message.includes("tiny-pepper"), false);
    }
  });
});

describe("seed 0.4: onAuthFailed is deprecated", () => {
  const file = new URL("../../api_keys/service_options.ts", import.meta.url);
  const noSource = !existsSync(file) && "the TypeScript source is not in this test tree";
  it(
    "its symbol documentation says @deprecated and names the event to use",
    { skip: noSource },
    () => {
      const source = readFileSync(file, "utf8");
      const doc = source.match(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*onAuthFailed\?:/)?.[1] ?? "";
      assert.match(doc, /@deprecated/);
      assert.match(doc, /api_key\.auth_failed/);
    },
  );
});
