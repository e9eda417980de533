/**
 * Bring your keys: legacy key layouts and hash schemes in the verify flow,
 * upgrade on use, the hash report and the retirement check, on the service
 * with in-memory storage (the same on PostgreSQL: tests/postgres/legacy_test.ts).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { InMemoryApiKeyStorage, parseKey, Sha256Hasher } from "../../api_keys/mod.ts";
import { legacyRecord, nestarcKey } from "./nestarc.ts";
import { makeService, PEPPER_1, spyStorage } from "./helpers.ts";

const LEGACY = { legacyKeyLayouts: ["nestarc-v0" as const] };

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
