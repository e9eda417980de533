/**
 * `ApiKeyStorage`: a custom storage written from the spec's seven operations
 * alone (no capability) passes the contract and works with every feature of
 * the service that needs no capability; the service says once, at start,
 * which capabilities it lacks.
 */
import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyOperationError } from "../../../api_keys/errors.ts";
import { API_KEY_STORAGE_METHODS, type ApiKeyStorage } from "../../../api_keys/storage/types.ts";
import { runApiKeyStorageContract } from "../../../api_keys/storage/contract.ts";
import type {
  ApiKeyRecord,
  ListApiKeysOptions,
  RotateApiKeyStorageInput,
} from "../../../api_keys/types.ts";
import { makeService, READ_ORDERS, rejection } from "../helpers.ts";

/** A copy of `record`, the nullable fields added after 0.1 read as null when absent. */
const copy = (record: ApiKeyRecord): ApiKeyRecord => {
  const { rotatedAt = null, replacedByKeyId = null } = record;
  return { ...structuredClone(record), rotatedAt, replacedByKeyId };
};

/** A storage with the spec's seven operations only, written from the interface rules. */
class SpecOnlyStorage implements ApiKeyStorage {
  readonly records = new Map<string, ApiKeyRecord>();
  readonly calls: string[] = [];

  #find(id: string): ApiKeyRecord {
    const record = this.records.get(id);
    if (record === undefined) throw new ApiKeyOperationError("api_key_record_not_found");
    return record;
  }

  insert(record: ApiKeyRecord): Promise<void> {
    this.calls.push("insert");
    for (const stored of this.records.values()) {
      if (stored.id === record.id || stored.prefix === record.prefix) {
        return Promise.reject(new Error("duplicate"));
      }
    }
    this.records.set(record.id, copy(record));
    return Promise.resolve();
  }

  findById(id: string): Promise<ApiKeyRecord | null> {
    this.calls.push("findById");
    const record = this.records.get(id);
    return Promise.resolve(record === undefined ? null : copy(record));
  }

  findByPrefix(prefix: string): Promise<ApiKeyRecord | null> {
    this.calls.push("findByPrefix");
    for (const record of this.records.values()) {
      if (record.prefix === prefix) return Promise.resolve(copy(record));
    }
    return Promise.resolve(null);
  }

  listByTenant(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecord[]> {
    this.calls.push("listByTenant");
    const records = [...this.records.values()]
      .filter((r) => r.tenantId === tenantId && (options?.includeRevoked || r.revokedAt === null))
      .sort((a, b) =>
        b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
      );
    return Promise.resolve(records.map(copy));
  }

  async markRevoked(id: string, revokedAt: Date): Promise<void> {
    this.calls.push("markRevoked");
    await Promise.resolve();
    this.#find(id).revokedAt = new Date(revokedAt);
  }

  touchLastUsed(id: string, lastUsedAt: Date): Promise<void> {
    this.calls.push("touchLastUsed");
    const record = this.records.get(id);
    if (record !== undefined && !(record.lastUsedAt && record.lastUsedAt >= lastUsedAt)) {
      record.lastUsedAt = new Date(lastUsedAt);
    }
    return Promise.resolve();
  }

  async rotate(input: RotateApiKeyStorageInput): Promise<void> {
    this.calls.push("rotate");
    await Promise.resolve();
    const old = this.#find(input.oldKeyId);
    if (old.rotatedAt !== null || old.revokedAt !== null) {
      throw new ApiKeyOperationError("api_key_not_rotatable");
    }
    this.records.set(input.newRecord.id, copy(input.newRecord));
    Object.assign(old, {
      rotatedAt: new Date(input.rotatedAt),
      expiresAt: new Date(input.oldExpiresAt),
      replacedByKeyId: input.newRecord.id,
    });
  }
}

describe("API_KEY_STORAGE_METHODS", () => {
  it("names the spec's seven operations, and no capability", () => {
    assert.deepEqual([...API_KEY_STORAGE_METHODS].sort(), [
      "findById",
      "findByPrefix",
      "insert",
      "listByTenant",
      "markRevoked",
      "rotate",
      "touchLastUsed",
    ]);
  });
});

describe("storage contract: a storage with the seven operations only", () => {
  runApiKeyStorageContract(() => new SpecOnlyStorage(), it);
});

describe("a service over a storage with the seven operations only", () => {
  const info = console.info;
  let lines: string[] = [];
  beforeEach(() => {
    lines = [];
    console.info = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  });
  afterEach(() => {
    console.info = info;
  });

  it("says once, at construction, which capabilities it lacks and what that means", () => {
    makeService({ storage: new SpecOnlyStorage() });
    assert.equal(lines.length, 1);
    assert.match(lines[0], /^api-keys: the storage has no peekByPrefix \(each verify awaits/);
    assert.match(lines[0], /no markRevokedIfActive \(concurrent revoke\(\) calls/);
    makeService();
    assert.equal(lines.length, 1, "the in-memory storage has every capability: no line");
  });

  it("leaves replaceHash out of that line when upgradeHashesOnUse is false", () => {
    makeService({ storage: new SpecOnlyStorage() });
    makeService({ storage: new SpecOnlyStorage(), upgradeHashesOnUse: false });
    assert.equal(lines.length, 2);
    assert.match(lines[0], /no replaceHash \(records on a legacy hash scheme/);
    assert.doesNotMatch(lines[1], /replaceHash/);
    assert.match(lines[1], /no markRevokedIfActive/, "the other capabilities are still named");
  });

  it("creates, verifies, authorizes, rotates, revokes and lists", async () => {
    const storage = new SpecOnlyStorage();
    const { service, events, clocks } = makeService({
      storage,
      ttlPolicy: { defaultExpiresInMs: 3_600_000 },
      debounceMs: 0,
    });
    const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    assert.equal((await service.verify(key)).keyId, id);
    assert.equal(storage.records.get(id)!.lastUsedAt?.getTime(), clocks.now);
    const authorized = await service.authorize(key, {
      requiredScope: { resource: "orders", level: "read" },
      requiredEnvironment: "live",
    });
    assert.equal(authorized.tenantId, "t");
    const byHeader = await service.authorizeRequest((name) => name === "x-api-key" ? key : null);
    assert.equal(byHeader.keyId, id);
    const rotated = await service.rotate(id, { gracePeriodMs: 1000 });
    assert.equal((await service.verify(key)).keyId, id, "the old key works during its grace");
    clocks.advance(1000);
    assert.equal((await rejection(service.verify(key))).code, "api_key_expired");
    assert.equal((await service.verify(rotated.key)).keyId, rotated.id);
    await service.revoke(rotated.id);
    assert.equal((await rejection(service.verify(rotated.key))).code, "api_key_revoked");
    assert.deepEqual((await service.list("t")).map((r) => r.id), [id]);
    assert.deepEqual(
      (await service.list("t", { includeRevoked: true })).map((r) => r.id),
      [id, rotated.id],
    );
    assert.deepEqual(
      events.filter((e) => e.type !== "api_key.auth_failed").map((e) => e.type),
      ["api_key.created", "api_key.rotated", "api_key.revoked"],
    );
  });

  it("verifies from storage every time by default, and from the cache when it is turned on", async () => {
    const storage = new SpecOnlyStorage();
    const { service } = makeService({ storage });
    const { key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.verify(key);
    await service.verify(key);
    assert.equal(storage.calls.filter((c) => c === "findByPrefix").length, 2, "cache off");
    const cachedStorage = new SpecOnlyStorage();
    const { service: cached } = makeService({ storage: cachedStorage, cache: { ttlMs: 1000 } });
    const other = await cached.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await cached.verify(other.key);
    await cached.verify(other.key);
    assert.equal(cachedStorage.calls.filter((c) => c === "findByPrefix").length, 1, "cache on");
  });

  it("revokes through markRevoked: a second revoke of a revoked key emits nothing", async () => {
    const storage = new SpecOnlyStorage();
    const { service, events } = makeService({ storage });
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.revoke(id);
    await service.revoke(id);
    assert.equal(storage.calls.filter((c) => c === "markRevoked").length, 1);
    assert.equal(events.filter((e) => e.type === "api_key.revoked").length, 1);
  });
});
