import type { AuditAppend, AuditReadQuery } from "../../../api_keys/audit/types.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ApiKeyRecord,
  type ApiKeyStorage,
  InMemoryApiKeyStorage,
  PrismaApiKeyStorage,
  type RotateApiKeyStorageInput,
} from "../../../api_keys/mod.ts";
import {
  ApiKeyStorageContractError,
  runApiKeyStorageContract,
} from "../../../api_keys/storage/contract.ts";
import { fakeKeyedDelegate, fakePrismaClient, fakeUsageClient } from "./fake_prisma.ts";
import { storedRecord } from "./stored_record.ts";
import { newestPoolRecord, withPoolBalance } from "../../../api_keys/storage/_answers.ts";

describe("storage contract: InMemoryApiKeyStorage", () => {
  runApiKeyStorageContract(() => new InMemoryApiKeyStorage(), it);
});

describe("storage contract: PrismaApiKeyStorage over a fake delegate with $transaction", () => {
  runApiKeyStorageContract(() => new PrismaApiKeyStorage(fakePrismaClient()), it);
});

describe("storage contract: PrismaApiKeyStorage over a fake delegate with storesRateLimitKeyId", () => {
  runApiKeyStorageContract(
    () =>
      new PrismaApiKeyStorage(fakePrismaClient(), {
        storesRateLimits: true,
        storesRateLimitKeyId: true,
      }),
    it,
  );
});

describe("storage contract: PrismaApiKeyStorage over a fake delegate with storesRateLimits", () => {
  runApiKeyStorageContract(
    () => new PrismaApiKeyStorage(fakePrismaClient(), { storesRateLimits: true }),
    it,
  );
});

describe("storage contract: PrismaApiKeyStorage over a fake delegate with storesCredits", () => {
  runApiKeyStorageContract(
    () => new PrismaApiKeyStorage(fakePrismaClient(), { storesCredits: true }),
    it,
  );
});

describe("storage contract: PrismaApiKeyStorage over a fake delegate without $transaction", () => {
  runApiKeyStorageContract(
    () => new PrismaApiKeyStorage(fakePrismaClient({ transactions: false })),
    it,
  );
});

describe("storage contract: PrismaApiKeyStorage over fake delegates with the expiry options", () => {
  runApiKeyStorageContract(
    () =>
      new PrismaApiKeyStorage(fakePrismaClient(), {
        expiryNotices: fakeKeyedDelegate("keyId"),
        rotationWaits: fakeKeyedDelegate("newKeyId"),
      }),
    it,
  );
});

describe("storage contract: PrismaApiKeyStorage over a fake raw client with the usage option", () => {
  runApiKeyStorageContract(() => {
    const client = fakePrismaClient();
    return new PrismaApiKeyStorage(client, { usage: fakeUsageClient(client.rows) });
  }, it);
});

/**
 * An app on `@nestarc/api-keys` 0.1's record type: every record it hands the
 * storage (inserted or rotated in) lacks the fields added later.
 */
function onOldRecordShape<S extends ApiKeyStorage>(storage: S): S {
  const older = ({ rotatedAt: _, replacedByKeyId: __, ...record }: ApiKeyRecord) =>
    record as ApiKeyRecord;
  const insert = storage.insert.bind(storage);
  const rotate = storage.rotate.bind(storage);
  return Object.assign(storage, {
    insert: (record: ApiKeyRecord, audit?: AuditAppend) => insert(older(record), audit),
    rotate: (input: RotateApiKeyStorageInput, audit?: AuditAppend) =>
      rotate({ ...input, newRecord: older(input.newRecord) }, audit),
  });
}

describe("storage contract: an app on 0.1's record shape (no rotatedAt, replacedByKeyId)", () => {
  describe("InMemoryApiKeyStorage", () => {
    runApiKeyStorageContract(() => onOldRecordShape(new InMemoryApiKeyStorage()), it);
  });
  describe("PrismaApiKeyStorage (rows without the columns)", () => {
    runApiKeyStorageContract(
      () => onOldRecordShape(new PrismaApiKeyStorage(fakePrismaClient()) as ApiKeyStorage),
      it,
    );
  });
});

/** Runs the contract against `storage` (fresh each case): the failing cases' names and messages. */
async function contractFailures(make: () => ApiKeyStorage): Promise<Map<string, string>> {
  const cases: [string, () => Promise<void>][] = [];
  runApiKeyStorageContract(make, (name, fn) => cases.push([name, fn]));
  const failures = new Map<string, string>();
  for (const [name, fn] of cases) {
    await fn().catch((error: Error) => failures.set(name, error.message));
  }
  return failures;
}

describe("optional storage capabilities of the bundled adapters", () => {
  it("InMemoryApiKeyStorage offers peekByPrefix, PrismaApiKeyStorage does not", () => {
    assert.equal(typeof new InMemoryApiKeyStorage().peekByPrefix, "function");
    const prisma = new PrismaApiKeyStorage(fakePrismaClient()) as ApiKeyStorage;
    assert.equal(prisma.peekByPrefix, undefined);
  });

  it("the peekByPrefix cases catch an asynchronous or stale peekByPrefix", async () => {
    const asynchronous = await contractFailures(() => {
      const storage = new InMemoryApiKeyStorage();
      const peek = storage.peekByPrefix.bind(storage);
      return Object.assign(storage, {
        peekByPrefix: (prefix: string) => Promise.resolve(peek(prefix)) as never,
      });
    });
    assert.deepEqual([...asynchronous.keys()].filter((name) => name.includes("peekByPrefix")), [
      "findByPrefix (and peekByPrefix when present) matches the prefix exactly: a case variant is unknown",
      "peekByPrefix (when present) answers at once what findByPrefix answers",
      "peekByPrefix (when present) sees each write at once: revoke, rotate, lastUsedAt",
    ]);
    const snapshots = new Map<string, ApiKeyRecord | null>();
    const stale = await contractFailures(() => {
      const storage = new InMemoryApiKeyStorage();
      const peek = storage.peekByPrefix.bind(storage);
      return Object.assign(storage, {
        peekByPrefix: (prefix: string) => {
          // The first answer forever, as a cache in front of the records would give.
          if (!snapshots.has(prefix)) snapshots.set(prefix, structuredClone(peek(prefix)));
          return snapshots.get(prefix)!;
        },
      });
    });
    assert.deepEqual([...stale.keys()], [
      "peekByPrefix (when present) sees each write at once: revoke, rotate, lastUsedAt",
    ]);
    assert.match(stale.values().next().value!, /^ApiKeyStorage contract: revokedAt seen/);
  });

  it("the findByReplacement cases catch a lookup across tenants and one that ignores revoked keys", async () => {
    const FIND = "findByReplacement (when present)";
    for (
      const broken of [
        (storage: InMemoryApiKeyStorage) => async (_tenantId: string, keyId: string) =>
          (await storage.listByTenant("tenant-replaced-other", { includeRevoked: true }))
            .concat(await storage.listByTenant("tenant-replaced", { includeRevoked: true }))
            .find((record) => record.replacedByKeyId === keyId) ?? null,
        (storage: InMemoryApiKeyStorage) => async (tenantId: string, keyId: string) =>
          (await storage.listByTenant(tenantId)).find((r) => r.replacedByKeyId === keyId) ?? null,
      ]
    ) {
      const failures = await contractFailures(() => {
        const storage = new InMemoryApiKeyStorage();
        return Object.assign(storage, { findByReplacement: broken(storage) });
      });
      assert.deepEqual([...failures.keys()].filter((name) => name.startsWith(FIND)).length, 1);
    }
  });

  it("the findManyByIds cases catch a read across tenants, one without revoked keys, one in the order asked only, and one with unknown ids as empty records", async () => {
    const MANY = "findManyByIds (when present)";
    type Find = (tenantId: string, ids: readonly string[]) => Promise<ApiKeyRecord[]>;
    // Each wraps the storage's own read (bound before it is replaced) or its findById.
    for (
      const broken of [
        // Any tenant's record among the ids.
        (storage: InMemoryApiKeyStorage): Find => async (_tenantId, ids) =>
          (await Promise.all(ids.map((id) => storage.findById(id))))
            .filter((record) => record !== null),
        // Revoked ones left out.
        (_: InMemoryApiKeyStorage, find: Find): Find => async (tenantId, ids) =>
          (await find(tenantId, ids)).filter((r) => r.revokedAt === null),
        // Only while the ids come sorted (an order-dependent merge).
        (_: InMemoryApiKeyStorage, find: Find): Find => async (tenantId, ids) =>
          ids.every((id, i) => i === 0 || ids[i - 1] < id)
            ? await find(tenantId, ids)
            : (await find(tenantId, ids)).slice(1),
        // Another tenant's id as a record of the tenant asking.
        (storage: InMemoryApiKeyStorage): Find => async (tenantId, ids) =>
          (await Promise.all(ids.map((id) => storage.findById(id))))
            .filter((record) => record !== null).map((record) => ({ ...record, tenantId })),
      ]
    ) {
      const failures = await contractFailures(() => {
        const storage = new InMemoryApiKeyStorage();
        const find = storage.findManyByIds.bind(storage);
        return Object.assign(storage, { findManyByIds: broken(storage, find) });
      });
      const caught = [...failures].filter(([name]) => name.startsWith(MANY));
      assert.equal(caught.length, 1);
      // Caught by the contract's own check, not by a failure of the broken storage itself.
      assert.match(caught[0][1], /^ApiKeyStorage contract: /);
    }
  });

  it("the findTenantPool cases catch the oldest copy, a lookup across tenants and one without revoked keys", async () => {
    const POOL = "findTenantPool (when present";
    const poolOf = (record: ApiKeyRecord) =>
      record.credits?.sharedBy === "tenant" ? record.credits : record.credits?.pool;
    for (
      const broken of [
        (storage: InMemoryApiKeyStorage) => async (tenantId: string) =>
          (await storage.listByTenant(tenantId, { includeRevoked: true }))
            .filter((record) => poolOf(record) !== undefined).at(-1) ?? null,
        (storage: InMemoryApiKeyStorage) => async (tenantId: string) =>
          await storage.findTenantPool(tenantId) ?? await storage.findTenantPool("tenant-pool"),
        (storage: InMemoryApiKeyStorage) => async (tenantId: string) =>
          newestPoolRecord(await storage.listByTenant(tenantId)),
      ]
    ) {
      const failures = await contractFailures(() => {
        const storage = new InMemoryApiKeyStorage();
        return Object.assign(storage, { findTenantPool: broken(storage) });
      });
      assert.deepEqual([...failures.keys()].filter((name) => name.startsWith(POOL)).length, 1);
    }
  });

  it("the setTenantPool cases catch a write across tenants, one skipping revoked keys and one over the own balance", async () => {
    const SET = "setTenantPool (when present";
    for (
      const broken of [
        (storage: InMemoryApiKeyStorage) => async (tenantId: string, n: number, at: Date) => [
          ...await storage.setTenantPool(tenantId, n, at),
          ...await storage.setTenantPool(`${tenantId}-other`, n, at),
        ],
        (storage: InMemoryApiKeyStorage) => async (tenantId: string, n: number, at: Date) => {
          const prefixes: string[] = [];
          for (const record of await storage.listByTenant(tenantId)) {
            const credits = withPoolBalance(record.credits, n, at);
            if (credits === undefined) continue;
            await storage.setCredits(record.id, credits);
            prefixes.push(record.prefix);
          }
          return prefixes;
        },
        (storage: InMemoryApiKeyStorage) => async (tenantId: string, n: number, at: Date) => {
          const prefixes: string[] = [];
          for (const record of await storage.listByTenant(tenantId, { includeRevoked: true })) {
            const credits = record.credits;
            if (credits?.pool === undefined && credits?.sharedBy !== "tenant") continue;
            await storage.setCredits(record.id, { ...credits, remaining: n, updatedAt: at });
            prefixes.push(record.prefix);
          }
          return prefixes;
        },
      ]
    ) {
      const failures = await contractFailures(() => {
        const storage = new InMemoryApiKeyStorage();
        return Object.assign(storage, { setTenantPool: broken(storage) });
      });
      assert.deepEqual([...failures.keys()].filter((name) => name.startsWith(SET)).length, 1);
    }
  });

  it("the markRevokedIfActive cases catch a revoke that always wins", async () => {
    const failures = await contractFailures(() => {
      const storage = new InMemoryApiKeyStorage();
      return Object.assign(storage, {
        markRevokedIfActive: async (id: string, at: Date) => {
          await storage.markRevoked(id, at);
          return true;
        },
      });
    });
    assert.deepEqual([...failures.keys()].filter((name) => name.includes("markRevokedIfActive")), [
      "markRevokedIfActive (when present) revokes once: true, then false and no change",
      "markRevokedIfActive (when present): of concurrent calls exactly one wins",
    ]);
  });

  it("the replaceHash cases catch a replace that always answers true", async () => {
    const failures = await contractFailures(() => {
      const storage = new InMemoryApiKeyStorage();
      const replace = storage.replaceHash.bind(storage);
      return Object.assign(storage, {
        replaceHash: async (...args: Parameters<typeof replace>) => {
          await replace(...args);
          return true;
        },
      });
    });
    assert.deepEqual([...failures.keys()].filter((name) => name.includes("replaceHash")), [
      "replaceHash (when present) replaces only the expected hash: true, else false and no change",
      "replaceHash (when present): of concurrent calls with one expected hash exactly one wins",
    ]);
  });

  it("the exact-prefix case catches a lookup that ignores case (MySQL's default collation)", async () => {
    const failures = await contractFailures(() => {
      const storage = new InMemoryApiKeyStorage();
      const find = storage.findByPrefix.bind(storage);
      return Object.assign(storage, {
        findByPrefix: async (prefix: string) => {
          const records = await storage.listByTenant("tenant-a", { includeRevoked: true });
          const match = records.find((r) => r.prefix.toLowerCase() === prefix.toLowerCase());
          return match === undefined ? await find(prefix) : await find(match.prefix);
        },
      });
    });
    assert.deepEqual([...failures.keys()].filter((name) => name.includes("case variant")), [
      "findByPrefix (and peekByPrefix when present) matches the prefix exactly: a case variant is unknown",
    ]);
  });

  it("the hashScheme case catches a storage that drops it", async () => {
    const failures = await contractFailures(() => {
      const storage = new InMemoryApiKeyStorage();
      const insert = storage.insert.bind(storage);
      return Object.assign(storage, {
        insert: ({ hashScheme: _, ...record }: ApiKeyRecord) => insert(record),
      });
    });
    assert.ok(failures.has("records keep their hashScheme; an absent one reads as hmac-sha256"));
  });

  it("the countHashes case catches a count that includes revoked or expired records", async () => {
    const failures = await contractFailures(() => {
      const storage = new InMemoryApiKeyStorage();
      const count = storage.countHashes.bind(storage);
      return Object.assign(storage, {
        countHashes: () => count(new Date(0)),
      });
    });
    assert.ok(
      failures.has(
        "countHashes (when present) counts usable records per hash scheme and pepper version " +
          "(a key rotated without grace ended at its rotation, whatever the clock)",
      ),
    );
  });

  it("all offer replaceHash, so the contract's cases for it run on them", () => {
    for (
      const storage of [
        new InMemoryApiKeyStorage(),
        new PrismaApiKeyStorage(fakePrismaClient()),
        new PrismaApiKeyStorage(fakePrismaClient({ transactions: false })),
      ]
    ) {
      assert.equal(typeof (storage as ApiKeyStorage).replaceHash, "function");
      assert.equal(typeof (storage as ApiKeyStorage).countHashes, "function");
    }
  });

  it("the expiry cases catch a claim that always wins, an unconditional lowering, a listing of revoked keys", async () => {
    const failures = await contractFailures(() => {
      const storage = new InMemoryApiKeyStorage();
      const list = storage.listExpiring.bind(storage);
      const lower = storage.lowerExpiry.bind(storage);
      return Object.assign(storage, {
        claimExpiryNotice: () => Promise.resolve(true),
        lowerExpiry: async (id: string, _expected: Date, next: Date) => {
          const record = await storage.findById(id);
          if (record === null) return false;
          return lower(id, record.expiresAt!, next);
        },
        listExpiring: async (options: Parameters<typeof list>[0]) => {
          const revoked = await storage.listByTenant("tenant-a", { includeRevoked: true });
          const listed = await list(options);
          return [...listed, ...revoked.filter((record) => record.revokedAt !== null)];
        },
      });
    });
    assert.deepEqual([...failures.keys()].filter((name) => /Expir|lowerExpiry/.test(name)), [
      "listExpiring (when present) pages through the unrevoked keys of a window by expiry",
      "claimExpiryNotice (when present): once per key and threshold, then only smaller ones",
      "claimExpiryNotice (when present): of concurrent claims exactly one wins",
      "lowerExpiry (when present) is a compare-and-set on expiresAt with one winner",
    ]);
  });

  it("the readAudit case catches an afterSeq or a beforeSeq read as inclusive", async () => {
    const AUDIT =
      "appendAudit and readAudit (when present): one gap-free chain per tenant that verifies, also under concurrent appends; filters, order and head";
    for (
      const [bound, by, message] of [
        ["afterSeq", -1, /a page after a cursor/],
        ["beforeSeq", 1, /a page before a cursor/],
      ] as const
    ) {
      const failures = await contractFailures(() => {
        const storage = new InMemoryApiKeyStorage();
        const read = storage.readAudit.bind(storage);
        return Object.assign(storage, {
          readAudit: (query: AuditReadQuery) =>
            read({ ...query, [bound]: query[bound] === undefined ? undefined : query[bound] + by }),
        });
      });
      assert.match(failures.get(AUDIT) ?? "", message, bound);
    }
  });

  it("PrismaApiKeyStorage has the expiry capabilities only with the delegates of its options", () => {
    const bare = new PrismaApiKeyStorage(fakePrismaClient()) as ApiKeyStorage;
    assert.equal(typeof bare.lowerExpiry, "function");
    for (const capability of ["listExpiring", "claimExpiryNotice", "saveRotationWait"] as const) {
      assert.equal(bare[capability], undefined, capability);
    }
    const full = new PrismaApiKeyStorage(fakePrismaClient(), {
      expiryNotices: fakeKeyedDelegate("keyId"),
      rotationWaits: fakeKeyedDelegate("newKeyId"),
    }) as ApiKeyStorage;
    for (
      const capability of [
        "listExpiring",
        "claimExpiryNotice",
        "saveRotationWait",
        "findRotationWait",
      ] as const
    ) {
      assert.equal(typeof full[capability], "function", capability);
    }
    assert.throws(
      () => new PrismaApiKeyStorage(fakePrismaClient(), { expiryNotices: {} as never }),
      /^TypeError: PrismaApiKeyStorage options\.expiryNotices is missing method createMany/,
    );
  });

  it("both offer markRevokedIfActive, so the contract's cases for it run on them", () => {
    for (
      const storage of [
        new InMemoryApiKeyStorage(),
        new PrismaApiKeyStorage(fakePrismaClient()),
        new PrismaApiKeyStorage(fakePrismaClient({ transactions: false })),
      ]
    ) {
      assert.equal(
        typeof (storage as { markRevokedIfActive?: unknown }).markRevokedIfActive,
        "function",
      );
    }
  });
});

describe("seed 0.4: the rotate answer", () => {
  const bundled = () =>
    [
      new InMemoryApiKeyStorage(),
      new PrismaApiKeyStorage(fakePrismaClient()),
      new PrismaApiKeyStorage(fakePrismaClient({ transactions: false })),
    ] as ApiKeyStorage[];

  it("the bundled storages answer 'rotated', then 'not_rotatable' leaving nothing usable", async () => {
    for (const storage of bundled()) {
      const old = storedRecord({ id: "old-1", prefix: "OldPrefix001" });
      await storage.insert(old);
      const input = (n: number): RotateApiKeyStorageInput => ({
        oldKeyId: old.id,
        newRecord: { ...old, id: `new-${n}`, prefix: `NewPrefix00${n}` },
        oldExpiresAt: new Date("2030-01-02T00:00:00.000Z"),
        rotatedAt: new Date("2030-01-01T12:00:00.000Z"),
      });
      assert.equal(await storage.rotate(input(1)), "rotated");
      assert.equal(await storage.rotate(input(2)), "not_rotatable");
      const loser = await storage.findById("new-2");
      assert.ok(loser === null || loser.revokedAt !== null, "the losing record is not usable");
      assert.equal(await storage.rotateForTenant!(old.tenantId, input(3)), "not_rotatable");
    }
  });

  it("a contract failure is an exported ApiKeyStorageContractError", async () => {
    const cases: [string, () => Promise<void>][] = [];
    runApiKeyStorageContract(() => {
      const storage = new InMemoryApiKeyStorage();
      const list = storage.listByTenant.bind(storage);
      return Object.assign(storage, {
        listByTenant: async (...args: Parameters<typeof list>) => (await list(...args)).reverse(),
      });
    }, (name, fn) => cases.push([name, fn]));
    const listing = cases.find(([name]) => name.startsWith("listByTenant lists newest first"));
    const error = await listing![1]().then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof ApiKeyStorageContractError);
    assert.equal(error.name, "ApiKeyStorageContractError");
  });
});
