import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { InMemoryApiKeyStorage } from "../../../api_keys/storage/in_memory.ts";
import type { ApiKeyRecord } from "../../../api_keys/types.ts";
import { loadedAtImport, WITH_DENO_INFO } from "../../module_graph.ts";
import { storedRecord } from "./stored_record.ts";

const record = (n: number, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord =>
  storedRecord({
    id: `k${n}`,
    prefix: `Prefix${String(n).padStart(6, "0")}`,
    createdAt: new Date(n),
    ...overrides,
  });

describe("InMemoryApiKeyStorage", () => {
  it(
    "does not load the usage recorder at import (its counts are a module apart)",
    WITH_DENO_INFO,
    async () => {
      const url = new URL("../../../api_keys/storage/in_memory.ts", import.meta.url);
      const { files } = await loadedAtImport(url.href);
      assert.ok(files.includes("api_keys/metering/_usage_counts.ts"), files.join("\n"));
      assert.ok(!files.includes("api_keys/metering/_usage.ts"), files.sort().join("\n"));
    },
  );

  it("refuses a duplicate id or prefix", async () => {
    const storage = new InMemoryApiKeyStorage();
    await storage.insert(record(1));
    await assert.rejects(
      storage.insert(record(1, { prefix: "OtherPrefix1" })),
      /duplicate API key id/,
    );
    await assert.rejects(storage.insert(record(2, { prefix: record(1).prefix })), /prefix/);
    assert.equal(storage.size, 1);
  });

  it("copies records in; peekByPrefix answers the stored object itself, findByPrefix a copy", async () => {
    const storage = new InMemoryApiKeyStorage();
    const inserted = record(1);
    await storage.insert(inserted);
    inserted.scopes.push("mutated:write");
    const stored = storage.peekByPrefix(inserted.prefix)!;
    assert.deepEqual(stored.scopes, ["orders:read"]);
    assert.equal(storage.peekByPrefix(inserted.prefix), stored, "no copy");
    const found = (await storage.findByPrefix(inserted.prefix))!;
    assert.notEqual(found, stored);
    assert.deepEqual(found, stored);
    await storage.markRevoked(inserted.id, new Date(5));
    assert.equal(stored.revokedAt?.getTime(), 5, "writes change the stored object in place");
  });

  it("stores an expiresAt that is not a valid date as the service reads it: expired", async () => {
    const storage = new InMemoryApiKeyStorage();
    await storage.insert(record(1, { expiresAt: new Date(NaN) }));
    assert.equal(storage.peekByPrefix(record(1).prefix)?.expiresAt?.getTime(), 0);
    await storage.insert(record(2));
    await storage.rotate({
      oldKeyId: "k2",
      newRecord: record(3),
      oldExpiresAt: new Date(NaN),
      rotatedAt: new Date(9),
    });
    assert.equal(storage.peekByPrefix(record(2).prefix)?.expiresAt?.getTime(), 0);
  });

  it("stores an expiresAt past 9999-12-31 as the service reads it: expired, as on PostgreSQL", async () => {
    const storage = new InMemoryApiKeyStorage();
    await storage.insert(record(1, { expiresAt: new Date(Date.UTC(10000, 0, 1)) }));
    assert.equal(storage.peekByPrefix(record(1).prefix)?.expiresAt?.getTime(), 0);
    assert.equal((await storage.findById("k1"))?.expiresAt?.getTime(), 0);
  });

  it("touchLastUsed refuses a lastUsedAt that is not a valid Date (TypeError) and keeps the stored one", async () => {
    const storage = new InMemoryApiKeyStorage();
    await storage.insert(record(1, { lastUsedAt: new Date(7) }));
    for (const at of [new Date(Number.NaN), 7, null]) {
      await assert.rejects(storage.touchLastUsed("k1", at as Date), TypeError, String(at));
    }
    assert.equal((await storage.findById("k1"))!.lastUsedAt?.getTime(), 7);
    await storage.touchLastUsed("k1", new Date(9));
    assert.equal((await storage.findById("k1"))!.lastUsedAt?.getTime(), 9);
  });

  it("keeps the newest 10,000 usage batch ids: a retry of a recent one changes nothing, memory stays bounded", async () => {
    const storage = new InMemoryApiKeyStorage();
    const row = (n: number) => ({
      keyId: "k1",
      tenantId: "t1",
      bucket: new Date(Date.UTC(2030, 0, 1)),
      accepted: n,
      cost: n,
      refused: {} as never,
      lastUsedAt: null,
    });
    const read = async () =>
      (await storage.readUsage({
        tenantId: "t1",
        from: new Date(Date.UTC(2030, 0, 1)),
        to: new Date(Date.UTC(2030, 0, 2)),
      }))[0].accepted;
    for (let i = 0; i < 10_001; i++) await storage.recordUsage([row(1)], `batch-${i}`);
    await storage.recordUsage([row(1)], "batch-10000"); // a retry of the newest: once
    await storage.recordUsage([row(1)], "batch-1"); // the 9,999th newest: once
    assert.equal(await read(), 10_001);
    await storage.recordUsage([row(1)], "batch-0"); // the oldest, forgotten: counted again
    assert.equal(await read(), 10_002);
  });

  it("lists one tenant's records without reading the others", async () => {
    const storage = new InMemoryApiKeyStorage();
    for (let n = 0; n < 1_000; n++) await storage.insert(record(n, { tenantId: `t${n % 100}` }));
    assert.deepEqual((await storage.listByTenant("t7")).map((r) => r.id), [
      "k907",
      "k807",
      "k707",
      "k607",
      "k507",
      "k407",
      "k307",
      "k207",
      "k107",
      "k7",
    ]);
  });
});
