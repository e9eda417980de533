/**
 * The storage wrapper of the service: deadline and error mapping, the one
 * check of every record read, and the capabilities detected at construction.
 */
import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyOperationError, ApiKeyStorageError } from "../../../api_keys/errors.ts";
import { InMemoryApiKeyStorage } from "../../../api_keys/storage/in_memory.ts";
import { MAX_KEYS_PER_READ, StorageAccess } from "../../../api_keys/storage/_access.ts";
import type { ApiKeyStorage } from "../../../api_keys/storage/types.ts";
import type { AuditChainState, AuditReadQuery } from "../../../api_keys/audit/types.ts";
import type { ApiKeyRecord } from "../../../api_keys/types.ts";
import { overrideStorage, rejection } from "../helpers.ts";
import { storedRecord } from "./stored_record.ts";

const RECORD: ApiKeyRecord = storedRecord();

/** The seven operations of an in-memory storage holding `RECORD`, with `overrides`. */
async function plain(
  overrides: Parameters<typeof overrideStorage>[1] = {},
): Promise<ApiKeyStorage> {
  const inner = new InMemoryApiKeyStorage();
  await inner.insert(RECORD);
  return overrideStorage(inner, overrides);
}

describe("StorageAccess", () => {
  it("checks the storage once, naming a missing method or a capability that is not a function", () => {
    assert.throws(
      () => new StorageAccess(undefined, 10, "storage"),
      /^TypeError: storage is required/,
    );
    const { insert: _, ...noInsert } = overrideStorage(new InMemoryApiKeyStorage(), {});
    assert.throws(() => new StorageAccess(noInsert, 10, "s"), /s is missing method insert/);
    const odd = Object.assign(new InMemoryApiKeyStorage(), { peekByPrefix: 1 });
    assert.throws(() => new StorageAccess(odd, 10, "s"), /s\.peekByPrefix must be a function/);
  });

  it("names the fix of the usual mistakes: a storage class, a Prisma client", () => {
    assert.throws(
      () => new StorageAccess(InMemoryApiKeyStorage, 10, "s"),
      /^TypeError: s must be a storage instance, not a class: pass an instance: new InMemoryApiKeyStorage\(\)$/,
    );
    assert.throws(
      () => new StorageAccess(class {}, 10, "s"),
      /^TypeError: s must be a storage instance, not a class: pass an instance, e\.g\. new InMemoryApiKeyStorage\(\)$/,
    );
    const wrap =
      /^TypeError: s is a Prisma client, not a storage: wrap it in new PrismaApiKeyStorage\(prisma\)$/;
    for (
      const client of [{ $connect() {}, apiKey: {} }, { apiKey: { create() {} } }, {
        $connect() {},
      }]
    ) {
      assert.throws(() => new StorageAccess(client, 10, "s"), wrap);
    }
    // A storage with every method is a storage, whatever else it has.
    const storage = Object.assign(new InMemoryApiKeyStorage(), { $connect() {}, apiKey: {} });
    assert.ok(new StorageAccess(storage, 10, "s"));
    assert.throws(() => new StorageAccess({}, 10, "s"), /^TypeError: s is missing method insert$/);
  });

  it("countHashes: rows merged and ordered; a malformed row, a throw or no capability is a storage error", async () => {
    const answering = async (rows: unknown) =>
      new StorageAccess(
        Object.assign(await plain(), { countHashes: () => Promise.resolve(rows) }),
        20,
        "s",
      );
    const access = await answering([
      { hashScheme: "sha256", pepperVersion: 0, count: 2 },
      { pepperVersion: 2, count: 1 },
      { hashScheme: "hmac-sha256", pepperVersion: 1, count: 4 },
      { hashScheme: "hmac-sha256", pepperVersion: 2, count: 3 },
      { hashScheme: "sha256-pepper", pepperVersion: 1, count: 0 },
    ]);
    assert.deepEqual(await access.countHashes(new Date()), [
      { hashScheme: "hmac-sha256", pepperVersion: 1, count: 4 },
      { hashScheme: "hmac-sha256", pepperVersion: 2, count: 4 },
      { hashScheme: "sha256", pepperVersion: 0, count: 2 },
    ]);
    for (
      const bad of [
        null,
        [{ hashScheme: "md5", pepperVersion: 1, count: 1 }],
        [{ pepperVersion: 1, count: -1 }],
        [{ pepperVersion: "1", count: 1 }],
      ]
    ) {
      await assert.rejects((await answering(bad)).countHashes(new Date()), ApiKeyStorageError);
    }
    const without = new StorageAccess(await plain(), 20, "s");
    assert.equal(without.canCountHashes, false);
    const error = await rejection(without.countHashes(new Date()));
    assert.ok(error instanceof ApiKeyStorageError);
    assert.equal(error.operation, "countHashes");
  });

  it("detects the capabilities: a notice names only the missing ones", async () => {
    const full = new StorageAccess(new InMemoryApiKeyStorage(), 10, "s");
    assert.equal(full.notice, undefined);
    assert.equal(typeof full.peek, "function");
    const bare = new StorageAccess(await plain(), 10, "s");
    assert.equal(bare.peek, undefined);
    assert.match(
      bare.notice!,
      /no peekByPrefix .*no markRevokedIfActive .*no replaceHash \(.*not upgraded on use\), no countHashes \(hashReport\(\) and retiredPepperVersions are unavailable\)/,
    );
    const revokeOnly = new StorageAccess(
      Object.assign(await plain(), { markRevokedIfActive: () => Promise.resolve(true) }),
      10,
      "s",
    );
    assert.doesNotMatch(revokeOnly.notice!, /markRevokedIfActive/);
  });

  it("storesCredits: needs setCredits, a boolean flag; absent, the notice names it", async () => {
    const full = new StorageAccess(new InMemoryApiKeyStorage(), 10, "s");
    assert.equal(typeof full.setCredits, "function");
    const bare = new StorageAccess(await plain(), 10, "s");
    assert.equal(bare.setCredits, undefined);
    assert.match(bare.notice!, /no storesCredits \(create and rotate refuse credits\)/);
    const odd = Object.assign(await plain(), { storesCredits: "yes" });
    assert.throws(() => new StorageAccess(odd, 10, "s"), /s\.storesCredits must be a boolean/);
    const noSetter = Object.assign(await plain(), { storesCredits: true });
    assert.throws(() => new StorageAccess(noSetter, 10, "s"), /s\.setCredits must be a function/);
    const storage = new InMemoryApiKeyStorage();
    await storage.insert(RECORD);
    await assert.rejects(
      storage.setCredits(RECORD.id, { remaining: -1, updatedAt: new Date() }),
      TypeError,
    );
  });

  it("storesRateLimitKeyId: a boolean flag; absent beside storesRateLimits, the notice names it", async () => {
    const full = new StorageAccess(new InMemoryApiKeyStorage(), 10, "s");
    assert.doesNotMatch(full.notice ?? "", /storesRateLimitKeyId/);
    const windowsOnly = Object.assign(await plain(), { storesRateLimits: true });
    assert.match(
      new StorageAccess(windowsOnly, 10, "s").notice!,
      /no storesRateLimitKeyId \(a rotated key without credits counts on its own windows\)/,
    );
    const odd = Object.assign(await plain(), { storesRateLimitKeyId: "yes" });
    assert.throws(
      () => new StorageAccess(odd, 10, "s"),
      /s\.storesRateLimitKeyId must be a boolean/,
    );
  });

  it("usageBatches: a boolean flag with recordUsage; the batch id reaches recordUsage only with it; absent, the notice names it", async () => {
    const ids: unknown[][] = [];
    const usage = (flag: unknown) =>
      plain().then((storage) =>
        Object.assign(storage, {
          recordUsage: (...args: unknown[]) => {
            ids.push(args.slice(1));
            return Promise.resolve();
          },
          readUsage: () => Promise.resolve([]),
          ...(flag === undefined ? {} : { usageBatches: flag }),
        })
      );
    const once = new StorageAccess(await usage(true), 10, "s");
    await once.usage!.record([], "b-1");
    const twice = new StorageAccess(await usage(undefined), 10, "s");
    await twice.usage!.record([], "b-2");
    assert.deepEqual(ids, [["b-1"], []]);
    assert.doesNotMatch(once.notice!, /usageBatches/);
    assert.match(
      twice.notice!,
      /no usageBatches \(a usage write retried after storageTimeoutMs may count twice\)/,
    );
    await assert.rejects(
      usage("yes").then((s) => new StorageAccess(s, 10, "s")),
      /s\.usageBatches must be a boolean/,
    );
    const noRecorder = Object.assign(await plain(), { usageBatches: true });
    assert.throws(
      () => new StorageAccess(noRecorder, 10, "s"),
      /s\.recordUsage must be a function with usageBatches/,
    );
  });

  it("maps a throw, a rejection and a missed deadline to ApiKeyStorageError, cause kept private", async () => {
    const cause = new Error("db.internal:5432 refused");
    for (
      const findById of [
        () => {
          throw cause;
        },
        () => Promise.reject(cause),
        () => new Promise<never>(() => {}),
      ]
    ) {
      const access = new StorageAccess(await plain({ findById }), 20, "s");
      const error = await rejection(access.findById("k1"));
      assert.ok(error instanceof ApiKeyStorageError);
      assert.equal(error.operation, "findById");
      assert.ok(!JSON.stringify(error).includes("db.internal"));
    }
    const unknown = new StorageAccess(await plain(), 20, "s");
    const notFound = await rejection(unknown.revoke("nope", new Date()));
    assert.ok(notFound instanceof ApiKeyOperationError, "operation errors pass through");
  });

  it("a storage error about a missing column has a cause naming the migration to apply", async () => {
    const prisma = new Error(
      "The column `api_keys.credits` does not exist in the current database.",
    );
    const access = new StorageAccess(
      await plain({ findById: () => Promise.reject(prisma) }),
      20,
      "s",
    );
    const error = await rejection(access.findById("k1"));
    assert.ok(error instanceof ApiKeyStorageError);
    assert.equal(error.message, "API key storage is unavailable", "clients see no schema");
    const cause = (error as Error & { cause: Error }).cause;
    assert.match(cause.message, /apply prisma\/migrations\/0011_api_key_credits/);
    assert.equal(cause.cause, prisma);
  });

  it("checks every record read: lookups, lists, and a malformed one is a storage error", async () => {
    const broken = { ...RECORD, hash: null };
    const access = new StorageAccess(
      await plain({
        findByPrefix: () => Promise.resolve(broken),
        listByTenant: () => Promise.resolve([RECORD, broken]),
        findById: () => Promise.resolve({ ...RECORD, expiresAt: new Date(NaN) }),
      }),
      20,
      "s",
    );
    assert.equal((await rejection(access.findByPrefix("AbCdEfGhIjKl"))).operation, "findByPrefix");
    assert.equal((await rejection(access.listByTenant("t1", false))).operation, "listByTenant");
    assert.equal((await access.findById("k1"))?.expiresAt?.getTime(), 0, "read as expired");
  });

  it("a lookup answering a record of another prefix (a case variant) reads as no key, by findByPrefix and peek", async () => {
    const variant = RECORD.prefix.toUpperCase() === RECORD.prefix
      ? RECORD.prefix.toLowerCase()
      : RECORD.prefix.toUpperCase();
    assert.notEqual(variant, RECORD.prefix);
    const access = new StorageAccess(
      Object.assign(await plain({ findByPrefix: () => Promise.resolve({ ...RECORD }) }), {
        peekByPrefix: () => ({ ...RECORD }),
      }),
      20,
      "s",
    );
    await access.loaded();
    assert.equal(await access.findByPrefix(variant), null);
    assert.equal(access.peek!(variant), null);
    assert.equal((await access.findByPrefix(RECORD.prefix))?.id, RECORD.id);
    assert.equal(access.peek!(RECORD.prefix)?.id, RECORD.id);
  });

  it("a tenant's list or audit read answering another tenant's record is a storage error (never shown to the tenant)", async () => {
    const other = { ...RECORD, id: "k2", tenantId: "t2" };
    const access = new StorageAccess(
      await plain({ listByTenant: () => Promise.resolve([RECORD, other]) }),
      20,
      "s",
    );
    assert.equal((await rejection(access.listByTenant("t1", false))).operation, "listByTenant");
    const record = (tenantId: string, seq: number) => ({
      tenantId,
      seq,
      at: new Date(0),
      body: "{}",
      prevHash: "0".repeat(64),
      hash: "1".repeat(64),
    });
    const inner = new InMemoryApiKeyStorage();
    const audited = new StorageAccess(
      Object.assign(await plain(), {
        appendAudit: inner.appendAudit.bind(inner),
        readAudit: () =>
          Promise.resolve({
            records: [record("t1", 1), record("t2", 2)],
            state: {
              head: { seq: 2, hash: "1".repeat(64) },
              anchor: { seq: 1, prevHash: "0".repeat(64) },
            },
          }),
      }),
      20,
      "s",
    );
    const read = audited.audit!.read({ tenantId: "t1", order: "asc", limit: 10 });
    assert.equal((await rejection(read)).operation, "readAudit");
  });

  it("readAudit: a record outside the query (seq at or before afterSeq, at or past beforeSeq, written outside from and to) or a chain state out of shape (anchor before 1, a hash not text) is a storage error; a hash or time no writer makes is answered", async () => {
    const HASH = "1".repeat(64);
    const STATE = { head: { seq: 9, hash: HASH }, anchor: { seq: 1, prevHash: "0".repeat(64) } };
    const record = (seq: number, atMs = 1_000) => ({
      tenantId: "t1",
      seq,
      at: new Date(atMs),
      body: "{}",
      prevHash: HASH,
      hash: HASH,
    });
    /** What `readAudit` answers through the door to `query`, the records' seqs or the error's operation. */
    const read = async (
      query: Partial<AuditReadQuery>,
      records: unknown[],
      state: AuditChainState = STATE,
    ) => {
      const inner = new InMemoryApiKeyStorage();
      const audited = new StorageAccess(
        Object.assign(await plain(), {
          appendAudit: inner.appendAudit.bind(inner),
          readAudit: () => Promise.resolve({ records, state }),
        }),
        20,
        "s",
      );
      const asked = { tenantId: "t1", order: "asc" as const, limit: 10, ...query };
      return await audited.audit!.read(asked).then(
        (answer) => answer.records.map((r) => r.seq).join(),
        (error) => error instanceof ApiKeyStorageError ? error.operation : error,
      );
    };
    // The bounds of a query, each kept: afterSeq and beforeSeq exclusive, from inclusive, to not.
    const from = new Date(1_000);
    const to = new Date(2_000);
    assert.deepEqual(
      [
        await read({ afterSeq: 2 }, [record(3), record(4)]),
        await read({ beforeSeq: 5 }, [record(3), record(4)]),
        await read({ afterSeq: 2, beforeSeq: 5, order: "desc" }, [record(4), record(3)]),
        await read({ from, to }, [record(3, 1_000), record(4, 1_999)]),
      ],
      ["3,4", "3,4", "4,3", "3,4"],
    );
    assert.deepEqual(
      [
        await read({ afterSeq: 2 }, [record(2), record(3)]),
        await read({ afterSeq: 2, order: "desc" }, [record(3), record(2)]),
        await read({ beforeSeq: 5 }, [record(4), record(5)]),
        await read({ beforeSeq: 5, order: "desc" }, [record(5), record(4)]),
        await read({ from }, [record(3, 999)]),
        await read({ to }, [record(3, 2_000)]),
      ],
      Array(6).fill("readAudit"),
    );
    // The chain's state: an anchor at 1 or later, hashes of text.
    const states = [
      { ...STATE, anchor: { seq: 0, prevHash: "0".repeat(64) } },
      { ...STATE, anchor: { seq: -5, prevHash: "0".repeat(64) } },
      { ...STATE, anchor: { seq: 1, prevHash: 5 } },
      { ...STATE, head: { seq: 9, hash: null } },
      { ...STATE, head: { seq: 0, hash: HASH } },
    ];
    for (const state of states) {
      const odd = state as unknown as AuditChainState;
      assert.equal(await read({}, [record(3)], odd), "readAudit", JSON.stringify(state));
    }
    // Hashes no writer makes are answered as stored: verification names them (edited).
    for (
      const state of [
        { ...STATE, anchor: { seq: 1, prevHash: "" } },
        { ...STATE, anchor: { seq: 1, prevHash: "A".repeat(64) } },
        { ...STATE, head: { seq: 9, hash: "chosen" } },
      ]
    ) assert.equal(await read({}, [record(3)], state), "3", JSON.stringify(state));
    assert.equal(await read({}, [{ ...record(3), hash: "X", at: new Date(NaN) }]), "3");
    assert.equal(await read({}, [{ ...record(3), hash: 7 }]), "readAudit");
    assert.equal(await read({}, [record(3)], { ...STATE, head: null }), "3");
    // The filters, read from each record's body: a record of another key, actor or action is out.
    const of = (seq: number, body: object) => ({ ...record(seq), body: JSON.stringify(body) });
    const entry = { keyId: "k1", actor: "admin", action: "key.revoked" };
    const filters = { keyId: "k1", actor: "admin", action: "key.revoked" as const };
    assert.equal(await read(filters, [of(3, entry), of(4, entry)]), "3,4");
    assert.deepEqual(
      [
        await read({ keyId: "k1" }, [of(3, entry), of(4, { ...entry, keyId: "k2" })]),
        await read({ keyId: "k1" }, [of(3, { ...entry, keyId: null })]),
        await read({ actor: "admin" }, [of(3, { ...entry, actor: "app" })]),
        await read({ action: "key.revoked" }, [of(3, { ...entry, action: "key.created" })]),
        await read({ keyId: "k1" }, [{ ...record(3), body: "not json" }]),
      ],
      Array(5).fill("readAudit"),
    );
    assert.equal(await read({}, [of(3, { ...entry, keyId: "k2" })]), "3", "no filter, no check");
  });

  it(
    "peek refuses every record before the checks of the answers are loaded, then reads them (fail closed)",
    { skip: !("Deno" in globalThis) && "a fresh copy of the module by its URL" },
    async () => {
      // A copy of the module of its own (its checks not loaded yet), as in a process just started.
      const fresh: typeof import("../../../api_keys/storage/_access.ts") = await import(
        `${new URL("../../../api_keys/storage/_access.ts", import.meta.url).href}?before-load`
      );
      const storage = new InMemoryApiKeyStorage();
      await storage.insert(RECORD);
      const access = new fresh.StorageAccess(storage, 20, "s");
      assert.throws(
        () => access.peek!(RECORD.prefix),
        (e) => e instanceof ApiKeyStorageError && e.operation === "peekByPrefix",
      );
      await access.loaded();
      assert.equal(access.peek!(RECORD.prefix)?.id, RECORD.id);
    },
  );

  it("peek: checks each stored object once, contains a throw, answers null for unknown", async () => {
    const storage = new InMemoryApiKeyStorage();
    await storage.insert(RECORD);
    let reads = 0;
    const stored = storage.peekByPrefix(RECORD.prefix)!;
    const counted = new Proxy(stored, {
      get(target, property, receiver) {
        if (property === "hash") reads++;
        return Reflect.get(target, property, receiver);
      },
    });
    const peeking = Object.assign(storage, {
      peekByPrefix: (p: string) => p === RECORD.prefix ? counted : null,
    });
    const access = new StorageAccess(peeking, 20, "s");
    await access.loaded();
    assert.equal(access.peek!(RECORD.prefix), counted);
    assert.equal(access.peek!(RECORD.prefix), counted);
    assert.equal(reads, 1, "checked once");
    assert.equal(access.peek!("Unknown00000"), null);
    const malformed = new StorageAccess(
      Object.assign(new InMemoryApiKeyStorage(), { peekByPrefix: () => ({ id: "x" }) as never }),
      20,
      "s",
    );
    assert.throws(() => malformed.peek!("x"), (e) => e instanceof ApiKeyStorageError);
    const throwing = new StorageAccess(
      Object.assign(new InMemoryApiKeyStorage(), {
        peekByPrefix: () => {
          throw new Error("down");
        },
      }),
      20,
      "s",
    );
    assert.throws(
      () => throwing.peek!("x"),
      (e) => e instanceof ApiKeyStorageError && e.operation === "peekByPrefix",
    );
  });

  it("revoke: markRevokedIfActive's answer when present (a non-boolean is a storage error), else true", async () => {
    const answers: unknown[] = [false, "yes"];
    const conditional = new StorageAccess(
      Object.assign(await plain(), { markRevokedIfActive: () => Promise.resolve(answers.shift()) }),
      20,
      "s",
    );
    assert.equal(await conditional.revoke("k1", new Date()), false);
    assert.equal(
      (await rejection(conditional.revoke("k1", new Date()))).operation,
      "markRevokedIfActive",
    );
    const bare = new StorageAccess(await plain(), 20, "s");
    assert.equal(await bare.revoke("k1", new Date()), true);
  });

  describe("touchLastUsed", () => {
    const warn = console.warn;
    let warnings: string[] = [];
    beforeEach(() => {
      warnings = [];
      console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(" "));
    });
    afterEach(() => {
      console.warn = warn;
    });

    it("never throws to the caller: a failing clock or write is warned about once", async () => {
      const access = new StorageAccess(
        await plain({ touchLastUsed: () => Promise.reject(new Error("down")) }),
        20,
        "s",
      );
      access.touchLastUsed("k1", () => {
        throw new Error("clock");
      });
      access.touchLastUsed("k1", () => new Date());
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.deepEqual(warnings, [
        "api-keys: touchLastUsed failed (Error); further failures are not logged",
      ]);
    });

    it("a write that never settles: `settled` learns it failed (timeout) at the storage deadline, nothing warned", async () => {
      const access = new StorageAccess(
        await plain({ touchLastUsed: () => new Promise<void>(() => {}) }),
        20,
        "s",
      );
      const settled: (string | undefined)[] = [];
      access.touchLastUsed("k1", () => new Date(), (errorType) => settled.push(errorType));
      access.touchLastUsed("k1", () => new Date());
      await new Promise((resolve) => setTimeout(resolve, 80));
      assert.deepEqual(settled, ["timeout"]);
      assert.deepEqual(warnings, []);
    });

    it("a slow write that succeeds is no failure: a later failing write is the one warned", async () => {
      const inner = await plain();
      let mode: "slow" | "fail" = "slow";
      const storage = overrideStorage(inner, {
        touchLastUsed: async (id: string, at: Date) => {
          if (mode === "fail") throw new RangeError("down");
          await new Promise((resolve) => setTimeout(resolve, 60));
          await inner.touchLastUsed(id, at);
        },
      });
      const access = new StorageAccess(storage, 20, "s");
      const at = new Date("2026-01-02T03:04:05.000Z");
      const settled: (string | undefined)[] = [];
      const settle = (errorType?: string) => void settled.push(errorType);
      access.touchLastUsed("k1", () => at, settle);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(settled, ["timeout"], "the span ends at the deadline, once");
      assert.equal((await inner.findById("k1"))?.lastUsedAt?.toISOString(), at.toISOString());
      assert.deepEqual(warnings, [], "the write landed: nothing to warn about");
      mode = "fail";
      access.touchLastUsed("k1", () => new Date(), settle);
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.deepEqual(settled, ["timeout", "RangeError"]);
      assert.deepEqual(warnings, [
        "api-keys: touchLastUsed failed (RangeError); further failures are not logged",
      ]);
    });
  });

  it("listPage: a storage's page is checked (tenant, filters, length, order, predecessors); without the capability, listByTenant paged", async () => {
    const options = {
      limit: 2,
      after: null,
      q: null,
      status: "unrevoked" as const,
      environment: null,
      sort: "created_desc" as const,
      now: new Date("2030-01-01T00:00:00.000Z"),
    };
    const mine = (id: string, ms: number) =>
      storedRecord({ id, prefix: `p${id}`, tenantId: "t", createdAt: new Date(ms) });
    const answering = (page: unknown) => {
      const storage = new InMemoryApiKeyStorage();
      return new StorageAccess(
        Object.assign(storage, { listPageByTenant: () => Promise.resolve(page) }),
        1000,
        "s",
      );
    };
    const good = { records: [mine("b", 2), mine("a", 1)], predecessors: { a: "x" } };
    assert.deepEqual(
      (await answering(good).listPage("t", options)).records.map((r) => r.id),
      ["b", "a"],
    );
    // Equal dates: the ids in the storage's own collation, not checked.
    const tie = { records: [mine("b", 2), mine("A", 2)], predecessors: {} };
    assert.equal((await answering(tie).listPage("t", options)).records.length, 2);
    const after = { id: "b", value: new Date(2) };
    await assert.rejects(
      answering({ records: [mine("b", 2)], predecessors: {} }).listPage("t", { ...options, after }),
      ApiKeyStorageError,
      "the cursor's record again",
    );
    // The cursor's record moved past it since (renamed, used): a member of the page, not a fault.
    assert.deepEqual(
      (await answering({ records: [mine("a", 1)], predecessors: {} })
        .listPage("t", {
          ...options,
          sort: "created_desc",
          after: { id: "a", value: new Date(2) },
        }))
        .records.map((r) => r.id),
      ["a"],
    );
    const named = { ...options, sort: "name_asc" as const, after: { id: "b", value: "bravo" } };
    assert.deepEqual(
      (await answering({ records: [{ ...mine("b", 2), name: "charlie 2" }], predecessors: {} })
        .listPage("t", named)).records.map((r) => r.name),
      ["charlie 2"],
    );
    await assert.rejects(
      answering({ records: [{ ...mine("b", 2), name: "bravo" }], predecessors: {} })
        .listPage("t", named),
      ApiKeyStorageError,
      "the cursor's record again, by name",
    );
    await assert.rejects(
      answering({ records: [mine("c", 3)], predecessors: {} }).listPage("t", { ...options, after }),
      ApiKeyStorageError,
      "before the cursor",
    );
    const bad = [
      { ...good, records: [mine("b", 2), { ...mine("a", 1), tenantId: "other" }] },
      { ...good, records: [mine("a", 1), mine("b", 2)] },
      { ...good, records: [mine("c", 3), mine("b", 2), mine("a", 1)] },
      { ...good, records: [{ ...mine("b", 2), revokedAt: new Date(5) }] },
      { ...good, predecessors: { z: "x" } },
      { ...good, predecessors: null },
      { records: "nope", predecessors: {} },
    ];
    for (const page of bad) {
      await assert.rejects(answering(page).listPage("t", options), ApiKeyStorageError);
    }
    const plain = new InMemoryApiKeyStorage();
    for (const record of [mine("a", 1), mine("b", 2), mine("c", 3)]) await plain.insert(record);
    const fallback = new StorageAccess(
      Object.assign(plain, { listPageByTenant: undefined }),
      1000,
      "s",
    );
    assert.match(fallback.notice ?? "", /listPageByTenant/);
    assert.deepEqual(
      (await fallback.listPage("t", options)).records.map((r) => r.id),
      ["c", "b"],
    );
  });

  it("listByTenant and listPage: a record answered twice is a storage error, and so is a revoked one in a list that asked for none", async () => {
    const other = storedRecord({ id: "k2", prefix: "ZZZZZZZZZZZZ" });
    const revoked = { ...other, revokedAt: new Date(1) };
    /** What `listByTenant(t1, includeRevoked)` answers through the door: ids, or the error's operation. */
    const listed = async (records: ApiKeyRecord[], includeRevoked: boolean) => {
      const access = new StorageAccess(
        await plain({ listByTenant: () => Promise.resolve(records) }),
        20,
        "s",
      );
      return await access.listByTenant("t1", includeRevoked).then(
        (read) => read.map((record) => record.id).join(),
        (error) => error instanceof ApiKeyStorageError ? error.operation : error,
      );
    };
    assert.deepEqual(
      [
        await listed([RECORD, other], false),
        await listed([RECORD, revoked], true),
        await listed([RECORD, RECORD], true),
        await listed([RECORD, other, RECORD], false),
        await listed([RECORD, revoked], false),
      ],
      ["k1,k2", "k1,k2", "listByTenant", "listByTenant", "listByTenant"],
    );
    const options = {
      limit: 3,
      after: null,
      q: null,
      status: "all" as const,
      environment: null,
      now: new Date("2030-01-01T00:00:00.000Z"),
    };
    for (const sort of ["name_asc", "created_desc"] as const) {
      const storage = new InMemoryApiKeyStorage();
      const paged = (records: ApiKeyRecord[]) =>
        new StorageAccess(
          Object.assign(storage, {
            listPageByTenant: () => Promise.resolve({ records, predecessors: {} }),
          }),
          1000,
          "s",
        ).listPage("t1", { ...options, sort });
      assert.equal((await paged([RECORD, other])).records.length, 2, sort);
      for (const records of [[RECORD, RECORD], [RECORD, other, RECORD]]) {
        await assert.rejects(paged(records), ApiKeyStorageError, sort);
      }
    }
  });

  it("findByReplacement: a storage's answer is checked (tenant, replacedByKeyId); without the capability, listByTenant searched", async () => {
    const mine = (id: string, ms: number, replacedByKeyId: string | null) =>
      storedRecord({
        id,
        prefix: `p${id}`,
        tenantId: "t",
        createdAt: new Date(ms),
        replacedByKeyId,
      });
    const answering = (answer: unknown) =>
      new StorageAccess(
        Object.assign(new InMemoryApiKeyStorage(), {
          findByReplacement: () => Promise.resolve(answer),
        }),
        1000,
        "s",
      );
    assert.equal((await answering(mine("a", 1, "b")).findByReplacement("t", "b"))?.id, "a");
    assert.equal(await answering(null).findByReplacement("t", "b"), null);
    for (
      const bad of [
        { ...mine("a", 1, "b"), tenantId: "other" },
        mine("a", 1, "c"),
        mine("a", 1, null),
        { ...mine("a", 1, "b"), createdAt: "yesterday" },
        undefined,
      ]
    ) {
      await assert.rejects(answering(bad).findByReplacement("t", "b"), ApiKeyStorageError);
    }
    const plain = new InMemoryApiKeyStorage();
    for (const record of [mine("a", 1, "b"), mine("b", 2, null)]) await plain.insert(record);
    await plain.insert({ ...mine("x", 3, "b"), tenantId: "other", prefix: "px" });
    let listed = 0;
    const fallback = new StorageAccess(
      Object.assign(plain, {
        findByReplacement: undefined,
        listByTenant: (...args: Parameters<ApiKeyStorage["listByTenant"]>) => {
          listed++;
          return InMemoryApiKeyStorage.prototype.listByTenant.apply(plain, args);
        },
      }),
      1000,
      "s",
    );
    assert.match(fallback.notice ?? "", /no findByReplacement \(each admin answer about a key/);
    assert.equal((await fallback.findByReplacement("t", "b"))?.id, "a");
    assert.equal(await fallback.findByReplacement("t", "a"), null);
    assert.equal(listed, 2);
    assert.doesNotMatch(
      new StorageAccess(new InMemoryApiKeyStorage(), 10, "s").notice ?? "",
      /findByReplacement/,
    );
  });

  it("findManyByIds: a storage's answer is checked (the tenant's, ids asked, each once) and put in the order asked; without it, findById per id; at most MAX_KEYS_PER_READ distinct ids", async () => {
    const mine = (id: string) => storedRecord({ id, prefix: `p${id}`, tenantId: "t" });
    const calls: (readonly string[])[] = [];
    const answering = (answer: unknown) =>
      new StorageAccess(
        Object.assign(new InMemoryApiKeyStorage(), {
          findManyByIds: (_tenantId: string, ids: readonly string[]) => {
            calls.push(ids);
            return Promise.resolve(answer);
          },
        }),
        1000,
        "s",
      );
    const found = await answering([mine("b"), mine("a")]).findManyByIds("t", ["a", "x", "b"]);
    assert.deepEqual(found.map((record) => record?.id ?? null), ["a", null, "b"]);
    assert.deepEqual(calls, [["a", "x", "b"]], "one call with the ids");
    assert.deepEqual(await answering([]).findManyByIds("t", []), [], "no ids: no read");
    assert.equal(calls.length, 1);
    for (
      const bad of [
        [{ ...mine("a"), tenantId: "other" }],
        [mine("c")],
        [mine("a"), mine("a")],
        [{ ...mine("a"), createdAt: "yesterday" }],
        null,
        { a: mine("a") },
      ]
    ) {
      await assert.rejects(answering(bad).findManyByIds("t", ["a", "b"]), ApiKeyStorageError);
    }
    calls.length = 0;
    const many = Array.from({ length: MAX_KEYS_PER_READ + 1 }, (_, i) => `k${i}`);
    await assert.rejects(answering([]).findManyByIds("t", many), TypeError);
    await assert.rejects(answering([]).findManyByIds("t", ["a", "a"]), TypeError);
    assert.equal(calls.length, 0, "a refused list reaches no storage");
    const mixed = await answering([mine("a")]).findManyByIds("t", ["k\u0000", "a", "k\uD800"]);
    assert.deepEqual(mixed.map((record) => record?.id ?? null), [null, "a", null]);
    assert.deepEqual(
      calls,
      [["a"]],
      "an id no storage can hold (NUL, a lone surrogate) is not asked",
    );
    assert.deepEqual(await answering([]).findManyByIds("t", ["k\u0000"]), [null]);
    assert.equal(calls.length, 1);
    const plain = new InMemoryApiKeyStorage();
    for (const record of [mine("a"), mine("b")]) await plain.insert(record);
    await plain.insert({ ...mine("x"), tenantId: "other" });
    const fallback = new StorageAccess(
      Object.assign(plain, { findManyByIds: undefined }),
      1000,
      "s",
    );
    assert.match(fallback.notice ?? "", /no findManyByIds \(GET \/usage\?keys= of the admin/);
    const apart = await fallback.findManyByIds("t", ["b", "x", "none", "a"]);
    assert.deepEqual(apart.map((record) => record?.id ?? null), ["b", null, null, "a"]);
    assert.doesNotMatch(
      new StorageAccess(new InMemoryApiKeyStorage(), 10, "s").notice ?? "",
      /findManyByIds/,
    );
  });

  it("ready: nothing without the capability; the storage's TypeError rejects as it is; another failure or no answer by the deadline resolves to one line to log, no cause text in it", async () => {
    assert.equal(await new StorageAccess(new InMemoryApiKeyStorage(), 50, "s").ready(), undefined);
    const readying = (ready: () => Promise<void>) =>
      new StorageAccess(Object.assign(new InMemoryApiKeyStorage(), { ready }), 50, "s").ready();
    const misconfigured = new TypeError("the session's time zone is not UTC");
    await assert.rejects(readying(() => Promise.reject(misconfigured)), (e) => e === misconfigured);
    for (
      const ready of [
        () => Promise.reject(new Error("connect ECONNREFUSED postgres://u:secret@db")),
        () => new Promise<void>(() => {}),
      ]
    ) {
      const line = await readying(ready);
      assert.match(
        line ?? "",
        /^api-keys: InMemoryApiKeyStorage\.ready\(\) did not answer at start-up \(.+\): not checked;/,
      );
      assert.doesNotMatch(line!, /secret|ECONNREFUSED/);
    }
    assert.equal(await readying(() => Promise.resolve()), undefined);
  });

  it("usage readKeys: at most MAX_KEYS_PER_READ key ids, none twice, else a TypeError naming which before any storage read", async () => {
    const reads: unknown[] = [];
    const storage = Object.assign(new InMemoryApiKeyStorage(), {
      recordUsage: () => Promise.resolve(),
      readUsage: (query: unknown) => (reads.push(query), Promise.resolve([])),
      readUsageOfKeys: (query: unknown) => (reads.push(query), Promise.resolve([[]])),
    });
    const window = { tenantId: "t", from: new Date(0), to: new Date(3_600_000) };
    for (const shape of [{}, { readUsageOfKeys: undefined }]) {
      const access = new StorageAccess(Object.assign(storage, shape), 1000, "s");
      const many = Array.from({ length: MAX_KEYS_PER_READ + 1 }, (_, i) => `k${i}`);
      await assert.rejects(access.usage!.readKeys({ ...window, keyIds: many }), {
        name: "TypeError",
        message: `ids must be at most ${MAX_KEYS_PER_READ} key ids`,
      });
      await assert.rejects(access.usage!.readKeys({ ...window, keyIds: ["a", "a"] }), {
        name: "TypeError",
        message: "ids must not name a key id twice",
      });
      assert.equal(reads.length, 0, "a refused list reaches no storage");
      await access.usage!.readKeys({ ...window, keyIds: ["a"] });
      assert.equal(reads.length, 1, "a list in bounds is read");
      reads.length = 0;
    }
  });

  it("findTenantPool: only with storesCredits; a storage's answer is checked (tenant, a pool); absent, the notice names it", async () => {
    const updatedAt = new Date("2030-01-01T00:00:00.000Z");
    const pooled = storedRecord({
      tenantId: "t",
      credits: { remaining: 5, updatedAt, sharedBy: "tenant" },
    });
    const answering = (answer: unknown) =>
      new StorageAccess(
        Object.assign(new InMemoryApiKeyStorage(), {
          findTenantPool: () => Promise.resolve(answer),
        }),
        1000,
        "s",
      ).findTenantPool!;
    assert.equal((await answering(pooled)("t"))?.id, pooled.id);
    assert.equal(await answering(null)("t"), null);
    const ownOnly = { ...pooled, credits: { remaining: 5, updatedAt } };
    for (const bad of [{ ...pooled, tenantId: "other" }, ownOnly, storedRecord(), "k1"]) {
      await assert.rejects(answering(bad)("t"), ApiKeyStorageError);
    }
    const odd = Object.assign(new InMemoryApiKeyStorage(), { findTenantPool: "yes" });
    assert.throws(() => new StorageAccess(odd, 10, "s"), /s\.findTenantPool must be a function/);
    const without = new StorageAccess(
      Object.assign(new InMemoryApiKeyStorage(), { findTenantPool: undefined }),
      10,
      "s",
    );
    assert.equal(without.findTenantPool, undefined);
    assert.match(
      without.notice ?? "",
      /no findTenantPool \(each read of a tenant's shared credits/,
    );
    // Without storesCredits there is no pool to find: neither the lookup nor a notice line.
    const bare = new StorageAccess(
      Object.assign(await plain(), { findTenantPool: () => Promise.resolve(null) }),
      10,
      "s",
    );
    assert.equal(bare.findTenantPool, undefined);
    assert.doesNotMatch(bare.notice!, /findTenantPool/);
  });

  it("setTenantPool: only with storesCredits; its answer must be prefixes; absent, the notice names it", async () => {
    const answering = (answer: unknown) =>
      new StorageAccess(
        Object.assign(new InMemoryApiKeyStorage(), {
          setTenantPool: () => Promise.resolve(answer),
        }),
        1000,
        "s",
      ).setTenantPool!;
    assert.deepEqual(await answering(["p1", "p2"])("t", 5, new Date(0)), ["p1", "p2"]);
    for (const bad of [undefined, "p1", [1], [null]]) {
      await assert.rejects(answering(bad)("t", 5, new Date(0)), ApiKeyStorageError);
    }
    const odd = Object.assign(new InMemoryApiKeyStorage(), { setTenantPool: 1 });
    assert.throws(() => new StorageAccess(odd, 10, "s"), /s\.setTenantPool must be a function/);
    const without = new StorageAccess(
      Object.assign(new InMemoryApiKeyStorage(), { setTenantPool: undefined }),
      10,
      "s",
    );
    assert.equal(without.setTenantPool, undefined);
    assert.match(without.notice ?? "", /no setTenantPool \(each write-back of a tenant's shared/);
    const bare = new StorageAccess(
      Object.assign(await plain(), { setTenantPool: () => Promise.resolve([]) }),
      10,
      "s",
    );
    assert.equal(bare.setTenantPool, undefined);
    assert.doesNotMatch(bare.notice!, /setTenantPool/);
  });
});

describe("StorageAccess.withDeadline and a write past the deadline", () => {
  it("a throwing `late.pending` is contained: the call still rejects at the deadline, nothing escapes the timer", async () => {
    const access = new StorageAccess(await plain(), 10, "s");
    const escaped: unknown[] = [];
    const onError = (error: unknown) => escaped.push(error);
    globalThis.addEventListener?.("error", onError as EventListener);
    const warn = console.warn;
    console.warn = () => {};
    try {
      let finish!: (value: string) => void;
      const answers: string[] = [];
      const call = access.withDeadline(
        "storage",
        () => new Promise<string>((resolve) => finish = resolve),
        {
          answer: (value) => answers.push(value),
          pending: () => {
            throw new Error("pending hook failed");
          },
        },
      );
      await assert.rejects(call, /^Error: storage deadline exceeded$/);
      finish("late");
      await new Promise((resolve) => setTimeout(resolve, 5));
      assert.deepEqual(answers, ["late"]);
      assert.deepEqual(escaped, []);
    } finally {
      console.warn = warn;
      globalThis.removeEventListener?.("error", onError as EventListener);
    }
  });

  it("a rotate landing past the deadline as not_rotatable (another rotation won) is nothing to do: no late answer, no warning; a late rotation is answered", async () => {
    const warn = console.warn;
    const lines: unknown[] = [];
    console.warn = (...args: unknown[]) => lines.push(args);
    try {
      for (const [landed, answered] of [["not_rotatable", []], ["rotated", ["rotated"]]] as const) {
        let finish!: (value: string) => void;
        const storage = Object.assign(await plain(), {
          rotate: () => new Promise<string>((resolve) => finish = resolve),
        });
        const access = new StorageAccess(storage, 10, "s");
        const answers: unknown[] = [];
        const input = {} as Parameters<ApiKeyStorage["rotate"]>[0];
        await assert.rejects(
          access.rotate(input, undefined, { answer: (value) => answers.push(value) }),
          ApiKeyStorageError,
        );
        finish(landed);
        await new Promise((resolve) => setTimeout(resolve, 5));
        assert.deepEqual(answers, answered, landed);
      }
      assert.deepEqual(lines, [], "nothing warned");
    } finally {
      console.warn = warn;
    }
  });
});
