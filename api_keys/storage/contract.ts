/**
 * A reusable conformance suite for `ApiKeyStorage` adapters. It imports no test
 * framework: pass a registration function such as `node:test`'s `it` or
 * `Deno.test`.
 *
 * @module
 */
import { StorageAccess } from "./_access.ts";
import { newestPoolRecord, withPoolBalance } from "./_answers.ts";
import type { ApiKeyStorage, ListApiKeyPageOptions } from "./types.ts";
import type { ApiKeyRecord, ApiKeyRecordInput, RotateApiKeyStorageInput } from "../types.ts";
import { API_KEY_USAGE_REFUSALS, type ApiKeyUsageRow } from "../metering/usage.ts";
import { canonicalJson, verifyAuditChain } from "../audit/chain.ts";
import type { AuditAction, AuditAppend } from "../audit/types.ts";

/** Registers one named test case. */
export type RegisterStorageTest = (name: string, fn: () => Promise<void>) => void;

/** Makes a fresh, empty storage for one case. */
export type ApiKeyStorageFactory = () => ApiKeyStorage | Promise<ApiKeyStorage>;

/**
 * A case of `runApiKeyStorageContract` found the storage breaking the
 * contract; the message says which rule.
 *
 * @example
 * ```ts
 * import { ApiKeyStorageContractError } from "./contract.ts";
 * const error = new ApiKeyStorageContractError("default list");
 * error.message; // "ApiKeyStorage contract: default list"
 * ```
 */
export class ApiKeyStorageContractError extends Error {
  /** Creates the error of a broken rule, described by `message`. */
  constructor(message: string) {
    super(`ApiKeyStorage contract: ${message}`);
    this.name = "ApiKeyStorageContractError";
  }
}

function check(condition: unknown, message: string): void {
  if (!condition) throw new ApiKeyStorageContractError(message);
}

function time(date: Date | null | undefined): number | null {
  return date instanceof Date ? date.getTime() : null;
}

function sameRecord(
  actual: ApiKeyRecordInput | null,
  expected: ApiKeyRecordInput,
  label: string,
): void {
  check(actual !== null, `${label}: record not found`);
  const a = actual!;
  for (
    const field of [
      "id",
      "tenantId",
      "name",
      "environment",
      "prefix",
      "hash",
      "pepperVersion",
      "createdBy",
    ] as const
  ) {
    check(a[field] === expected[field], `${label}: field ${field} differs`);
  }
  check(
    (a.replacedByKeyId ?? null) === (expected.replacedByKeyId ?? null),
    `${label}: field replacedByKeyId differs`,
  );
  for (const field of ["lastUsedAt", "expiresAt", "revokedAt", "rotatedAt", "createdAt"] as const) {
    check(time(a[field]) === time(expected[field]), `${label}: field ${field} differs`);
  }
  check(
    (a.hashScheme ?? "hmac-sha256") === (expected.hashScheme ?? "hmac-sha256"),
    `${label}: field hashScheme differs`,
  );
  check(JSON.stringify(a.scopes) === JSON.stringify(expected.scopes), `${label}: scopes differ`);
  check(
    JSON.stringify(a.allowedIpCidrs ?? []) === JSON.stringify(expected.allowedIpCidrs ?? []),
    `${label}: allowedIpCidrs differ`,
  );
}

/** A losing rotation leaves nothing usable: its new record is absent or revoked. */
async function leftNothingUsable(storage: ApiKeyStorage, id: string, label: string) {
  const record = await storage.findById(id);
  check(record === null || record.revokedAt !== null, `${label} left a usable record`);
}

async function rejectsWith(promise: Promise<unknown>, code: string, label: string): Promise<void> {
  try {
    await promise;
  } catch (error) {
    const actual = (error as { code?: unknown })?.code;
    check(actual === code, `${label}: expected code ${code}, got ${String(actual)}`);
    return;
  }
  throw new ApiKeyStorageContractError(`${label}: expected rejection with ${code}`);
}

/** A refused rotation: answered `"not_rotatable"`, or rejected with `api_key_not_rotatable`. */
async function notRotatable(promise: Promise<unknown>, label: string): Promise<void> {
  let answer: unknown;
  try {
    answer = await promise;
  } catch (error) {
    answer = (error as { code?: unknown })?.code;
    check(
      answer === "api_key_not_rotatable",
      `${label}: expected api_key_not_rotatable, got ${String(answer)}`,
    );
    return;
  }
  check(answer === "not_rotatable", `${label}: expected "not_rotatable", got ${String(answer)}`);
}

/** A deterministic generator of numbers in [0, 1) (mulberry32), so a failing run can be replayed. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

let sequence = 0;

function sampleRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  sequence += 1;
  const n = String(sequence).padStart(6, "0");
  return {
    id: `contract-${n}`,
    tenantId: "tenant-a",
    name: `key ${n}`,
    environment: "live",
    prefix: `Pfx${n}abc`,
    hash: "A".repeat(43),
    pepperVersion: 1,
    scopes: ["orders:read", "invoices:write"],
    allowedIpCidrs: ["10.0.0.0/8"],
    lastUsedAt: null,
    expiresAt: new Date("2100-01-01T00:00:00.000Z"),
    revokedAt: null,
    rotatedAt: null,
    replacedByKeyId: null,
    createdBy: "contract",
    createdAt: new Date("2030-01-01T00:00:00.000Z"),
    ...overrides,
  };
}

const HOUR = 3_600_000;
const USAGE_START = Date.parse("2030-03-01T00:00:00.000Z");

/** A usage row of `record` in hour `hour` (from `USAGE_START`), each count derived from `n`. */
function usageRow(record: ApiKeyRecord, hour: number, n: number, lastUsedAt: Date | null = null) {
  const refused = Object.fromEntries(API_KEY_USAGE_REFUSALS.map((code, i) => [code, n + i]));
  return {
    keyId: record.id,
    tenantId: record.tenantId,
    bucket: new Date(USAGE_START + hour * HOUR),
    accepted: 10 * n,
    refused,
    cost: 100 * n,
    lastUsedAt,
  } as ApiKeyUsageRow;
}

function rotationOf(old: ApiKeyRecord) {
  const newRecord = sampleRecord({ tenantId: old.tenantId });
  return {
    oldKeyId: old.id,
    newRecord,
    oldExpiresAt: new Date("2030-01-02T00:00:00.000Z"),
    rotatedAt: new Date("2030-01-01T12:00:00.000Z"),
  };
}

/**
 * Registers the storage contract cases with `test`, each against a fresh
 * storage from `factory`: the rules of `ApiKeyStorage` (lookups, listing,
 * revocation, atomic `rotate` and its lost races, including concurrent
 * ones: `rotate` answers `"rotated"` or nothing, and refuses with
 * `"not_rotatable"` or a rejection), then each capability's own cases, which pass at once for a storage
 * without it. Records written without the fields added after 0.1 read them
 * as `null`; a malformed one is refused naming the field. A broken rule
 * throws `ApiKeyStorageContractError`.
 *
 * @example
 * ```ts
 * import { runApiKeyStorageContract } from "./contract.ts";
 * import { InMemoryApiKeyStorage } from "./in_memory.ts";
 * runApiKeyStorageContract(() => new InMemoryApiKeyStorage(), (name, fn) => Deno.test(name, fn));
 * ```
 */
export function runApiKeyStorageContract(
  factory: ApiKeyStorageFactory,
  test: RegisterStorageTest,
): void {
  test("insert then findById and findByPrefix return the record", async () => {
    const storage = await factory();
    const record = sampleRecord();
    await storage.insert(record);
    sameRecord(await storage.findById(record.id), record, "findById");
    sameRecord(await storage.findByPrefix(record.prefix), record, "findByPrefix");
  });

  test("findByPrefix (and peekByPrefix when present) matches the prefix exactly: a case variant is unknown", async () => {
    const storage = await factory();
    const record = sampleRecord();
    await storage.insert(record);
    const variant = [...record.prefix].map((c) =>
      c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()
    ).join("");
    check((await storage.findByPrefix(variant)) === null, "findByPrefix of a case variant");
    check((storage.peekByPrefix?.(variant) ?? null) === null, "peekByPrefix of a case variant");
  });

  test("records keep their hashScheme; an absent one reads as hmac-sha256", async () => {
    const storage = await factory();
    const legacy = sampleRecord({ hash: "a".repeat(64), hashScheme: "sha256-pepper" });
    const plain = sampleRecord({ hash: "b".repeat(64), hashScheme: "sha256", pepperVersion: 0 });
    const current = sampleRecord();
    for (const record of [legacy, plain, current]) await storage.insert(record);
    for (const record of [legacy, plain, current]) {
      sameRecord(await storage.findById(record.id), record, `hashScheme of ${record.id}`);
      sameRecord(await storage.findByPrefix(record.prefix), record, `hashScheme of ${record.id}`);
    }
    const listed = await storage.listByTenant(legacy.tenantId);
    sameRecord(listed.find((r) => r.id === legacy.id) ?? null, legacy, "listed hashScheme");
  });

  test("a record without rotatedAt and replacedByKeyId (0.1's shape) reads them as null or absent", async () => {
    const storage = await factory();
    const { rotatedAt: _, replacedByKeyId: __, ...older } = sampleRecord();
    await storage.insert(older);
    const record = { ...older, rotatedAt: null, replacedByKeyId: null };
    const listed = await storage.listByTenant(record.tenantId);
    const reads = [await storage.findById(record.id), await storage.findByPrefix(record.prefix)];
    for (const read of [...reads, listed.find((r) => r.id === record.id) ?? null]) {
      check(
        (read?.rotatedAt ?? null) === null && (read?.replacedByKeyId ?? null) === null,
        "absent fields read as null",
      );
      sameRecord(read, record, "a record of 0.1's shape");
    }
    const input = rotationOf(record);
    await storage.rotate(input);
    check((await storage.findById(record.id))!.replacedByKeyId === input.newRecord.id, "rotated");
  });

  test("a malformed record is refused naming the field, by insert or when the service reads it", async () => {
    const storage = await factory();
    const record = { ...sampleRecord(), environment: "staging" } as unknown as ApiKeyRecord;
    const refusal = await storage.insert(record).then(
      () => new StorageAccess(storage, 5_000, "storage").findById(record.id),
    ).then(() => undefined, (error: Error) => error);
    const message = `${refusal?.message} ${(refusal?.cause as Error | undefined)?.message}`;
    check(/\benvironment\b/.test(message), `refusal names the field, got: ${message}`);
  });

  test("unknown id and prefix give null", async () => {
    const storage = await factory();
    await storage.insert(sampleRecord());
    check((await storage.findById("no-such-id")) === null, "findById of an unknown id");
    check((await storage.findByPrefix("NoSuchPrefix")) === null, "findByPrefix of unknown prefix");
  });

  test("records read back are copies", async () => {
    const storage = await factory();
    const record = sampleRecord();
    await storage.insert(record);
    const first = (await storage.findById(record.id))!;
    first.scopes.push("mutated:write");
    first.name = "mutated";
    sameRecord(await storage.findById(record.id), record, "after mutating a returned copy");
  });

  test("listByTenant lists newest first (createdAt descending, then id) and hides revoked keys by default", async () => {
    const storage = await factory();
    const at = new Date("2030-01-01T00:00:00.000Z");
    const later = sampleRecord({ id: "contract-z-late", createdAt: new Date(at.getTime() + 1) });
    const b = sampleRecord({ id: "contract-b", createdAt: at });
    const a = sampleRecord({ id: "contract-a", createdAt: at });
    const revoked = sampleRecord({ id: "contract-0-revoked", createdAt: at });
    const other = sampleRecord({ id: "contract-other", tenantId: "tenant-b" });
    for (const record of [later, b, a, revoked, other]) await storage.insert(record);
    await storage.markRevoked(revoked.id, new Date("2030-01-01T01:00:00.000Z"));
    const ids = (await storage.listByTenant("tenant-a")).map((r) => r.id);
    check(JSON.stringify(ids) === JSON.stringify([later.id, a.id, b.id]), "default list");
    const all = (await storage.listByTenant("tenant-a", { includeRevoked: true })).map((r) => r.id);
    check(
      JSON.stringify(all) === JSON.stringify([later.id, revoked.id, a.id, b.id]),
      "list with includeRevoked",
    );
    check((await storage.listByTenant("tenant-none")).length === 0, "list of an unknown tenant");
  });

  test("markRevoked sets revokedAt; an unknown id is api_key_record_not_found", async () => {
    const storage = await factory();
    const record = sampleRecord();
    await storage.insert(record);
    const at = new Date("2030-01-01T02:00:00.000Z");
    await storage.markRevoked(record.id, at);
    check(time((await storage.findById(record.id))!.revokedAt) === at.getTime(), "revokedAt");
    await rejectsWith(storage.markRevoked("no-such-id", at), "api_key_record_not_found", "revoke");
  });

  test("markRevokedIfActive (when present) revokes once: true, then false and no change", async () => {
    const storage = await factory();
    const revoke = storage.markRevokedIfActive?.bind(storage);
    if (revoke === undefined) return;
    const record = sampleRecord();
    await storage.insert(record);
    const at = new Date("2030-01-01T05:00:00.000Z");
    check((await revoke(record.id, at)) === true, "first markRevokedIfActive answers true");
    const later = new Date(at.getTime() + 60_000);
    check((await revoke(record.id, later)) === false, "second markRevokedIfActive answers false");
    check(time((await storage.findById(record.id))!.revokedAt) === at.getTime(), "revokedAt kept");
    const marked = sampleRecord();
    await storage.insert(marked);
    await storage.markRevoked(marked.id, at);
    check((await revoke(marked.id, later)) === false, "a key revoked by markRevoked counts too");
    const rotated = sampleRecord();
    await storage.insert(rotated);
    await storage.rotate(rotationOf(rotated));
    check((await revoke(rotated.id, later)) === true, "a rotated key can still be revoked");
    await rejectsWith(revoke("no-such-id", at), "api_key_record_not_found", "unknown id");
  });

  test("markRevokedIfActive (when present): of concurrent calls exactly one wins", async () => {
    const storage = await factory();
    const revoke = storage.markRevokedIfActive?.bind(storage);
    if (revoke === undefined) return;
    const record = sampleRecord();
    await storage.insert(record);
    const base = Date.parse("2030-01-01T06:00:00.000Z");
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => revoke(record.id, new Date(base + i * 1000))),
    );
    const winners = results.flatMap((won, i) => won === true ? [i] : []);
    check(winners.length === 1, `expected one winning revoke, got ${winners.length}`);
    check(results.every((won) => typeof won === "boolean"), "answers are booleans");
    check(
      time((await storage.findById(record.id))!.revokedAt) === base + winners[0] * 1000,
      "revokedAt is the winner's",
    );
  });

  test("replaceHash (when present) replaces only the expected hash: true, else false and no change", async () => {
    const storage = await factory();
    const replace = storage.replaceHash?.bind(storage);
    if (replace === undefined) return;
    const record = sampleRecord({ hash: "c".repeat(64), hashScheme: "sha256-pepper" });
    await storage.insert(record);
    const next = { hash: "N".repeat(43), hashScheme: "hmac-sha256" as const, pepperVersion: 2 };
    check((await replace(record.id, "d".repeat(64), next)) === false, "another expected hash");
    sameRecord(await storage.findById(record.id), record, "unchanged after a lost compare");
    check((await replace(record.id, record.hash, next)) === true, "the expected hash");
    const replaced = { ...record, ...next };
    sameRecord(await storage.findById(record.id), replaced, "after replaceHash");
    sameRecord(
      await storage.findByPrefix(record.prefix),
      replaced,
      "findByPrefix after replaceHash",
    );
    const peeked = storage.peekByPrefix?.(record.prefix) as ApiKeyRecord | undefined;
    if (peeked !== undefined) sameRecord(peeked, replaced, "peekByPrefix after replaceHash");
    check((await replace(record.id, record.hash, next)) === false, "the old hash is gone");
    const back = { hash: "e".repeat(64), hashScheme: "sha256" as const, pepperVersion: 0 };
    check((await replace(record.id, next.hash, back)) === true, "to a legacy scheme");
    sameRecord(await storage.findById(record.id), { ...record, ...back }, "legacy scheme written");
    check((await replace("no-such-id", record.hash, next)) === false, "an unknown id");
  });

  test("replaceHash (when present): of concurrent calls with one expected hash exactly one wins", async () => {
    const storage = await factory();
    const replace = storage.replaceHash?.bind(storage);
    if (replace === undefined) return;
    const record = sampleRecord({ hash: "f".repeat(64), hashScheme: "sha256" });
    await storage.insert(record);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        replace(record.id, record.hash, {
          hash: `${i}`.repeat(43),
          hashScheme: "hmac-sha256",
          pepperVersion: 1,
        })),
    );
    const winners = results.flatMap((won, i) => won === true ? [i] : []);
    check(winners.length === 1, `expected one winning replaceHash, got ${winners.length}`);
    check(
      (await storage.findById(record.id))!.hash === `${winners[0]}`.repeat(43),
      "the hash is the winner's",
    );
  });

  test("storesLayout (when true) keeps each record's layout through reads, listing and replaceHash; an absent one reads absent", async () => {
    const storage = await factory();
    if (storage.storesLayout !== true) return;
    const legacy = sampleRecord({ layout: "nestarc-v0", hash: "c".repeat(64) });
    const current = sampleRecord();
    await storage.insert(legacy);
    await storage.insert(current);
    const layouts = (records: (ApiKeyRecordInput | null)[]) => records.map((r) => r?.layout);
    const listed = await storage.listByTenant(legacy.tenantId, { includeRevoked: true });
    check(
      JSON.stringify(layouts([
        await storage.findById(legacy.id),
        await storage.findByPrefix(legacy.prefix),
        listed.find((r) => r.id === legacy.id) ?? null,
      ])) === JSON.stringify(["nestarc-v0", "nestarc-v0", "nestarc-v0"]),
      "the layout is kept",
    );
    check(
      layouts([await storage.findById(current.id)])[0] === undefined,
      "a record without a layout reads without one",
    );
    const replace = storage.replaceHash?.bind(storage);
    if (replace === undefined) return;
    const next = { hash: "N".repeat(43), hashScheme: "hmac-sha256" as const, pepperVersion: 1 };
    check(await replace(legacy.id, legacy.hash, next), "replaceHash of the legacy record");
    check(
      (await storage.findByPrefix(legacy.prefix))?.layout === "nestarc-v0",
      "replaceHash keeps the layout",
    );
  });

  test("storesRateLimits (when true) keeps each record's rateLimits through reads, listing and rotate; an absent one reads absent", async () => {
    const storage = await factory();
    if (storage.storesRateLimits !== true) return;
    const rateLimits = [
      { name: "burst", limit: 10, windowMs: 1_000, cost: 1 },
      { name: "day", limit: 5_000, windowMs: 86_400_000, cost: 2, sharedBy: "tenant" as const },
    ];
    // Field by field: a JSON column may reorder an object's keys.
    const shape = (record: ApiKeyRecordInput | null | undefined) =>
      JSON.stringify(
        record?.rateLimits?.map((p) => [p.name, p.limit, p.windowMs, p.cost, p.sharedBy]),
      );
    const limited = sampleRecord({ rateLimits });
    const plain = sampleRecord();
    await storage.insert(limited);
    await storage.insert(plain);
    const listed = await storage.listByTenant(limited.tenantId, { includeRevoked: true });
    for (
      const read of [
        await storage.findById(limited.id),
        await storage.findByPrefix(limited.prefix),
        listed.find((r) => r.id === limited.id) ?? null,
      ]
    ) {
      check(shape(read) === shape(limited), "rateLimits are kept");
    }
    check((await storage.findById(plain.id))?.rateLimits === undefined, "none reads absent");
    const newRecord = sampleRecord({
      tenantId: limited.tenantId,
      rateLimits: rateLimits.slice(0, 1),
    });
    await storage.rotate({
      oldKeyId: limited.id,
      newRecord,
      oldExpiresAt: new Date(Date.now() + 60_000),
      rotatedAt: new Date(),
    });
    check(
      shape(await storage.findByPrefix(newRecord.prefix)) === shape(newRecord),
      "rotate writes the new record's rateLimits",
    );
  });

  test("storesRateLimitKeyId (when true) keeps rateLimitKeyId through reads, listing and rotate; an absent one reads absent", async () => {
    const storage = await factory();
    if (storage.storesRateLimitKeyId !== true) return;
    const first = sampleRecord();
    const chained = sampleRecord({ tenantId: first.tenantId, rateLimitKeyId: first.id });
    await storage.insert(first);
    await storage.insert(chained);
    const listed = await storage.listByTenant(first.tenantId, { includeRevoked: true });
    for (
      const read of [
        await storage.findById(chained.id),
        await storage.findByPrefix(chained.prefix),
        listed.find((r) => r.id === chained.id) ?? null,
      ]
    ) {
      check(read?.rateLimitKeyId === first.id, "rateLimitKeyId is kept");
    }
    check((await storage.findById(first.id))?.rateLimitKeyId === undefined, "none reads absent");
    const newRecord = sampleRecord({ tenantId: first.tenantId, rateLimitKeyId: first.id });
    await storage.rotate({
      oldKeyId: chained.id,
      newRecord,
      oldExpiresAt: new Date(Date.now() + 60_000),
      rotatedAt: new Date(),
    });
    check(
      (await storage.findByPrefix(newRecord.prefix))?.rateLimitKeyId === first.id,
      "rotate writes the new record's rateLimitKeyId",
    );
  });

  test("storesCredits (when true) keeps credits through reads, listing, rotate and setCredits; Dates round-trip; an absent one reads absent", async () => {
    const storage = await factory();
    if (storage.storesCredits !== true) return;
    check(typeof storage.setCredits === "function", "storesCredits comes with setCredits");
    const access = new StorageAccess(storage, 5_000, "storage");
    // Field by field: a JSON column may reorder an object's keys.
    const shape = (record: ApiKeyRecordInput | null | undefined) => {
      const c = record?.credits;
      return c === undefined ? undefined : JSON.stringify([
        c.remaining,
        c.refill && Object.entries(c.refill).sort(),
        c.updatedAt instanceof Date ? c.updatedAt.getTime() : "not a Date",
        c.balanceKeyId,
      ]);
    };
    const credits = {
      remaining: 1_000,
      refill: { amount: 1_000, interval: "monthly" as const, day: 31 },
      updatedAt: new Date("2030-01-01T00:00:00.123Z"),
    };
    const funded = sampleRecord({ credits });
    const plain = sampleRecord();
    await storage.insert(funded);
    await storage.insert(plain);
    const listed = await access.listByTenant(funded.tenantId, true);
    for (
      const read of [
        await access.findById(funded.id),
        await access.findByPrefix(funded.prefix),
        listed.find((r) => r.id === funded.id) ?? null,
      ]
    ) {
      check(shape(read) === shape(funded), "credits are kept, updatedAt a Date");
    }
    check((await access.findById(plain.id))?.credits === undefined, "none reads absent");
    const newRecord = sampleRecord({
      tenantId: funded.tenantId,
      credits: { ...credits, remaining: 7, balanceKeyId: funded.id },
    });
    await storage.rotate({
      oldKeyId: funded.id,
      newRecord,
      oldExpiresAt: new Date(Date.now() + 60_000),
      rotatedAt: new Date(),
    });
    check(
      shape(await access.findByPrefix(newRecord.prefix)) === shape(newRecord),
      "rotate writes the new record's credits",
    );
    const written = { remaining: 3, updatedAt: new Date("2030-01-02T00:00:00.456Z") };
    await storage.setCredits!(plain.id, written);
    check(
      shape(await access.findById(plain.id)) === shape({ ...plain, credits: written }),
      "setCredits writes the balance back",
    );
    await storage.setCredits!("no-such-key", written);
    check(await storage.findById("no-such-key") === null, "setCredits ignores an unknown id");
  });

  test("storesCredits (when true) keeps a tenant's shared pool: sharedBy and a pool beside a key's own balance round-trip, their Dates as Dates", async () => {
    const storage = await factory();
    if (storage.storesCredits !== true) return;
    const access = new StorageAccess(storage, 5_000, "storage");
    const balance = (c: { remaining: number; refill?: object; updatedAt: unknown } | undefined) =>
      c && [
        c.remaining,
        c.refill && Object.entries(c.refill).sort(),
        c.updatedAt instanceof Date ? c.updatedAt.getTime() : "not a Date",
      ];
    const shape = (record: ApiKeyRecordInput | null | undefined) => {
      const c = record?.credits;
      return JSON.stringify(c && [balance(c), c.sharedBy ?? null, balance(c.pool) ?? null]);
    };
    const pool = {
      remaining: 50_000,
      refill: { amount: 50_000, interval: "monthly" as const },
      updatedAt: new Date("2030-01-01T00:00:00.789Z"),
    };
    const shared = sampleRecord({ credits: { ...pool, sharedBy: "tenant" } });
    const both = sampleRecord({
      tenantId: shared.tenantId,
      credits: { remaining: 10, updatedAt: new Date("2030-01-03T00:00:00.001Z"), pool },
    });
    await storage.insert(shared);
    await storage.insert(both);
    for (const record of [shared, both]) {
      check(shape(await access.findById(record.id)) === shape(record), "the pool is kept");
      const listed = (await access.listByTenant(record.tenantId, true)).find((r) =>
        r.id === record.id
      );
      check(shape(listed) === shape(record), "the pool is kept in a listing");
    }
    const written = { ...both.credits!, pool: { ...pool, remaining: 4, updatedAt: new Date(5) } };
    await storage.setCredits!(both.id, written);
    check(
      shape(await access.findById(both.id)) === shape({ ...both, credits: written }),
      "setCredits writes the pool back",
    );
  });

  test("ready (when present) resolves on a storage set up as it should be", async () => {
    const storage = await factory();
    await storage.ready?.();
  });

  test("countHashes (when present) counts usable records per hash scheme and pepper version (a key rotated without grace ended at its rotation, whatever the clock)", async () => {
    const storage = await factory();
    const count = storage.countHashes?.bind(storage);
    if (count === undefined) return;
    const now = new Date("2030-06-01T00:00:00.000Z");
    const later = new Date("2030-06-02T00:00:00.000Z");
    const records = [
      sampleRecord(),
      sampleRecord({ pepperVersion: 2, expiresAt: null }),
      sampleRecord({ pepperVersion: 2, expiresAt: later }),
      sampleRecord({ hash: "a".repeat(64), hashScheme: "sha256-pepper" }),
      sampleRecord({ hash: "b".repeat(64), hashScheme: "sha256", pepperVersion: 0 }),
      sampleRecord({ tenantId: "tenant-b", hash: "c".repeat(64), hashScheme: "sha256-pepper" }),
      sampleRecord({ hashScheme: "hmac-sha256", expiresAt: now }), // expired at `now`
      sampleRecord({ hash: "d".repeat(64), hashScheme: "sha256", pepperVersion: 0 }), // revoked
      // Rotated with a grace ending after `now`: usable.
      sampleRecord({ pepperVersion: 3, rotatedAt: new Date(now.getTime() - 1), expiresAt: later }),
      // Rotated without grace on a clock ahead of `now`: ended at its rotation, never usable.
      sampleRecord({ pepperVersion: 4, rotatedAt: later, expiresAt: later }),
    ];
    for (const record of records) await storage.insert(record);
    await storage.markRevoked(records[7].id, now);
    // A storage without rotatedAt (0.1's shape) reads the last one as a key expiring later.
    const keepsRotation = (await storage.findById(records[9].id))?.rotatedAt != null;
    const rows = await count(now);
    const seen = Object.fromEntries(
      rows.map((row) => [`${row.hashScheme} ${row.pepperVersion}`, row.count]),
    );
    check(
      JSON.stringify(Object.entries(seen).sort()) === JSON.stringify(
        Object.entries({
          "hmac-sha256 1": 1,
          "hmac-sha256 2": 2,
          "hmac-sha256 3": 1,
          ...(keepsRotation ? {} : { "hmac-sha256 4": 1 }),
          "sha256-pepper 1": 2,
          "sha256 0": 1,
        }).sort(),
      ),
      `countHashes rows: ${JSON.stringify(seen)}`,
    );
    check(rows.length === Object.keys(seen).length, "one row per scheme and version");
  });

  test("peekByPrefix (when present) answers at once what findByPrefix answers", async () => {
    const storage = await factory();
    const peek = storage.peekByPrefix?.bind(storage);
    if (peek === undefined) return;
    const record = sampleRecord();
    await storage.insert(record);
    const seen = peek(record.prefix) as ApiKeyRecord | null;
    check(
      typeof (seen as { then?: unknown } | null)?.then !== "function",
      "peekByPrefix answers synchronously, not a promise",
    );
    sameRecord(seen, record, "peekByPrefix");
    sameRecord(
      await storage.findByPrefix(record.prefix),
      seen!,
      "findByPrefix next to peekByPrefix",
    );
    check(peek("NoSuchPrefix") === null, "peekByPrefix of an unknown prefix");
  });

  test("peekByPrefix (when present) sees each write at once: revoke, rotate, lastUsedAt", async () => {
    const storage = await factory();
    const peek = storage.peekByPrefix?.bind(storage);
    if (peek === undefined) return;
    const revoked = sampleRecord();
    await storage.insert(revoked);
    const at = new Date("2030-01-01T07:00:00.000Z");
    check(peek(revoked.prefix)?.revokedAt === null, "revokedAt before the revoke");
    await storage.markRevoked(revoked.id, at);
    check(time(peek(revoked.prefix)?.revokedAt) === at.getTime(), "revokedAt seen by peekByPrefix");
    const used = sampleRecord();
    await storage.insert(used);
    check(peek(used.prefix)?.lastUsedAt === null, "lastUsedAt before the write");
    await storage.touchLastUsed(used.id, at);
    check(time(peek(used.prefix)?.lastUsedAt) === at.getTime(), "lastUsedAt seen by peekByPrefix");
    const old = sampleRecord();
    await storage.insert(old);
    check(peek(old.prefix)?.rotatedAt === null, "rotatedAt before the rotation");
    const input = rotationOf(old);
    await storage.rotate(input);
    const oldSeen = peek(old.prefix);
    check(
      time(oldSeen?.rotatedAt) === input.rotatedAt.getTime() &&
        time(oldSeen?.expiresAt) === input.oldExpiresAt.getTime() &&
        oldSeen?.replacedByKeyId === input.newRecord.id,
      "the rotated record seen by peekByPrefix",
    );
    sameRecord(peek(input.newRecord.prefix) as ApiKeyRecord | null, input.newRecord, "new record");
  });

  test("listExpiring (when present) pages through the unrevoked keys of a window by expiry", async () => {
    const storage = await factory();
    const list = storage.listExpiring?.bind(storage);
    if (list === undefined) return;
    const base = Date.parse("2031-01-01T00:00:00.000Z");
    const at = (hours: number) => new Date(base + hours * 3_600_000);
    const inWindow = [
      sampleRecord({ id: "contract-exp-c", expiresAt: at(2) }),
      sampleRecord({ id: "contract-exp-a", expiresAt: at(2) }),
      sampleRecord({ id: "contract-exp-b", expiresAt: at(1), tenantId: "tenant-b" }),
      sampleRecord({ id: "contract-exp-d", expiresAt: at(5) }),
    ];
    const rotated = sampleRecord({ id: "contract-exp-e", expiresAt: at(6) });
    const outside = [
      sampleRecord({ expiresAt: at(0) }), // at `from`: excluded
      sampleRecord({ expiresAt: at(7) }), // after `until`
      sampleRecord({ expiresAt: null }),
      sampleRecord({ expiresAt: at(3) }), // revoked below
    ];
    for (const record of [...inWindow, rotated, ...outside]) await storage.insert(record);
    await storage.markRevoked(outside[3].id, at(-1));
    const rotation = rotationOf(rotated);
    await storage.rotate({ ...rotation, oldExpiresAt: at(6) });
    const ids = async (after: { expiresAt: Date; id: string } | null, limit: number) =>
      (await list({ from: at(0), until: at(6), after, limit })).map((record) => record.id);
    const all = await ids(null, 100);
    check(
      JSON.stringify(all) === JSON.stringify([
        "contract-exp-b",
        "contract-exp-a",
        "contract-exp-c",
        "contract-exp-d",
        "contract-exp-e",
      ]),
      `listExpiring: unrevoked keys of (from, until] by expiresAt then id, got ${all}`,
    );
    const first = await ids(null, 2);
    check(JSON.stringify(first) === JSON.stringify(all.slice(0, 2)), "first page of 2");
    const next = await ids({ expiresAt: at(2), id: "contract-exp-a" }, 2);
    check(JSON.stringify(next) === JSON.stringify(all.slice(2, 4)), "the page after a cursor");
    const page = await list({ from: at(0), until: at(6), after: null, limit: 1 });
    sameRecord(page[0], { ...inWindow[2] }, "a listed record");
  });

  test("claimExpiryNotice (when present): once per key and threshold, then only smaller ones", async () => {
    const storage = await factory();
    const claim = storage.claimExpiryNotice?.bind(storage);
    if (claim === undefined) return;
    const at = new Date("2031-01-01T00:00:00.000Z");
    const day = 86_400_000;
    check((await claim("contract-claim-1", 7 * day, at)) === true, "first claim of 7 days");
    check((await claim("contract-claim-1", 7 * day, at)) === false, "the same claim again");
    check((await claim("contract-claim-1", 30 * day, at)) === false, "a larger threshold after");
    check((await claim("contract-claim-1", day, at)) === true, "a smaller threshold after");
    check((await claim("contract-claim-1", 7 * day, at)) === false, "7 days after 1 day");
    check((await claim("contract-claim-1", 0, at)) === true, "threshold 0 (rotation completed)");
    check((await claim("contract-claim-1", 0, at)) === false, "threshold 0 again");
    check((await claim("contract-claim-2", 30 * day, at)) === true, "claims are per key");
  });

  test("claimExpiryNotice (when present): of concurrent claims exactly one wins", async () => {
    const storage = await factory();
    const claim = storage.claimExpiryNotice?.bind(storage);
    if (claim === undefined) return;
    const at = new Date("2031-01-01T00:00:00.000Z");
    const results = await Promise.all(
      Array.from({ length: 8 }, () => claim("contract-claim-race", 3_600_000, at)),
    );
    const won = results.filter((result) => result === true).length;
    check(won === 1, `expected one winning claim, got ${won}`);
    check(results.every((result) => typeof result === "boolean"), "answers are booleans");
  });

  test("saveRotationWait and findRotationWait (when present) keep a wait by its new key id", async () => {
    const storage = await factory();
    const save = storage.saveRotationWait?.bind(storage);
    const find = storage.findRotationWait?.bind(storage);
    if (save === undefined || find === undefined) return;
    const wait = {
      newKeyId: "contract-wait-new",
      oldKeyId: "contract-wait-old",
      gracePeriodMs: 3_600_000,
      waitEndsAt: new Date("2031-01-08T01:00:00.000Z"),
    };
    await save(wait);
    const found = await find(wait.newKeyId);
    check(
      found !== null && found.newKeyId === wait.newKeyId && found.oldKeyId === wait.oldKeyId &&
        found.gracePeriodMs === wait.gracePeriodMs &&
        time(found.waitEndsAt) === wait.waitEndsAt.getTime(),
      "findRotationWait answers the saved wait",
    );
    check((await find("contract-wait-none")) === null, "findRotationWait of an unknown id");
  });

  test("lowerExpiry (when present) is a compare-and-set on expiresAt with one winner", async () => {
    const storage = await factory();
    const lower = storage.lowerExpiry?.bind(storage);
    if (lower === undefined) return;
    const record = sampleRecord();
    await storage.insert(record);
    const expected = record.expiresAt!;
    const next = new Date(expected.getTime() - 3_600_000);
    check(
      (await lower(record.id, next, next)) === false,
      "a wrong expected expiry changes nothing",
    );
    check(time((await storage.findById(record.id))!.expiresAt) === expected.getTime(), "unchanged");
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => lower(record.id, expected, new Date(next.getTime() - i))),
    );
    const winners = results.flatMap((won, i) => won === true ? [i] : []);
    check(winners.length === 1, `expected one winning lowerExpiry, got ${winners.length}`);
    check(
      time((await storage.findById(record.id))!.expiresAt) === next.getTime() - winners[0],
      "expiresAt is the winner's",
    );
    check((await lower("no-such-id", expected, next)) === false, "an unknown id answers false");
  });

  test("markRevokedForTenant and rotateForTenant (when present): 1,000 random (tenant, id) pairs, half foreign, change exactly the owned rows", async () => {
    const storage = await factory();
    const revoke = storage.markRevokedForTenant?.bind(storage);
    const rotate = storage.rotateForTenant?.bind(storage);
    if (revoke === undefined || rotate === undefined) return;
    const tenants = ["tenant-a", "tenant-b", "tenant-c", "tenant-d"];
    const random = seededRandom(31);
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
    const records = Array.from(
      { length: 40 },
      (_, i) => sampleRecord({ tenantId: tenants[i % 4] }),
    );
    for (const record of records) await storage.insert(record);
    const expected = new Map(records.map((record) => [record.id, { ...record }]));
    const base = Date.parse("2030-02-01T00:00:00.000Z");
    for (let i = 0; i < 1_000; i++) {
      const target = pick([...expected.values()]);
      const foreign = i % 2 === 1;
      const tenantId = foreign
        ? pick(tenants.filter((t) => t !== target.tenantId))
        : target.tenantId;
      const at = new Date(base + i * 1000);
      const label = `pair ${i} (${foreign ? "foreign" : "owned"})`;
      if (random() < 0.5) {
        if (foreign) {
          await rejectsWith(revoke(tenantId, target.id, at), "api_key_record_not_found", label);
          continue;
        }
        const answer = await revoke(tenantId, target.id, at);
        check(answer === (target.revokedAt === null), `${label}: revoke answered ${answer}`);
        if (answer) target.revokedAt = at;
        continue;
      }
      const input = { ...rotationOf(target), oldExpiresAt: at, rotatedAt: at };
      input.newRecord.tenantId = tenantId;
      if (foreign || target.rotatedAt !== null || target.revokedAt !== null) {
        if (foreign) await rejectsWith(rotate(tenantId, input), "api_key_record_not_found", label);
        else await notRotatable(rotate(tenantId, input), label);
        await leftNothingUsable(storage, input.newRecord.id, label);
        continue;
      }
      await rotate(tenantId, input);
      Object.assign(target, { rotatedAt: at, expiresAt: at, replacedByKeyId: input.newRecord.id });
      expected.set(input.newRecord.id, { ...input.newRecord });
    }
    for (const record of expected.values()) {
      sameRecord(await storage.findById(record.id), record, `after the pairs, ${record.id}`);
    }
  });

  test("listPageByTenant (when present): filters, orders, pages after the cursor, names predecessors, writes nothing", async () => {
    const storage = await factory();
    const list = storage.listPageByTenant?.bind(storage);
    if (list === undefined) return;
    const base = Date.parse("2030-06-01T00:00:00.000Z");
    const at = (hours: number) => new Date(base + hours * HOUR);
    const tenantId = "tenant-page";
    const r = [
      sampleRecord({ tenantId, name: "echo", lastUsedAt: at(10) }),
      sampleRecord({ tenantId, name: "alpha", environment: "test" }),
      sampleRecord({ tenantId, name: "deploy BOT", lastUsedAt: at(12), revokedAt: at(20) }),
      sampleRecord({ tenantId, name: "charlie", expiresAt: at(50) }),
      sampleRecord({ tenantId, name: "bravo", lastUsedAt: at(10), rotatedAt: at(30) }),
      sampleRecord({ tenantId, name: "foxtrot" }),
      sampleRecord({ tenantId, name: "golf", environment: "test", lastUsedAt: at(11) }),
    ].map((record, i) => ({ ...record, createdAt: at(i) }));
    r[4].replacedByKeyId = r[5].id;
    const foreign = sampleRecord({
      tenantId: "tenant-page-other",
      name: "alpha",
      createdAt: at(3),
    });
    for (const record of [...r, foreign]) await storage.insert(record);
    // A storage on 0.1's record shape keeps no rotation: key 4 reads as active, replacing none.
    const keepsRotation = (await storage.findById(r[4].id))?.rotatedAt != null;
    if (!keepsRotation) r[4] = { ...r[4], rotatedAt: null, replacedByKeyId: null };
    const now = at(100);
    const base_options: ListApiKeyPageOptions = {
      limit: 100,
      after: null,
      q: null,
      status: "unrevoked",
      environment: null,
      sort: "created_desc",
      now,
    };
    const sortValue = (record: ApiKeyRecordInput, sort: ListApiKeyPageOptions["sort"]) =>
      sort === "name_asc"
        ? record.name
        : sort === "last_used_desc"
        ? record.lastUsedAt ?? null
        : record.createdAt;
    /** Every page of `options` of `size`, the ids in order. */
    const walk = async (options: Partial<ListApiKeyPageOptions>, size: number) => {
      const ids: string[] = [];
      const merged = { ...base_options, ...options, limit: size };
      let after: ListApiKeyPageOptions["after"] = null;
      for (let pages = 0; pages < 20; pages++) {
        const page = await list(tenantId, { ...merged, after });
        check(page.records.length <= size, `${JSON.stringify(options)}: page longer than limit`);
        ids.push(...page.records.map((record) => record.id));
        const last = page.records.at(-1);
        if (page.records.length < size || last === undefined) return ids;
        after = { id: last.id, value: sortValue(last, merged.sort) };
      }
      throw new ApiKeyStorageContractError("paging did not end");
    };
    const expect = async (options: Partial<ListApiKeyPageOptions>, indexes: number[]) => {
      const expected = indexes.map((i) => r[i].id);
      for (const size of [100, 2, 1]) {
        const ids = await walk(options, size);
        check(
          JSON.stringify(ids) === JSON.stringify(expected),
          `${JSON.stringify(options)} by ${size}: [${
            ids.map((id) => r.findIndex((x) => x.id === id))
          }], expected [${indexes}]`,
        );
      }
    };
    await expect({}, [6, 5, 4, 3, 1, 0]);
    await expect({ sort: "created_asc", status: "all" }, [0, 1, 2, 3, 4, 5, 6]);
    await expect({ sort: "name_asc" }, [1, 4, 3, 0, 5, 6]);
    await expect({ sort: "last_used_desc", status: "all" }, [2, 6, 0, 4, 1, 3, 5]);
    await expect({ status: "active" }, keepsRotation ? [6, 5, 1, 0] : [6, 5, 4, 1, 0]);
    await expect({ status: "rotating" }, keepsRotation ? [4] : []);
    await expect({ status: "expired" }, [3]);
    await expect({ status: "revoked" }, [2]);
    await expect({ environment: "test" }, [6, 1]);
    await expect({ environment: "live", status: "active" }, keepsRotation ? [5, 0] : [5, 4, 0]);
    await expect({ q: "bot", status: "all" }, [2]);
    await expect({ q: "BOT" }, []);
    await expect({ q: "Bot", status: "revoked" }, [2]);
    await expect({ q: "ha" }, [3, 1]);
    // LIKE wildcards are text like any other.
    await expect({ q: "_", status: "all" }, []);
    await expect({ q: "%", status: "all" }, []);
    await expect({ q: r[5].prefix }, [5]);
    await expect({ q: r[5].prefix.slice(0, -1), sort: "name_asc" }, [5]);
    const page = await list(tenantId, { ...base_options, status: "all" });
    check(
      JSON.stringify(page.predecessors) ===
        JSON.stringify(keepsRotation ? { [r[5].id]: r[4].id } : {}),
      "predecessors: the rotated key by its successor's id",
    );
    const none = await list(tenantId, { ...base_options, status: "revoked" });
    check(Object.keys(none.predecessors).length === 0, "predecessors: only of the page's records");
    const empty = await list("tenant-page-none", base_options);
    check(empty.records.length === 0, "another tenant's page is empty");
    for (const record of [...r, foreign]) {
      sameRecord(await storage.findById(record.id), record, `after listing, ${record.id}`);
    }
  });

  test("listPageByTenant (when present): a key rotated without grace (expiresAt at or before rotatedAt) is expired whatever now", async () => {
    const storage = await factory();
    const list = storage.listPageByTenant?.bind(storage);
    if (list === undefined) return;
    const tenantId = "tenant-page-ended";
    // The rotating instance's clock ahead of the lister's `now`: every rotation is after it.
    const now = new Date(Date.parse("2030-06-01T00:00:00.000Z"));
    const at = (ms: number) => new Date(now.getTime() + ms);
    const r = [
      sampleRecord({ tenantId, name: "ended", rotatedAt: at(5_000), expiresAt: at(5_000) }),
      sampleRecord({ tenantId, name: "lowered", rotatedAt: at(5_000), expiresAt: at(4_000) }),
      sampleRecord({ tenantId, name: "graced", rotatedAt: at(5_000), expiresAt: at(5_001) }),
      sampleRecord({ tenantId, name: "plain", expiresAt: at(1) }),
      sampleRecord({ tenantId, name: "lasting", rotatedAt: at(5_000) }),
    ].map((record, i) => ({ ...record, createdAt: new Date(i) }));
    for (const record of r) await storage.insert(record);
    // A storage on 0.1's record shape keeps no rotation: nothing to judge.
    if ((await storage.findById(r[0].id))?.rotatedAt == null) return;
    const options: ListApiKeyPageOptions = {
      limit: 100,
      after: null,
      q: null,
      status: "all",
      environment: null,
      sort: "created_asc",
      now,
    };
    for (
      const [status, indexes] of [
        ["expired", [0, 1]],
        ["rotating", [2, 4]],
        ["active", [3]],
        ["unrevoked", [0, 1, 2, 3, 4]],
      ] as const
    ) {
      const page = await list(tenantId, { ...options, status });
      const got = page.records.map((record) => r.findIndex((x) => x.id === record.id));
      check(
        JSON.stringify(got) === JSON.stringify(indexes),
        `status ${status}: [${got}], expected [${indexes}]`,
      );
    }
  });

  test("findByReplacement (when present): the tenant's key a rotation replaced, revoked ones too, never another tenant's; writes nothing", async () => {
    const storage = await factory();
    const find = storage.findByReplacement?.bind(storage);
    if (find === undefined) return;
    const tenantId = "tenant-replaced";
    const old = sampleRecord({ tenantId });
    await storage.insert(old);
    const rotation = rotationOf(old);
    await storage.rotate(rotation);
    const next = rotation.newRecord;
    // A storage on 0.1's record shape keeps no rotation: then it finds none.
    const keepsRotation = (await storage.findById(old.id))?.replacedByKeyId === next.id;
    const replaced = await find(tenantId, next.id);
    if (keepsRotation) {
      sameRecord(replaced, { ...old, ...(await storage.findById(old.id))! }, "the rotated key");
    } else check(replaced === null, "no rotation kept, none found");
    check(await find(tenantId, old.id) === null, "a key that replaced none: null");
    check(await find("tenant-replaced-other", next.id) === null, "another tenant's: null");
    check(await find(tenantId, "no-such-key") === null, "an unknown id: null");
    // Same successor id in two tenants (a bad row): each tenant finds only its own.
    const foreign = sampleRecord({ tenantId: "tenant-replaced-other", replacedByKeyId: "shared" });
    const mine = sampleRecord({ tenantId, replacedByKeyId: "shared", revokedAt: new Date(0) });
    await storage.insert(foreign);
    await storage.insert(mine);
    const stored = [(await storage.findById(foreign.id))!, (await storage.findById(mine.id))!];
    const found = await find(tenantId, "shared");
    if (stored[1].replacedByKeyId === "shared") {
      sameRecord(found, mine, "a revoked one is found, in its tenant only");
      sameRecord(await find(foreign.tenantId, "shared"), foreign, "the other tenant's own");
    } else check(found === null, "no replacedByKeyId kept, none found");
    for (const record of stored) {
      sameRecord(await storage.findById(record.id), record, `after finding, ${record.id}`);
    }
  });

  test("findManyByIds (when present): in one call, the tenant's records among the ids as findById reads them, revoked ones too, in any order; unknown ids and another tenant's left out; writes nothing", async () => {
    const storage = await factory();
    const find = storage.findManyByIds?.bind(storage);
    if (find === undefined) return;
    const tenantId = "tenant-many";
    const mine = [
      sampleRecord({ tenantId }),
      sampleRecord({ tenantId, revokedAt: new Date(0) }),
      sampleRecord({ tenantId }),
    ];
    const foreign = sampleRecord({ tenantId: "tenant-many-other" });
    for (const record of [...mine, foreign]) await storage.insert(record);
    const stored = await Promise.all([...mine, foreign].map(({ id }) => storage.findById(id)));
    /** The answer for `ids` of `tenant`: exactly the records `expected`, each as findById reads it. */
    const expect = async (tenant: string, ids: string[], expected: number[], label: string) => {
      const found = await find(tenant, ids);
      check(Array.isArray(found), `${label}: an array`);
      const got = found.map((record) => record.id).sort();
      const want = expected.map((i) => stored[i]!.id).sort();
      check(JSON.stringify(got) === JSON.stringify(want), `${label}: ${got} instead of ${want}`);
      for (const i of expected) {
        sameRecord(found.find((record) => record.id === stored[i]!.id) ?? null, stored[i]!, label);
      }
    };
    const ids = [mine[2].id, foreign.id, "no-such-key", mine[0].id, mine[1].id];
    await expect(tenantId, ids, [0, 1, 2], "the tenant's, revoked too");
    await expect(tenantId, [...ids].reverse(), [0, 1, 2], "in another order, the same");
    await expect(tenantId, [mine[1].id], [1], "one id");
    await expect(tenantId, [foreign.id, "no-such-key"], [], "another tenant's and unknown: none");
    await expect(foreign.tenantId, ids, [3], "the other tenant's own only");
    await expect("tenant-many-none", ids, [], "a tenant without keys: none");
    for (const [i, record] of [...mine, foreign].entries()) {
      sameRecord(await storage.findById(record.id), stored[i]!, `after finding, ${record.id}`);
    }
  });

  test("findTenantPool (when present, with storesCredits): the tenant's record with the newest pool copy, revoked ones too, ties to the newest record; what listByTenant gives", async () => {
    const storage = await factory();
    const find = storage.findTenantPool?.bind(storage);
    if (find === undefined || storage.storesCredits !== true) return;
    const access = new StorageAccess(storage, 5_000, "storage");
    const tenantId = "tenant-pool";
    const at = (ms: number) => new Date(Date.parse("2030-01-01T00:00:00.000Z") + ms);
    const pool = (ms: number) => ({ remaining: ms, updatedAt: at(ms) });
    /** The id `findTenantPool` answers, checked against the rule over `listByTenant`. */
    const newest = async (tenant = tenantId) => {
      const found = await find(tenant);
      const expected = newestPoolRecord(await access.listByTenant(tenant, true));
      check(
        (found?.id ?? null) === (expected?.id ?? null),
        `findTenantPool answered ${found?.id ?? null}, the newest copy is ${expected?.id ?? null}`,
      );
      return found;
    };
    check(await newest() === null, "no record: null");
    await storage.insert(sampleRecord({ tenantId }));
    await storage.insert(sampleRecord({ tenantId, credits: pool(900) }));
    check(await newest() === null, "no record spends a pool: null");
    const shared = sampleRecord({ tenantId, credits: { ...pool(10), sharedBy: "tenant" } });
    const beside = sampleRecord({ tenantId, credits: { ...pool(500), pool: pool(20) } });
    const revoked = sampleRecord({
      tenantId,
      revokedAt: at(0),
      credits: { ...pool(1), sharedBy: "tenant" },
      createdAt: at(-5),
    });
    const foreign = sampleRecord({
      tenantId: "tenant-pool-other",
      credits: { ...pool(99), sharedBy: "tenant" },
    });
    for (const record of [shared, beside, foreign]) await storage.insert(record);
    check((await newest())?.id === beside.id, "the pool beside a key's own balance, by its date");
    await storage.insert(revoked);
    await storage.setCredits!(revoked.id, { ...pool(30), sharedBy: "tenant" });
    const found = await newest();
    check(found?.id === revoked.id, "a revoked record's copy counts");
    check(
      found?.credits?.updatedAt instanceof Date &&
        found.credits.updatedAt.getTime() === at(30).getTime(),
      "the copy as written, its date a Date",
    );
    // Equal dates (a write-back writes every copy alike): the newest record, then the smaller id.
    await storage.setCredits!(shared.id, { ...pool(30), sharedBy: "tenant" });
    check((await newest())?.id === shared.id, "a tie: the newer record");
    const twin = sampleRecord({
      tenantId,
      createdAt: shared.createdAt,
      credits: { ...pool(30), sharedBy: "tenant" },
    });
    await storage.insert(twin);
    await newest();
    check((await newest("tenant-pool-other"))?.id === foreign.id, "each tenant its own");
    check(await newest("tenant-pool-none") === null, "another tenant: null");
  });

  test("setTenantPool (when present, with storesCredits): the pool copy of every record of the tenant spending it, revoked ones too, nothing else; answers their prefixes", async () => {
    const storage = await factory();
    const set = storage.setTenantPool?.bind(storage);
    if (set === undefined || storage.storesCredits !== true) return;
    const tenantId = "tenant-pool-set";
    const refill = { amount: 50, interval: "daily" as const };
    const at = new Date("2030-01-01T00:00:00.000Z");
    const shared = sampleRecord({
      tenantId,
      credits: { remaining: 40, refill, updatedAt: at, sharedBy: "tenant" },
    });
    const beside = sampleRecord({
      tenantId,
      revokedAt: at,
      credits: {
        remaining: 9,
        updatedAt: at,
        balanceKeyId: "k0",
        pool: { remaining: 40, refill, updatedAt: at },
      },
    });
    const own = sampleRecord({ tenantId, credits: { remaining: 3, updatedAt: at } });
    const none = sampleRecord({ tenantId });
    const foreign = sampleRecord({
      tenantId: "tenant-pool-set-other",
      credits: { remaining: 40, refill, updatedAt: at, sharedBy: "tenant" },
    });
    const records = [shared, beside, own, none, foreign];
    for (const record of records) await storage.insert(record);
    const written = new Date("2030-01-02T03:04:05.678Z");
    const prefixes = await set(tenantId, 17, written);
    check(
      JSON.stringify([...prefixes].sort()) ===
        JSON.stringify([shared.prefix, beside.prefix].sort()),
      `setTenantPool answered [${prefixes}], the prefixes of the records spending the pool`,
    );
    const expected = (record: ApiKeyRecord) => {
      const credits = withPoolBalance(record.credits, 17, written);
      return record.tenantId === tenantId && credits !== undefined
        ? { ...record, credits }
        : record;
    };
    const shape = (credits: ApiKeyRecordInput["credits"]) => canonicalJson(credits ?? null);
    for (const record of records) {
      const read = await storage.findById(record.id);
      sameRecord(read, record, `after setTenantPool, ${record.id}`);
      const credits = read?.credits;
      check(
        shape(credits) === shape(expected(record).credits) &&
          (credits?.updatedAt ?? null) instanceof Date === (record.credits !== undefined),
        `after setTenantPool, ${record.id}: credits ${shape(credits)}`,
      );
    }
    check(
      JSON.stringify(await set("tenant-pool-set-none", 1, written)) === "[]",
      "a tenant without a pool: none written",
    );
  });

  test("renameForTenant (when present): renames only the owning tenant's row, only its name", async () => {
    const storage = await factory();
    const rename = storage.renameForTenant?.bind(storage);
    if (rename === undefined) return;
    const tenants = ["tenant-a", "tenant-b", "tenant-c"];
    const records = Array.from(
      { length: 12 },
      (_, i) => sampleRecord({ tenantId: tenants[i % 3] }),
    );
    for (const record of records) await storage.insert(record);
    const expected = new Map(records.map((record) => [record.id, { ...record }]));
    for (const [i, target] of records.entries()) {
      for (const tenantId of tenants.filter((tenant) => tenant !== target.tenantId)) {
        await rejectsWith(
          rename(tenantId, target.id, "stolen"),
          "api_key_record_not_found",
          `${i}`,
        );
      }
      const name = `renamed ${i} ✓`;
      await rename(target.tenantId, target.id, name);
      expected.get(target.id)!.name = name;
    }
    await rejectsWith(rename("tenant-a", "no-such-id", "x"), "api_key_record_not_found", "unknown");
    for (const record of expected.values()) {
      sameRecord(await storage.findById(record.id), record, `after renames, ${record.id}`);
    }
  });

  test("replaceNameForTenant (when present): renames only the owning tenant's row while it has the expected name; false and unchanged otherwise", async () => {
    const storage = await factory();
    const replace = storage.replaceNameForTenant?.bind(storage);
    if (replace === undefined) return;
    const key = sampleRecord({ tenantId: "tenant-a", name: "a" });
    const other = sampleRecord({ tenantId: "tenant-a", name: "a" });
    await storage.insert(key);
    await storage.insert(other);
    await rejectsWith(replace("tenant-b", key.id, "a", "stolen"), "api_key_record_not_found", "b");
    await rejectsWith(replace("tenant-a", "no-such-id", "a", "x"), "api_key_record_not_found", "?");
    check(await replace("tenant-a", key.id, "a", "b ✓") === true, "a to b");
    check(await replace("tenant-a", key.id, "a", "c") === false, "no longer a: false");
    check(await replace("tenant-a", key.id, "b ✓", "c") === true, "b to c");
    sameRecord(await storage.findById(key.id), { ...key, name: "c" }, "renamed twice");
    sameRecord(await storage.findById(other.id), other, "the other key untouched");
    const names = await Promise.all(
      ["d", "e", "f"].map((name) => replace("tenant-a", other.id, "a", name)),
    );
    check(names.filter(Boolean).length === 1, `one of three renames from a wins: ${names}`);
  });

  test("recordUsage and readUsage (when present): counts add up per (key, hour), lastUsedAt only rises, reads stay in the tenant and window", async () => {
    const storage = await factory();
    const record = storage.recordUsage?.bind(storage);
    const read = storage.readUsage?.bind(storage);
    if (record === undefined || read === undefined) return;
    const a = sampleRecord({ tenantId: "tenant-usage" });
    const b = sampleRecord({ tenantId: "tenant-usage" });
    const foreign = sampleRecord({ tenantId: "tenant-usage-other" });
    for (const key of [a, b, foreign]) await storage.insert(key);
    const late = new Date(USAGE_START + 30 * 60_000);
    await record([usageRow(a, 0, 1, late), usageRow(b, 0, 2), usageRow(foreign, 0, 5)]);
    await record([usageRow(a, 0, 3, new Date(USAGE_START)), usageRow(a, 1, 4)]);
    await record([usageRow(sampleRecord(), 0, 1, late)]); // a key that is not stored
    check(
      time((await storage.findById(a.id))!.lastUsedAt) === late.getTime(),
      "lastUsedAt rose once",
    );
    check((await storage.findById(b.id))!.lastUsedAt === null, "a null lastUsedAt changes nothing");
    const window = { from: new Date(USAGE_START), to: new Date(USAGE_START + 2 * HOUR) };
    const all = await read({ tenantId: "tenant-usage", ...window });
    check(all.length === 2, `expected 2 hours, got ${all.length}`);
    check(time(all[0].start) === USAGE_START && time(all[1].start) === USAGE_START + HOUR, "order");
    // Hour 0: a (1 then 3) and b (2), summed: n = 6 over three rows.
    check(all[0].accepted === 60 && all[0].cost === 600, "hour 0 accepted and cost");
    check(
      API_KEY_USAGE_REFUSALS.every((code, i) => all[0].refused[code] === 6 + 3 * i),
      "hour 0 refusals per code",
    );
    check(all[1].accepted === 40 && all[1].refused.api_key_usage_exceeded === 11, "hour 1");
    const onlyB = await read({ tenantId: "tenant-usage", keyId: b.id, ...window });
    check(onlyB.length === 1 && onlyB[0].accepted === 20, "one key's hours");
    const foreignKey = await read({ tenantId: "tenant-usage", keyId: foreign.id, ...window });
    check(foreignKey.length === 0, "another tenant's key reads as nothing");
    const second = await read({
      tenantId: "tenant-usage",
      from: new Date(USAGE_START + HOUR),
      to: new Date(USAGE_START + 2 * HOUR),
    });
    check(
      second.length === 1 && second[0].accepted === 40,
      "the window's start is included, its end not",
    );
  });

  test("recordUsage and readUsage (when present): a total past 2^53 - 1 stays 2^53 - 1 (a row's sum, a read's sum), and other rows are stored", async () => {
    const storage = await factory();
    const record = storage.recordUsage?.bind(storage);
    const read = storage.readUsage?.bind(storage);
    if (record === undefined || read === undefined) return;
    const [a, b] = [
      sampleRecord({ tenantId: "tenant-huge" }),
      sampleRecord({ tenantId: "tenant-huge" }),
    ];
    for (const key of [a, b]) await storage.insert(key);
    const huge = (key: ApiKeyRecord) => ({ ...usageRow(key, 0, 1), cost: Number.MAX_SAFE_INTEGER });
    await record([huge(a), huge(b)]);
    await record([huge(a), usageRow(b, 1, 1)]); // a's row past 2^53 - 1; b's next hour
    const window = { from: new Date(USAGE_START), to: new Date(USAGE_START + 2 * HOUR) };
    const onlyA = await read({ tenantId: "tenant-huge", keyId: a.id, ...window });
    check(onlyA[0]?.cost === Number.MAX_SAFE_INTEGER, `a's row: ${onlyA[0]?.cost}`);
    check(onlyA[0]?.accepted === 20, "its other counts add up");
    const all = await read({ tenantId: "tenant-huge", ...window });
    check(all.length === 2, `both hours read (the first sums two huge rows): ${all.length}`);
    check(all[0].cost === Number.MAX_SAFE_INTEGER && all[1].cost === 100, "the tenant's hours");
  });

  test("recordUsage (when present): a call of 1,000 rows stores every row", async () => {
    const storage = await factory();
    const record = storage.recordUsage?.bind(storage);
    const read = storage.readUsage?.bind(storage);
    if (record === undefined || read === undefined) return;
    const keys = Array.from({ length: 250 }, () => sampleRecord({ tenantId: "tenant-batch" }));
    const rows = keys.flatMap((key) => [0, 1, 2, 3].map((hour) => usageRow(key, hour, 1)));
    await record(rows);
    const hours = await read({
      tenantId: "tenant-batch",
      from: new Date(USAGE_START),
      to: new Date(USAGE_START + 4 * HOUR),
    });
    check(hours.length === 4 && hours.every((h) => h.accepted === 2_500), "250 keys × 4 hours");
  });

  test("readUsageOfKeys (when present): in one call, each key's hours as readUsage reads that key, in the order asked; another tenant's key and an unknown id read as none", async () => {
    const storage = await factory();
    const record = storage.recordUsage?.bind(storage);
    const read = storage.readUsage?.bind(storage);
    const readKeys = storage.readUsageOfKeys?.bind(storage);
    if (record === undefined || read === undefined || readKeys === undefined) return;
    const [a, b] = [0, 1].map(() => sampleRecord({ tenantId: "tenant-keys" }));
    const other = sampleRecord({ tenantId: "tenant-keys-other" });
    await record([usageRow(a, 0, 1), usageRow(a, 2, 3), usageRow(b, 1, 2), usageRow(other, 0, 5)]);
    const window = { from: new Date(USAGE_START), to: new Date(USAGE_START + 3 * HOUR) };
    const keyIds = [b.id, other.id, "no-such-key", a.id];
    const lists = await readKeys({ tenantId: "tenant-keys", keyIds, ...window });
    check(Array.isArray(lists) && lists.length === 4, "a list per key asked");
    for (const [i, keyId] of keyIds.entries()) {
      const own = await read({ tenantId: "tenant-keys", keyId, ...window });
      check(JSON.stringify(lists[i]) === JSON.stringify(own), `key ${i}: as readUsage reads it`);
    }
    check(lists[1].length === 0 && lists[2].length === 0, "other tenant's and unknown: none");
    check(lists[3].length === 2 && lists[0].length === 1, "each key's own hours");
  });

  test("recordUsage with usageBatches (when true): a batch id is recorded once, also when retried concurrently; other ids add up", async () => {
    const storage = await factory();
    const record = storage.recordUsage?.bind(storage);
    const read = storage.readUsage?.bind(storage);
    if (storage.usageBatches !== true || record === undefined || read === undefined) return;
    const key = sampleRecord({ tenantId: "tenant-batches" });
    await storage.insert(key);
    const late = new Date(USAGE_START + 10 * 60_000);
    const first = `batch-${key.id}-1`;
    await record([usageRow(key, 0, 1)], first);
    await record([usageRow(key, 0, 1, late)], first); // a retry, even with other rows
    await Promise.all([1, 2, 3].map(() => record([usageRow(key, 0, 2)], `batch-${key.id}-2`)));
    await record([usageRow(key, 1, 2)], `batch-${key.id}-2`); // another hour, same batch
    await record([usageRow(key, 0, 4)], `batch-${key.id}-3`);
    const hours = await read({
      tenantId: "tenant-batches",
      from: new Date(USAGE_START),
      to: new Date(USAGE_START + 2 * HOUR),
    });
    check(hours.length === 1, `one hour written, got ${hours.length}`);
    check(
      hours[0].accepted === 70,
      `1 + 2 + 4 (× 10) accepted once each, got ${hours[0].accepted}`,
    );
    check(
      API_KEY_USAGE_REFUSALS.every((code, i) => hours[0].refused[code] === 7 + 3 * i),
      "each refusal counted once per batch",
    );
    check((await storage.findById(key.id))!.lastUsedAt === null, "a skipped retry writes nothing");
  });

  test("touchLastUsed sets lastUsedAt, only later (an instance whose clock is behind never moves it back)", async () => {
    const storage = await factory();
    const record = sampleRecord();
    await storage.insert(record);
    const at = new Date("2030-01-01T03:00:00.000Z");
    await storage.touchLastUsed(record.id, at);
    check(time((await storage.findById(record.id))!.lastUsedAt) === at.getTime(), "lastUsedAt");
    await storage.touchLastUsed(record.id, new Date(at.getTime() - 10_000));
    check(time((await storage.findById(record.id))!.lastUsedAt) === at.getTime(), "never back");
    await storage.touchLastUsed(record.id, new Date(at.getTime() + 1));
    check(time((await storage.findById(record.id))!.lastUsedAt) === at.getTime() + 1, "later");
    await storage.touchLastUsed("no-such-id", at); // best effort: no error
  });

  test("rotate inserts the new record and marks the old one in one step", async () => {
    const storage = await factory();
    const old = sampleRecord();
    await storage.insert(old);
    const input = rotationOf(old);
    const answer = await storage.rotate(input);
    check(answer === "rotated" || answer === undefined, `rotate answered ${String(answer)}`);
    sameRecord(await storage.findById(input.newRecord.id), input.newRecord, "new record");
    sameRecord(await storage.findById(old.id), {
      ...old,
      rotatedAt: input.rotatedAt,
      expiresAt: input.oldExpiresAt,
      replacedByKeyId: input.newRecord.id,
    }, "old record");
  });

  test("rotate of a rotated or revoked key is api_key_not_rotatable and leaves nothing usable", async () => {
    const storage = await factory();
    const old = sampleRecord();
    await storage.insert(old);
    await storage.rotate(rotationOf(old));
    const again = rotationOf(old);
    await notRotatable(storage.rotate(again), "second rotate");
    await leftNothingUsable(storage, again.newRecord.id, "losing rotation");
    const revoked = sampleRecord();
    await storage.insert(revoked);
    await storage.markRevoked(revoked.id, new Date("2030-01-01T04:00:00.000Z"));
    const late = rotationOf(revoked);
    await notRotatable(storage.rotate(late), "rotate of revoked");
    await leftNothingUsable(storage, late.newRecord.id, "rotate of revoked");
  });

  test("two concurrent rotations: exactly one wins, the other is api_key_not_rotatable", async () => {
    const storage = await factory();
    const old = sampleRecord();
    await storage.insert(old);
    const first = rotationOf(old);
    const second = rotationOf(old);
    const results = await Promise.allSettled([storage.rotate(first), storage.rotate(second)]);
    const lost = (r: PromiseSettledResult<unknown>) =>
      r.status === "fulfilled"
        ? r.value === "not_rotatable"
        : (r.reason as { code?: unknown })?.code === "api_key_not_rotatable";
    const won = results.filter((r) => r.status === "fulfilled" && !lost(r)).length;
    check(won === 1, `expected one winning rotation, got ${won}`);
    check(results.filter(lost).length === 1, "the loser is api_key_not_rotatable");
    const winner = lost(results[1]) ? first : second;
    const loser = winner === first ? second : first;
    await leftNothingUsable(storage, loser.newRecord.id, "losing rotation");
    check(
      (await storage.findById(old.id))!.replacedByKeyId === winner.newRecord.id,
      "old record points to the winner",
    );
  });

  test("rotateChecksName (when true): rotate and rotateForTenant given expectedName rotate only while the old record holds it; renamed meanwhile, not_rotatable and nothing usable", async () => {
    const storage = await factory();
    if (storage.rotateChecksName !== true) return;
    const rename = storage.renameForTenant?.bind(storage);
    const forTenant = storage.rotateForTenant?.bind(storage);
    const rotations = [(input: RotateApiKeyStorageInput) => storage.rotate(input)];
    if (forTenant !== undefined) rotations.push((input) => forTenant("tenant-a", input));
    for (const [i, rotate] of rotations.entries()) {
      // The rotation read "billing-old"; a rename to "billing-new" lands before its write
      // (without renameForTenant, the record is stored so renamed).
      const old = sampleRecord({ name: "billing-new" });
      await storage.insert(rename === undefined ? old : { ...old, name: "billing-old" });
      await rename?.(old.tenantId, old.id, old.name);
      const stale = rotationOf(old);
      stale.newRecord.name = "billing-old";
      await notRotatable(rotate({ ...stale, expectedName: "billing-old" }), `${i}: stale name`);
      await leftNothingUsable(storage, stale.newRecord.id, `${i}: rotation of a stale name`);
      sameRecord(await storage.findById(old.id), old, `${i}: old record unchanged`);
      const fresh = rotationOf(old);
      fresh.newRecord.name = old.name;
      const answer = await rotate({ ...fresh, expectedName: old.name });
      check(
        answer === "rotated" || answer === undefined,
        `${i}: rotate answered ${String(answer)}`,
      );
      sameRecord(await storage.findById(fresh.newRecord.id), fresh.newRecord, `${i}: new record`);
      check(
        (await storage.findById(old.id))!.replacedByKeyId === fresh.newRecord.id,
        `${i}: old record points to the new one`,
      );
    }
  });

  test("rotate of an unknown id is api_key_record_not_found", async () => {
    const storage = await factory();
    const input = rotationOf(sampleRecord());
    await rejectsWith(storage.rotate(input), "api_key_record_not_found", "rotate unknown");
    await leftNothingUsable(storage, input.newRecord.id, "rotate of unknown");
  });
  test("appendAudit and readAudit (when present): one gap-free chain per tenant that verifies, also under concurrent appends; filters, order and head", async () => {
    const storage = await factory();
    const append = storage.appendAudit?.bind(storage);
    const read = storage.readAudit?.bind(storage);
    if (append === undefined || read === undefined) return;
    const tenantId = `tenant-audit-${crypto.randomUUID()}`;
    const first = await append(auditOf(tenantId, "key.created", "k1"));
    check(
      first.seq === 1 && first.prevHash === "0".repeat(64),
      "the first record follows 64 zeros",
    );
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => append(auditOf(tenantId, "key.revoked", `k${i % 3}`))),
    );
    await append(auditOf(`${tenantId}-other`, "key.created", "k1"));
    const all = await read({ tenantId, order: "asc", limit: 1_000 });
    check(all.records.length === 13, `expected 13 records, got ${all.records.length}`);
    check(all.records.every((r, i) => r.seq === i + 1), "sequence numbers 1 to 13 without gaps");
    const verified = await verifyAuditChain(all.records, { tenantId, ...all.state });
    check(verified.ok, `the chain verifies: ${JSON.stringify(verified)}`);
    check(all.state.head?.seq === 13 && all.state.head.hash === all.records[12].hash, "head");
    const newest = await read({ tenantId, order: "desc", limit: 2 });
    check(newest.records.map((r) => r.seq).join() === "13,12", "newest first, limited");
    const page = await read({ tenantId, order: "desc", limit: 100, beforeSeq: 3 });
    check(page.records.map((r) => r.seq).join() === "2,1", "a page before a cursor");
    const next = await read({ tenantId, order: "asc", limit: 100, afterSeq: 11 });
    check(next.records.map((r) => r.seq).join() === "12,13", "a page after a cursor");
    const ofKey = await read({ tenantId, order: "asc", limit: 100, keyId: "k1" });
    check(ofKey.records.length === 5, `records of k1: ${ofKey.records.length}`);
    const created = await read({ tenantId, order: "asc", limit: 100, action: "key.created" });
    check(created.records.length === 1 && created.records[0].seq === 1, "records of one action");
    const byActor = await read({ tenantId, order: "asc", limit: 100, actor: "nobody" });
    check(byActor.records.length === 0, "records of an unknown actor");
    const later = await read({
      tenantId,
      order: "asc",
      limit: 100,
      from: new Date(Date.now() + 60_000),
    });
    check(later.records.length === 0, "nothing written in the future");
  });

  test("appendAudit (when present): a change given an audit record appends it only when the change happened", async () => {
    const storage = await factory();
    const read = storage.readAudit?.bind(storage);
    if (storage.appendAudit === undefined || read === undefined) return;
    const tenantId = `tenant-audit-${crypto.randomUUID()}`;
    const key = sampleRecord({ tenantId });
    await storage.insert(key, auditOf(tenantId, "key.created", key.id));
    const duplicate = sampleRecord({ tenantId, prefix: key.prefix });
    await storage.insert(duplicate, auditOf(tenantId, "key.created", duplicate.id)).then(
      () => check(false, "a duplicate prefix is refused"),
      () => {},
    );
    const revoke = storage.markRevokedIfActive?.bind(storage);
    if (revoke !== undefined) {
      const other = sampleRecord({ tenantId });
      await storage.insert(other);
      check(await revoke(other.id, new Date(), auditOf(tenantId, "key.revoked", other.id)), "won");
      check(
        !await revoke(other.id, new Date(), auditOf(tenantId, "key.revoked", other.id)),
        "a second revoke changes nothing",
      );
    }
    const rotation = rotationOf(key);
    await storage.rotate(rotation, auditOf(tenantId, "key.rotated", key.id));
    const again = rotationOf(key);
    const answer = await storage.rotate(again, auditOf(tenantId, "key.rotated", key.id)).then(
      (value) => value,
      (error: { code?: string }) => error.code,
    );
    check(answer === "not_rotatable" || answer === "api_key_not_rotatable", "not rotatable");
    const rename = storage.renameForTenant?.bind(storage);
    if (rename !== undefined) {
      await rename(`${tenantId}-other`, key.id, "x", auditOf(tenantId, "key.renamed", key.id))
        .then(() => check(false, "another tenant's rename is refused"), () => {});
      await rename(tenantId, key.id, "renamed", auditOf(tenantId, "key.renamed", key.id));
    }
    const replace = storage.replaceNameForTenant?.bind(storage);
    if (replace !== undefined) {
      const name = (await storage.findById(key.id))!.name;
      const renamed = auditOf(tenantId, "key.renamed", key.id);
      check(!await replace(tenantId, key.id, `${name}-not`, "x", renamed), "another name: false");
      check(await replace(tenantId, key.id, name, "replaced", renamed), "its name: renamed");
    }
    const { records } = await read({ tenantId, order: "asc", limit: 100 });
    const actions = records.map((r) => JSON.parse(r.body).action as string);
    const expected = ["key.created", ...(revoke ? ["key.revoked"] : []), "key.rotated"];
    if (rename !== undefined) expected.push("key.renamed");
    if (replace !== undefined) expected.push("key.renamed");
    check(actions.join() === expected.join(), `records ${actions.join()}, expected ${expected}`);
    check(records.every((r, i) => r.seq === i + 1), "no gap where a change did not happen");
  });

  test("pruneAudit (when present): drops records before a time, keeps the last one, and the rest verifies from its anchor", async () => {
    const storage = await factory();
    const { appendAudit: append, readAudit: read, pruneAudit: prune } = storage;
    if (append === undefined || read === undefined || prune === undefined) return;
    const tenantId = `tenant-audit-${crypto.randomUUID()}`;
    for (let i = 0; i < 3; i++) {
      await append.call(storage, auditOf(tenantId, "key.created", `k${i}`));
    }
    const dropped = await prune.call(storage, tenantId, new Date(Date.now() + 60_000));
    check(dropped === 2, `dropped ${dropped}, expected 2 (the last is kept)`);
    await append.call(storage, auditOf(tenantId, "key.revoked", "k0"));
    const { records, state } = await read.call(storage, { tenantId, order: "asc", limit: 100 });
    check(records.map((r) => r.seq).join() === "3,4", "records 3 and 4 remain");
    check(state.anchor.seq === 3 && state.anchor.prevHash === records[0].prevHash, "the anchor");
    const verified = await verifyAuditChain(records, { tenantId, ...state });
    check(verified.ok, `verifies from the anchor: ${JSON.stringify(verified)}`);
  });

  test("readAudit (when present): the records and the state of one answer are one snapshot: each read beside appends (and prunes, with pruneAudit) verifies against the state it answers", async () => {
    const storage = await factory();
    const { appendAudit: append, readAudit: read, pruneAudit: prune } = storage;
    if (append === undefined || read === undefined) return;
    const tenantId = `tenant-audit-${crypto.randomUUID()}`;
    await append.call(storage, auditOf(tenantId, "key.created", "k0"));
    let writing = true;
    const writer = (async () => {
      try {
        for (let i = 1; i <= 30; i++) {
          await append.call(storage, auditOf(tenantId, "key.revoked", `k${i}`));
          if (prune !== undefined && i % 10 === 0) {
            await prune.call(storage, tenantId, new Date(Date.now() + 60_000));
          }
        }
      } finally {
        writing = false;
      }
    })();
    const problems: string[] = [];
    for (let reads = 0; writing || reads === 0; reads++) {
      const { records, state } = await read.call(storage, { tenantId, order: "asc", limit: 1_000 });
      const verified = await verifyAuditChain(records, { tenantId, ...state });
      if (!verified.ok) problems.push(`${verified.problem} ${verified.seq}`);
    }
    await writer;
    check(problems.length === 0, `reads that did not verify: ${problems.join(", ")}`);
  });
}

/** An audit record to append: `action` on key `keyId` by actor "contract". */
function auditOf(tenantId: string, action: AuditAction, keyId: string): AuditAppend {
  const body = canonicalJson({ v: 1, action, actor: "contract", keyId, changes: {} });
  return { tenantId, body, at: new Date(), keyId, actor: "contract", action };
}
