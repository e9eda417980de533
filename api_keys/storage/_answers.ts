/**
 * The checks of what a storage answers, the one place a stored record or
 * another answer (or a failure) is read: `StorageAccess` (`_access.ts`) reads every answer
 * through them (loading this file when it is built, so `./api-keys/nest`
 * does not load it at import), and the bundled storages read their records
 * with the same rules.
 *
 * @module
 */
import { ApiKeyOperationError } from "../errors.ts";
import { instantProblem } from "../_input.ts";
import { missingMigrationError } from "./_migrations.ts";
import { API_KEY_HASH_SCHEMES, CURRENT_HASH_SCHEME } from "../hasher.ts";
import { creditPartsOf, isStoredRateLimits, storedRefill } from "../metering/_limits.ts";
import { compileCredits } from "../../rate_limits/credits.ts"; // not the barrel (issue 41)
import type { AuditReadQuery, StoredAuditRecord } from "../audit/types.ts";
import type {
  ApiKeyRecordPage,
  ApiKeyRotationWait,
  AuditReadAnswer,
  ListApiKeyPageOptions,
  ListExpiringApiKeysOptions,
} from "./types.ts";
import type { ApiKeyCredits, ApiKeyHashCount, ApiKeyPoolCredits, ApiKeyRecord } from "../types.ts";
import {
  API_KEY_USAGE_REFUSALS,
  type ApiKeyUsageBucket,
  type ApiKeyUsageReadQuery,
} from "../metering/usage.ts";

/**
 * A stored audit record, checked (one of other types throws). What the chain
 * covers is answered as stored, so that verification names an edit of it
 * (`edited`), never a failing storage: a `seq` below 1 (a row the database
 * owner wrote: migration 0028 refuses it; `inserted`), a hash of any text, an
 * `at` no writer makes (an invalid `Date`, as `infinity` reads).
 */
export function readAuditRecord(value: unknown): StoredAuditRecord {
  const r = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  const { tenantId, seq, at, body, prevHash, hash } = r;
  if (
    typeof tenantId !== "string" || !Number.isSafeInteger(seq) || !(at instanceof Date) ||
    typeof body !== "string" || typeof prevHash !== "string" || typeof hash !== "string"
  ) {
    throw new Error("malformed audit record");
  }
  return { tenantId, seq: seq as number, at: new Date(at.getTime()), body, prevHash, hash };
}

/** The filters of an audit read that its records' bodies answer. */
const AUDIT_BODY_FILTERS = ["keyId", "actor", "action"] as const;

/**
 * A `readAudit` answer, checked: at most `limit` records, each of the tenant
 * and inside the query's bounds (`seq` past `afterSeq` and before
 * `beforeSeq`, written from `from` and before `to`; with a `keyId`, `actor`
 * or `action` filter, a body naming it), in the query's order; a chain state
 * anchored at 1 or later, its head at 1 or later, its hashes text (compared by
 * verification, whatever they hold).
 */
export function readAuditAnswer(query: AuditReadQuery): (value: unknown) => AuditReadAnswer {
  const { afterSeq = -Infinity, beforeSeq = Infinity } = query;
  const fromMs = query.from?.getTime() ?? -Infinity;
  const toMs = query.to?.getTime() ?? Infinity;
  const filters = AUDIT_BODY_FILTERS.filter((name) => query[name] !== undefined);
  const filtered = (body: string): boolean => {
    if (filters.length === 0) return true;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(body) ?? {};
    } catch {
      return false;
    }
    return filters.every((name) => entry[name] === query[name]);
  };
  return (value) => {
    const { records, state } = (value ?? {}) as Partial<AuditReadAnswer>;
    if (!Array.isArray(records) || records.length > query.limit) throw malformed();
    const read = ofTenant(records.map(readAuditRecord), query.tenantId);
    for (const { seq, at, body } of read) {
      if (
        seq <= afterSeq || seq >= beforeSeq || at.getTime() < fromMs || at.getTime() >= toMs ||
        !filtered(body)
      ) {
        throw new Error("record outside the query");
      }
    }
    for (let i = 1; i < read.length; i++) {
      const step = read[i].seq - read[i - 1].seq;
      if (query.order === "asc" ? step <= 0 : step >= 0) throw new Error("records out of order");
    }
    const head = state?.head ?? null;
    const anchor = state?.anchor;
    if (
      (head !== null &&
        (!Number.isSafeInteger(head.seq) || head.seq < 1 || typeof head.hash !== "string")) ||
      anchor === undefined || !Number.isSafeInteger(anchor.seq) || anchor.seq < 1 ||
      typeof anchor.prevHash !== "string"
    ) {
      throw new Error("malformed audit chain state");
    }
    return {
      records: read,
      state: {
        head: head === null ? null : { seq: head.seq, hash: head.hash },
        anchor: { seq: anchor.seq, prevHash: anchor.prevHash },
      },
    };
  };
}

export function readCount(value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) throw new Error("not a count");
  return value as number;
}

function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/**
 * The reader of `readUsage` answers to `query`: hour starts inside the
 * window, ascending, copied, each count a non-negative safe integer.
 */
export function readUsageBuckets(
  query: ApiKeyUsageReadQuery,
): (value: unknown) => ApiKeyUsageBucket[] {
  return (value) => {
    if (!Array.isArray(value)) throw new Error("malformed usage buckets");
    let previousMs = query.from.getTime() - 1;
    return value.map((bucket) => {
      const { start, accepted, refused, cost } = bucket ?? {};
      const ms = start instanceof Date ? start.getTime() : NaN;
      if (
        !(ms > previousMs) || ms >= query.to.getTime() || ms % 3_600_000 !== 0 ||
        !isCount(accepted) || !isCount(cost) || typeof refused !== "object" || refused === null ||
        !API_KEY_USAGE_REFUSALS.every((code) => isCount(refused[code]))
      ) {
        throw new Error("malformed usage bucket");
      }
      previousMs = ms;
      return {
        start: new Date(ms),
        accepted,
        refused: Object.fromEntries(API_KEY_USAGE_REFUSALS.map((code) => [code, refused[code]])),
        cost,
      } as ApiKeyUsageBucket;
    });
  };
}

/** Whether `value` is a `Date` the service cannot use: invalid, or past the range of `instantProblem`. */
function isUnreadableDate(value: unknown): boolean {
  return value instanceof Date && instantProblem(value.getTime()) !== undefined;
}

/**
 * A stored `expiresAt` as the service reads it, copied: a `Date` that is not a
 * valid date or lies outside 0001-01-01..9999-12-31 (`instantProblem`: a bad
 * row, one written by an older version, one PostgreSQL reads as invalid)
 * counts as expired, read as the epoch, 1970-01-01T00:00:00.000Z. In-process
 * storages store it so read (their records are checked once, not on every peek).
 */
export function readExpiresAt(expiresAt: Date | null): Date | null {
  if (expiresAt === null) return null;
  return new Date(isUnreadableDate(expiresAt) ? 0 : expiresAt.getTime());
}

function isDateOrNull(value: unknown): boolean {
  return value === null || (value instanceof Date && !Number.isNaN(value.getTime()));
}

function isStringArray(value: unknown): boolean {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

const isString = (value: unknown): boolean => typeof value === "string";

/**
 * Whether a stored `credits` value is absent or valid: a balance within
 * `MAX_CREDITS`, a valid refill, a valid `updatedAt`, a non-empty
 * `balanceKeyId` when present, and either `sharedBy: "tenant"` (the pool
 * alone) or a valid `pool` when present (the record check, and
 * `setCredits`'s in memory).
 */
export function isStoredCredits(value: unknown): boolean {
  if (value === undefined) return true;
  if (!isStoredBalance(value)) return false;
  const { balanceKeyId, sharedBy, pool } = value as ApiKeyCredits;
  if (sharedBy === "tenant") return balanceKeyId === undefined && pool === undefined;
  return sharedBy === undefined &&
    (balanceKeyId === undefined || (isString(balanceKeyId) && balanceKeyId !== "")) &&
    (pool === undefined || isStoredBalance(pool));
}

/** A balance within `MAX_CREDITS`, a valid refill and a valid `updatedAt`. */
function isStoredBalance(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const { remaining, refill, updatedAt } = value as ApiKeyCredits;
  try {
    compileCredits({ remaining, refill: storedRefill(refill) });
  } catch {
    return false;
  }
  return isDateOrNull(updatedAt) && updatedAt !== null;
}

/** Each field of `ApiKeyRecord`: the rule its stored value keeps, and the rule in words. */
const RECORD_FIELDS:
  readonly (readonly [keyof ApiKeyRecord, (value: unknown) => boolean, string])[] = Object.freeze([
    ["id", isString, "a string"],
    ["tenantId", isString, "a string"],
    ["name", isString, "a string"],
    ["environment", (value) => value === "live" || value === "test", '"live" or "test"'],
    ["prefix", isString, "a string"],
    ["hash", isString, "a string"],
    [
      "hashScheme",
      (value) => value === undefined || API_KEY_HASH_SCHEMES.includes(value as never),
      "absent or a known hash scheme",
    ],
    ["pepperVersion", Number.isSafeInteger, "an integer"],
    ["scopes", isStringArray, "an array of strings"],
    ["layout", (value) => value === undefined || isString(value), "absent or a string"],
    ["allowedIpCidrs", (value) => value === undefined || isStringArray(value), "absent or strings"],
    ["rateLimits", isStoredRateLimits, "absent or a list of rate-limit policies"],
    ["rateLimitKeyId", (value) => value === undefined || isString(value), "absent or a string"],
    ["credits", isStoredCredits, "absent or credits with a valid updatedAt"],
    ["lastUsedAt", isDateOrNull, "a valid Date or null"],
    ["expiresAt", isDateOrNull, "a valid Date or null"],
    ["revokedAt", isDateOrNull, "a valid Date or null"],
    ["rotatedAt", isDateOrNull, "a valid Date or null"],
    ["replacedByKeyId", (value) => value === null || isString(value), "a string or null"],
    ["createdBy", (value) => value === null || isString(value), "a string or null"],
    ["createdAt", (value) => value !== null && isDateOrNull(value), "a valid Date"],
  ]);

/** The nullable fields: absent (a record of an older version, a row without the column) is null. */
const NULLABLE_FIELDS = [
  "lastUsedAt",
  "expiresAt",
  "revokedAt",
  "rotatedAt",
  "replacedByKeyId",
  "createdBy",
] as const;

/**
 * Sets each absent nullable field of `record` (in place) to `null`, as
 * records written by an older version read. Adapters that map rows call it.
 */
export function nullAbsentFields(record: Record<string, unknown>): void {
  for (const field of NULLABLE_FIELDS) record[field] ??= null;
}

/**
 * A stored value as the service reads it: an absent nullable field reads as
 * `null` and an `expiresAt` that is not a valid date (see `readExpiresAt`) as expired (the epoch,
 * 1970-01-01T00:00:00.000Z), in a shallow copy (else the value itself). Throws
 * a `TypeError` naming the first field that breaks the `ApiKeyRecord` shape
 * (never its value).
 */
export function readApiKeyRecord(value: unknown): ApiKeyRecord {
  if (typeof value !== "object" || value === null) {
    throw new TypeError("malformed record: not an object");
  }
  let record = value as Record<string, unknown>;
  if (isUnreadableDate(record.expiresAt) || NULLABLE_FIELDS.some((f) => record[f] === undefined)) {
    record = { ...record, expiresAt: readExpiresAt((record.expiresAt ?? null) as Date | null) };
    nullAbsentFields(record);
  }
  for (const [field, valid, rule] of RECORD_FIELDS) {
    if (!valid(record[field])) throw new TypeError(`malformed record: ${field} must be ${rule}`);
  }
  return record as unknown as ApiKeyRecord;
}

function malformed(): Error {
  return new Error("malformed record");
}

export function readRecordOrNull(value: unknown): ApiKeyRecord | null {
  return value === null ? null : readApiKeyRecord(value);
}

/**
 * The first of `records` holding the newest copy of a tenant's shared credit
 * pool (the greatest pool `updatedAt`), or `null` when none spends a pool:
 * what `ApiKeyStorage.findTenantPool` answers of a tenant's records listed
 * newest first.
 */
export function newestPoolRecord(records: readonly ApiKeyRecord[]): ApiKeyRecord | null {
  let newest: { record: ApiKeyRecord; at: number } | null = null;
  for (const record of records) {
    const at = record.credits && creditPartsOf(record.credits).pool?.updatedAt.getTime();
    if (at !== undefined && (newest === null || at > newest.at)) newest = { record, at };
  }
  return newest?.record ?? null;
}

/** `credits` (spending a pool) with its pool copy replaced by `pool`. */
export function withPool(credits: ApiKeyCredits, pool: ApiKeyPoolCredits): ApiKeyCredits {
  return credits.sharedBy === "tenant"
    ? { ...pool, sharedBy: "tenant" }
    : { ...credits, pool: { ...pool } };
}

/**
 * `credits` with its pool copy's `remaining` and `updatedAt` replaced (the
 * rest kept): what `ApiKeyStorage.setTenantPool` writes to each record
 * spending the pool; `undefined` when it spends none.
 */
export function withPoolBalance(
  credits: ApiKeyCredits | undefined,
  remaining: number,
  updatedAt: Date,
): ApiKeyCredits | undefined {
  const pool = credits && creditPartsOf(credits).pool;
  return pool && withPool(credits!, { ...pool, remaining, updatedAt });
}

/**
 * The reader of a `findByReplacement` answer: null, or a checked record of
 * `tenantId` that `keyId` replaced.
 */
export function readReplaced(
  tenantId: string,
  keyId: string,
): (value: unknown) => ApiKeyRecord | null {
  return (value) => {
    const record = readRecordOrNull(value);
    if (record !== null && (record.tenantId !== tenantId || record.replacedByKeyId !== keyId)) {
      throw new Error("record outside the tenant or not replaced by the key");
    }
    return record;
  };
}

/**
 * The reader of a `findManyByIds` answer: the checked records of `tenantId`
 * among `ids` (each once), as a record or null per id, in the order of `ids`.
 */
export function readRecordsOfIds(
  tenantId: string,
  ids: readonly string[],
): (value: unknown) => (ApiKeyRecord | null)[] {
  return (value) => {
    const found = new Map<string, ApiKeyRecord>();
    for (const record of readRecords(value)) {
      if (record.tenantId !== tenantId || !ids.includes(record.id) || found.has(record.id)) {
        throw new Error("record outside the tenant, not asked for or twice");
      }
      found.set(record.id, record);
    }
    return ids.map((id) => found.get(id) ?? null);
  };
}

/** The reader of a `findTenantPool` answer: null, or a checked record of `tenantId` spending a pool. */
export function readPoolRecord(tenantId: string): (value: unknown) => ApiKeyRecord | null {
  return (value) => {
    const record = readRecordOrNull(value);
    if (
      record !== null &&
      (record.tenantId !== tenantId || newestPoolRecord([record]) === null)
    ) {
      throw new Error("record outside the tenant or spending no pool");
    }
    return record;
  };
}

/**
 * A record of the usual shape (two scopes, no allowlist), read in place of
 * the record an unknown prefix lacks (`findByPrefix`, and the copy
 * `InMemoryApiKeyStorage` makes): an unknown prefix costs the read of a
 * stored one.
 */
export const LOOKUP_STAND_IN: Readonly<ApiKeyRecord> = Object.freeze({
  id: "stand-in",
  tenantId: "stand-in",
  name: "stand-in",
  environment: "live",
  prefix: "stand-in",
  hash: "stand-in",
  pepperVersion: 1,
  scopes: ["orders:read", "orders:write"],
  allowedIpCidrs: [],
  lastUsedAt: null,
  expiresAt: new Date(0),
  revokedAt: null,
  rotatedAt: null,
  replacedByKeyId: null,
  createdBy: null,
  createdAt: new Date(0),
});

/**
 * The reader of `findByPrefix(prefix)`'s answer: a record, or null after
 * reading the stand-in. A record of another prefix (a lookup that ignores
 * case, as MySQL's default collation does: a forged key's case variant would
 * find the real record) reads as null: a key is found by its exact prefix only.
 */
export function readLookup(prefix: string): (value: unknown) => ApiKeyRecord | null {
  return (value) => {
    const record = readApiKeyRecord(value === null ? LOOKUP_STAND_IN : value);
    return value === null || record.prefix !== prefix ? null : record;
  };
}

export function readRecords(value: unknown): ApiKeyRecord[] {
  if (!Array.isArray(value)) throw malformed();
  return value.map(readApiKeyRecord);
}

/**
 * The reader of a `listByTenant` answer: records, each checked, of
 * `tenantId` and answered once, none revoked unless `includeRevoked`.
 */
export function readTenantRecords(
  tenantId: string,
  includeRevoked: boolean,
): (value: unknown) => ApiKeyRecord[] {
  return (value) => {
    const records = onceEach(ofTenant(readRecords(value), tenantId));
    if (!includeRevoked && records.some((record) => record.revokedAt !== null)) {
      throw new Error("revoked record in a list without revoked ones");
    }
    return records;
  };
}

/** `records`, each id once, or a throw: a list or a page never holds one record twice. */
function onceEach(records: ApiKeyRecord[]): ApiKeyRecord[] {
  if (new Set(records.map((record) => record.id)).size !== records.length) {
    throw new Error("record answered twice");
  }
  return records;
}

/** `records`, each of `tenantId`, or a throw: an answer about one tenant holds none of another. */
function ofTenant<T extends { readonly tenantId: string }>(records: T[], tenantId: string): T[] {
  if (records.some((record) => record.tenantId !== tenantId)) {
    throw new Error("record outside the tenant");
  }
  return records;
}

export function readPrefixes(value: unknown): string[] {
  if (!Array.isArray(value) || !value.every(isString)) throw new Error("answer is not prefixes");
  return [...value];
}

export function readBoolean(value: unknown): boolean {
  if (typeof value !== "boolean") throw new Error("answer is not a boolean");
  return value;
}

/**
 * Rows of `countHashes` checked and merged: one per scheme and version,
 * the current scheme first, versions ascending.
 */
export function readHashCounts(value: unknown): ApiKeyHashCount[] {
  if (!Array.isArray(value)) throw malformed();
  const merged = new Map<string, ApiKeyHashCount>();
  for (const row of value) {
    const { hashScheme = CURRENT_HASH_SCHEME, pepperVersion, count } = row ?? {};
    if (
      !API_KEY_HASH_SCHEMES.includes(hashScheme) || !Number.isSafeInteger(pepperVersion) ||
      !Number.isSafeInteger(count) || count < 0
    ) {
      throw malformed();
    }
    const key = `${hashScheme} ${pepperVersion}`;
    const seen = merged.get(key);
    if (seen !== undefined) seen.count += count;
    else if (count > 0) merged.set(key, { hashScheme, pepperVersion, count });
  }
  return [...merged.values()].sort((a, b) =>
    API_KEY_HASH_SCHEMES.indexOf(a.hashScheme) - API_KEY_HASH_SCHEMES.indexOf(b.hashScheme) ||
    a.pepperVersion - b.pepperVersion
  );
}

/**
 * The reader of one `listExpiring` page of `options`: at most `limit`
 * records, each checked, unrevoked, expiring in the window, in `expiresAt`
 * order from the cursor on, the last one not the cursor itself (ids are
 * ordered by the storage's own collation, so only the times are compared).
 */
export function readExpiringPage(
  options: ListExpiringApiKeysOptions,
): (value: unknown) => ApiKeyRecord[] {
  return (value) => {
    const records = readRecords(value);
    if (records.length > options.limit) throw new Error("page longer than its limit");
    const { after } = options;
    let previousMs = after === null ? -Infinity : after.expiresAt.getTime();
    for (const record of records) {
      const ms = record.expiresAt?.getTime();
      if (
        ms === undefined || record.revokedAt !== null || ms <= options.from.getTime() ||
        ms > options.until.getTime() || ms < previousMs
      ) {
        throw new Error("record outside the window or out of order");
      }
      previousMs = ms;
    }
    const last = records.at(-1);
    if (after !== null && last?.id === after.id && previousMs === after.expiresAt.getTime()) {
      throw new Error("page did not move past its cursor");
    }
    return records;
  };
}

/**
 * The reader of one `listPageByTenant` page of `tenantId` and `options`: at
 * most `limit` records, each checked and answered once, of the tenant, of
 * the status and environment asked for, not the cursor's record, and in
 * order from the cursor on (ids and names are ordered by the storage's own
 * collation, so only the dates are compared); predecessors only of the
 * page's records.
 */
export function readPage(
  { comparePositions, matchesPage, positionOf }: typeof import("./_paging.ts"),
  tenantId: string,
  options: ListApiKeyPageOptions,
): (value: unknown) => { records: ApiKeyRecord[]; predecessors: Record<string, string> } {
  const order = comparePositions(options.sort);
  const dated = options.sort !== "name_asc";
  const { after } = options;
  return (value) => {
    const page = (typeof value === "object" && value !== null ? value : {}) as ApiKeyRecordPage;
    const records = onceEach(readRecords(page.records));
    if (records.length > options.limit) throw new Error("page longer than its limit");
    let previous = after?.value;
    for (const record of records) {
      if (!matchesPage(record, tenantId, { ...options, q: null })) {
        throw new Error("record outside the tenant or the filters");
      }
      const position = positionOf(record, options.sort);
      const { value } = position;
      // The cursor's record at its cursor's place again; moved past it since (renamed, used), it
      // is a member of the page.
      if (record.id === after?.id && order(position, after) === 0) {
        throw new Error("page did not move past its cursor");
      }
      // Same id on both sides: the order of the dates alone.
      if (
        dated && previous !== undefined && order({ id: "", value: previous }, { id: "", value }) > 0
      ) {
        throw new Error("records out of order");
      }
      previous = value;
    }
    const onPage = new Set(records.map((record) => record.id));
    const { predecessors } = page;
    if (
      typeof predecessors !== "object" || predecessors === null || Array.isArray(predecessors) ||
      !Object.entries(predecessors).every(([id, before]) =>
        onPage.has(id) && typeof before === "string"
      )
    ) {
      throw new Error("malformed predecessors");
    }
    return { records, predecessors: { ...predecessors } };
  };
}

export function readRotationWait(value: unknown): ApiKeyRotationWait | null {
  if (value === null) return null;
  const w = (typeof value === "object" ? value : {}) as Record<string, unknown>;
  const { newKeyId, oldKeyId, gracePeriodMs, waitEndsAt } = w;
  if (
    typeof newKeyId !== "string" || typeof oldKeyId !== "string" ||
    typeof gracePeriodMs !== "number" || !(gracePeriodMs >= 0) ||
    !(waitEndsAt instanceof Date) || Number.isNaN(waitEndsAt.getTime())
  ) {
    throw new Error("malformed rotation wait");
  }
  return { newKeyId, oldKeyId, gracePeriodMs, waitEndsAt: new Date(waitEndsAt.getTime()) };
}

/**
 * Reads the answer of `rotate`: `"rotated"` or nothing (a storage written for
 * the spec) is done, and answered; `"not_rotatable"` throws `api_key_not_rotatable`.
 */
export function readRotateAnswer(value: unknown): "rotated" | undefined {
  if (value === "not_rotatable") throw new ApiKeyOperationError("api_key_not_rotatable");
  if (value !== undefined && value !== "rotated") {
    throw new Error('answer is not "rotated", "not_rotatable" or nothing');
  }
  return value;
}

/**
 * The cause the `ApiKeyStorageError` of a failed call carries: `error`, or
 * one naming the migration to apply when `error` says a table, column or
 * function of it is missing.
 */
export function storageErrorCause(error: unknown): unknown {
  return missingMigrationError(error) ?? error;
}
