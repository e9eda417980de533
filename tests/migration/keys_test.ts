/**
 * Keys issued by `@nestarc/api-keys` keep working after the migration of
 * docs/migration.md ("Keys keep working"): a Nest app configured as the guide
 * says (`legacyKeyLayouts: ["nestarc-v0"]`, the old deployment's pepper kept
 * as a version) accepts a key and record made by the old algorithm
 * (tests/api_keys/verify/nestarc.ts) over real HTTP, upgrades the record's hash on
 * first use, and issues new keys in this library's layout.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ApiKeyRecordInput,
  ApiKeysService,
  type ApiKeyStorage,
  InMemoryApiKeyStorage,
  type ListApiKeysOptions,
  type RotateApiKeyStorageInput,
} from "../../api_keys/mod.ts";
import { ApiKeysModule } from "../../api_keys/nest/api_keys.module.ts";
import { legacyRecord, nestarcHash, nestarcKey } from "../api_keys/verify/nestarc.ts";
import { eventually } from "../eventually.ts";
import { appModule, boot, issue, PLATFORMS, withKey } from "../api_keys/nest/test_app.ts";

/** The old deployment's pepper: shorter than the 32 bytes a current pepper needs here. */
const OLD_PEPPER = "old-pepper-16byt";
const NEW_PEPPER = "a-new-current-pepper-of-at-least-32-bytes";

for (const platform of PLATFORMS) {
  describe(`keys of @nestarc/api-keys after the migration (${platform})`, () => {
    it("verify through the guard, are re-hashed on first use, and new keys use the new layout", async () => {
      const storage = new InMemoryApiKeyStorage();
      const old = nestarcKey("ak", "test");
      const record = legacyRecord(old, nestarcHash(old.secret, OLD_PEPPER), {
        tenantId: "tenant-1",
        hashScheme: "sha256-pepper",
        pepperVersion: 1,
      });
      await storage.insert(record);
      const running = await boot(
        appModule(ApiKeysModule.forRoot({
          storage,
          peppers: { 1: OLD_PEPPER, 2: NEW_PEPPER },
          currentPepperVersion: 2,
          legacyKeyLayouts: ["nestarc-v0"],
        })),
        platform,
      );
      try {
        const first = await running.request("/orders", { headers: withKey(old.raw) });
        assert.equal(first.status, 200, JSON.stringify(first.body));
        await eventually(() => {
          const stored = storage.peekByPrefix(old.prefix);
          return stored?.hashScheme === undefined && stored?.pepperVersion === 2;
        });
        const again = await running.request("/orders", { headers: withKey(old.raw) });
        assert.equal(again.status, 200);
        const wrong = `${old.raw.slice(0, -1)}${old.raw.endsWith("A") ? "B" : "A"}`;
        assert.equal((await running.request("/orders", { headers: withKey(wrong) })).status, 401);
        const { key } = await issue(running.service);
        assert.doesNotMatch(key, /^ak_test_[A-Za-z0-9]{12}_[A-Za-z0-9]{32}$/); // this library's layout
        assert.equal((await running.request("/orders", { headers: withKey(key) })).status, 200);
      } finally {
        await running.close();
      }
    });
  });
}

/** The record type of an app written for `@nestarc/api-keys` 0.1 (no `rotatedAt`, `replacedByKeyId`). */
interface OldRecord {
  id: string;
  tenantId: string;
  name: string;
  environment: "live" | "test";
  prefix: string;
  hash: string;
  pepperVersion: number;
  scopes: string[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  createdBy: string | null;
  createdAt: Date;
}

/** A storage written against 0.1's types: it stores and answers records of 0.1's shape only. */
class OldShapeStorage implements ApiKeyStorage {
  readonly records = new Map<string, OldRecord>();

  insert(record: OldRecord): Promise<void> {
    const { id, tenantId, name, environment, prefix, hash, pepperVersion, scopes } = record;
    const { expiresAt, revokedAt, lastUsedAt, createdBy, createdAt } = record;
    this.records.set(id, {
      id,
      tenantId,
      name,
      environment,
      prefix,
      hash,
      pepperVersion,
      scopes: [...scopes],
      expiresAt,
      revokedAt,
      lastUsedAt,
      createdBy,
      createdAt,
    });
    return Promise.resolve();
  }
  findById(id: string): Promise<OldRecord | null> {
    const record = this.records.get(id);
    return Promise.resolve(record === undefined ? null : { ...record });
  }
  findByPrefix(prefix: string): Promise<OldRecord | null> {
    const record = [...this.records.values()].find((r) => r.prefix === prefix);
    return Promise.resolve(record === undefined ? null : { ...record });
  }
  listByTenant(tenantId: string, options?: ListApiKeysOptions): Promise<OldRecord[]> {
    return Promise.resolve(
      [...this.records.values()].filter((r) =>
        r.tenantId === tenantId && (options?.includeRevoked === true || r.revokedAt === null)
      ).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()),
    );
  }
  markRevoked(id: string, revokedAt: Date): Promise<void> {
    this.records.get(id)!.revokedAt = revokedAt;
    return Promise.resolve();
  }
  touchLastUsed(id: string, lastUsedAt: Date): Promise<void> {
    const record = this.records.get(id);
    if (record !== undefined) record.lastUsedAt = lastUsedAt;
    return Promise.resolve();
  }
  async rotate(input: RotateApiKeyStorageInput): Promise<void> {
    await this.insert(input.newRecord);
    this.records.get(input.oldKeyId)!.expiresAt = input.oldExpiresAt;
  }
}

describe("records and storages of @nestarc/api-keys 0.1's shape", () => {
  it("a 0.1-shaped record type-checks as ApiKeyRecordInput and inserts into every bundled storage", async () => {
    const record: ApiKeyRecordInput = {
      id: "k-old",
      tenantId: "tenant-1",
      name: "from 0.1",
      environment: "live",
      prefix: "OldPrefix123",
      hash: "a".repeat(64),
      pepperVersion: 1,
      scopes: ["orders:read"],
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      createdBy: null,
      createdAt: new Date("2025-01-01T00:00:00.000Z"),
    };
    for (const storage of [new InMemoryApiKeyStorage(), new OldShapeStorage()]) {
      await storage.insert(record);
      const read = await storage.findById(record.id);
      assert.equal(read?.prefix, record.prefix);
    }
  });

  it("a 0.1-shaped storage type-checks as ApiKeyStorage and serves create, verify, rotate and list", async () => {
    const storage = new OldShapeStorage();
    const service = new ApiKeysService({
      storage,
      peppers: { 1: NEW_PEPPER },
      ttlPolicy: { allowNeverExpires: true },
    });
    const created = await service.create({
      tenantId: "tenant-1",
      name: "k",
      scopes: [{ resource: "orders", level: "read" }],
    });
    assert.equal((await service.verify(created.key)).keyId, created.id);
    const rotated = await service.rotate(created.id, { gracePeriodMs: 60_000 });
    assert.equal((await service.verify(rotated.key)).keyId, rotated.id);
    assert.equal((await service.verify(created.key)).keyId, created.id, "in its grace period");
    const listed = await service.list("tenant-1");
    const byId = (a: string[], b: string[]) => (a[0] < b[0] ? -1 : 1);
    assert.deepEqual(
      listed.map((r) => [r.id, String(r.rotatedAt), String(r.replacedByKeyId)]).sort(byId),
      [[rotated.id, "null", "null"], [created.id, "null", "null"]].sort(byId),
      "fields the storage does not keep read as null",
    );
  });
});
