/**
 * The storage wrapper of `ApiKeysService`, the one way both flows reach the
 * storage: each call runs under the deadline with failures mapped to
 * `ApiKeyStorageError`; every record read is validated here and nowhere else;
 * the capabilities (optional methods of `ApiKeyStorage`) are detected once,
 * at construction.
 *
 * @module
 */
import { ApiKeyOperationError, ApiKeyStorageError } from "../errors.ts";
import { missingMigrationError } from "./_migrations.ts";
import { API_KEY_HASH_SCHEMES, CURRENT_HASH_SCHEME } from "../hasher.ts";
import { callDetached, warnOnce } from "../_sinks.ts";
import { creditPartsOf, isStoredRateLimits } from "../_limits.ts";
import { compileCredits } from "../../rate_limits/credits.ts"; // not the barrel (issue 41)
import type { AuditAppend, AuditReadQuery, StoredAuditRecord } from "../audit/types.ts";
import {
  API_KEY_STORAGE_METHODS,
  type ApiKeyRecordPage,
  type ApiKeyRotationWait,
  type ApiKeyStorage,
  type ApiKeyStorageCapability,
  type AuditReadAnswer,
  type ListApiKeyPageOptions,
  type ListExpiringApiKeysOptions,
} from "./types.ts";
import type {
  ApiKeyCredits,
  ApiKeyHashCount,
  ApiKeyHashReplacement,
  ApiKeyPoolCredits,
  ApiKeyRecord,
  RotateApiKeyStorageInput,
} from "../types.ts";
import {
  API_KEY_USAGE_REFUSALS,
  type ApiKeyUsageBucket,
  type ApiKeyUsageReadQuery,
  type ApiKeyUsageRow,
} from "../usage.ts";

/**
 * Each capability (the optional methods that come together) and what the
 * service does without it (see `ApiKeyStorage`).
 */
const CAPABILITIES: readonly {
  readonly methods: readonly ApiKeyStorageCapability[];
  readonly without: string;
}[] = Object.freeze([
  {
    methods: ["peekByPrefix"],
    without:
      "each verify awaits findByPrefix, and the verification cache is off unless the cache or feed option is set",
  },
  {
    methods: ["markRevokedIfActive"],
    without: "concurrent revoke() calls of one key may each emit api_key.revoked",
  },
  {
    methods: ["replaceHash"],
    without: "records on a legacy hash scheme or an old pepper version are not upgraded on use",
  },
  { methods: ["countHashes"], without: "hashReport() and retiredPepperVersions are unavailable" },
  { methods: ["listExpiring", "claimExpiryNotice"], without: "notifyExpiring throws" },
  {
    methods: ["saveRotationWait", "findRotationWait", "lowerExpiry"],
    without: 'rotate with graceStarts "first-use" throws',
  },
  {
    methods: ["markRevokedForTenant", "rotateForTenant"],
    without:
      "revokeForTenant and rotateForTenant check the tenant on a read, then act with the untenanted calls",
  },
  { methods: ["renameForTenant"], without: "the admin rename route answers 501" },
  {
    methods: ["listPageByTenant"],
    without: "each page of the admin list reads every key of the tenant",
  },
  {
    methods: ["findByReplacement"],
    without: "each admin answer about a key reads every key of the tenant for the key it replaced",
  },
  {
    methods: ["recordUsage", "readUsage"],
    without: "the usage option and usage() are unavailable",
  },
]);

/**
 * The audit capability of a storage, each call under the deadline and its
 * answer checked (see `ApiKeyStorage.appendAudit`).
 */
export interface AuditAccess {
  /** `appendAudit`, the record read and checked. */
  append(audit: AuditAppend): Promise<StoredAuditRecord>;
  /** `readAudit`, each record read and checked. */
  read(query: AuditReadQuery): Promise<AuditReadAnswer>;
  /** `pruneAudit`, `undefined` without it. */
  prune: ((tenantId: string, before: Date) => Promise<number>) | undefined;
}

const HASH = /^[0-9a-f]{64}$/;

/** A stored audit record, checked (a malformed one throws). */
function readAuditRecord(value: unknown): StoredAuditRecord {
  const r = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  const { tenantId, seq, at, body, prevHash, hash } = r;
  if (
    typeof tenantId !== "string" || !Number.isSafeInteger(seq) || (seq as number) < 1 ||
    !(at instanceof Date) || Number.isNaN(at.getTime()) || typeof body !== "string" ||
    typeof prevHash !== "string" || !HASH.test(prevHash) || typeof hash !== "string" ||
    !HASH.test(hash)
  ) {
    throw new Error("malformed audit record");
  }
  return { tenantId, seq: seq as number, at: new Date(at.getTime()), body, prevHash, hash };
}

/** A `readAudit` answer, checked: at most `limit` records of the tenant, in the query's order. */
function readAuditAnswer(query: AuditReadQuery): (value: unknown) => AuditReadAnswer {
  return (value) => {
    const { records, state } = (value ?? {}) as Partial<AuditReadAnswer>;
    if (!Array.isArray(records) || records.length > query.limit) throw malformed();
    const read = records.map(readAuditRecord);
    for (let i = 1; i < read.length; i++) {
      const step = read[i].seq - read[i - 1].seq;
      if (query.order === "asc" ? step <= 0 : step >= 0) throw new Error("records out of order");
    }
    const head = state?.head ?? null;
    const anchor = state?.anchor;
    if (
      (head !== null && (!Number.isSafeInteger(head.seq) || typeof head.hash !== "string")) ||
      anchor === undefined || !Number.isSafeInteger(anchor.seq) ||
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

function readCount(value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) throw new Error("not a count");
  return value as number;
}

/**
 * The expiry-notice capability of a storage, each call under the deadline
 * and its answer checked (see `ApiKeyStorage.listExpiring`).
 */
export interface ExpiryNoticeAccess {
  /** `listExpiring`, each record read and checked. */
  list(options: ListExpiringApiKeysOptions): Promise<ApiKeyRecord[]>;
  /** `claimExpiryNotice`. */
  claim(id: string, thresholdMs: number, at: Date): Promise<boolean>;
}

/**
 * The waiting-rotation capability of a storage, each call under the
 * deadline and its answer checked (see `ApiKeyStorage.saveRotationWait`).
 */
export interface RotationWaitAccess {
  /** `saveRotationWait`. */
  save(wait: ApiKeyRotationWait): Promise<void>;
  /** `findRotationWait`, read and checked. */
  find(newKeyId: string): Promise<ApiKeyRotationWait | null>;
  /** `lowerExpiry`. */
  lowerExpiry(id: string, expectedExpiresAt: Date, nextExpiresAt: Date): Promise<boolean>;
}

/**
 * The usage capability of a storage, each call under the deadline and its
 * answer checked (see `ApiKeyStorage.recordUsage`).
 */
export interface UsageAccess {
  /** `recordUsage`, with `batchId` when the storage has `usageBatches`. */
  record(rows: readonly ApiKeyUsageRow[], batchId: string): Promise<void>;
  /** `readUsage`, its buckets checked. */
  read(query: ApiKeyUsageReadQuery): Promise<ApiKeyUsageBucket[]>;
}

function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/**
 * The reader of `readUsage` answers to `query`: hour starts inside the
 * window, ascending, copied, each count a non-negative safe integer.
 */
function readUsageBuckets(query: ApiKeyUsageReadQuery): (value: unknown) => ApiKeyUsageBucket[] {
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

function isInvalidDate(value: unknown): value is Date {
  return value instanceof Date && Number.isNaN(value.getTime());
}

/**
 * A stored `expiresAt` as the service reads it, copied: a `Date` that is not a
 * valid date (a bad row, or one written by an older version) counts as
 * expired, read as the epoch, 1970-01-01T00:00:00.000Z. In-process storages
 * store it so read (their records are checked once, not on every peek).
 */
export function readExpiresAt(expiresAt: Date | null): Date | null {
  if (expiresAt === null) return null;
  const ms = expiresAt.getTime();
  return new Date(Number.isNaN(ms) ? 0 : ms);
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
    compileCredits({ remaining, refill });
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
 * `null` and an `expiresAt` that is not a valid date as expired (the epoch,
 * 1970-01-01T00:00:00.000Z), in a shallow copy (else the value itself). Throws
 * a `TypeError` naming the first field that breaks the `ApiKeyRecord` shape
 * (never its value).
 */
export function readApiKeyRecord(value: unknown): ApiKeyRecord {
  if (typeof value !== "object" || value === null) {
    throw new TypeError("malformed record: not an object");
  }
  let record = value as Record<string, unknown>;
  if (isInvalidDate(record.expiresAt) || NULLABLE_FIELDS.some((f) => record[f] === undefined)) {
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

function readRecordOrNull(value: unknown): ApiKeyRecord | null {
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
function readReplaced(tenantId: string, keyId: string): (value: unknown) => ApiKeyRecord | null {
  return (value) => {
    const record = readRecordOrNull(value);
    if (record !== null && (record.tenantId !== tenantId || record.replacedByKeyId !== keyId)) {
      throw new Error("record outside the tenant or not replaced by the key");
    }
    return record;
  };
}

/** The reader of a `findTenantPool` answer: null, or a checked record of `tenantId` spending a pool. */
function readPoolRecord(tenantId: string): (value: unknown) => ApiKeyRecord | null {
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

/** `findByPrefix`'s answer: a record, or null after reading the stand-in. */
function readLookup(value: unknown): ApiKeyRecord | null {
  const record = readApiKeyRecord(value === null ? LOOKUP_STAND_IN : value);
  return value === null ? null : record;
}

function readRecords(value: unknown): ApiKeyRecord[] {
  if (!Array.isArray(value)) throw malformed();
  return value.map(readApiKeyRecord);
}

function readPrefixes(value: unknown): string[] {
  if (!Array.isArray(value) || !value.every(isString)) throw new Error("answer is not prefixes");
  return [...value];
}

function readBoolean(value: unknown): boolean {
  if (typeof value !== "boolean") throw new Error("answer is not a boolean");
  return value;
}

/**
 * Rows of `countHashes` checked and merged: one per scheme and version,
 * the current scheme first, versions ascending.
 */
function readHashCounts(value: unknown): ApiKeyHashCount[] {
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
function readExpiringPage(options: ListExpiringApiKeysOptions): (value: unknown) => ApiKeyRecord[] {
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
 * most `limit` records, each checked, of the tenant, of the status and
 * environment asked for, not the cursor's record, and in order from the
 * cursor on (ids and names are ordered by the storage's own collation, so
 * only the dates are compared); predecessors only of the page's records.
 */
function readPage(
  { comparePositions, matchesPage, positionOf }: typeof import("./_paging.ts"),
  tenantId: string,
  options: ListApiKeyPageOptions,
): (value: unknown) => { records: ApiKeyRecord[]; predecessors: Record<string, string> } {
  const order = comparePositions(options.sort);
  const dated = options.sort !== "name_asc";
  const { after } = options;
  return (value) => {
    const page = (typeof value === "object" && value !== null ? value : {}) as ApiKeyRecordPage;
    const records = readRecords(page.records);
    if (records.length > options.limit) throw new Error("page longer than its limit");
    let previous = after?.value;
    for (const record of records) {
      if (!matchesPage(record, tenantId, { ...options, q: null })) {
        throw new Error("record outside the tenant or the filters");
      }
      if (record.id === after?.id) throw new Error("page did not move past its cursor");
      const { value } = positionOf(record, options.sort);
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

function readRotationWait(value: unknown): ApiKeyRotationWait | null {
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

const ignore = (): void => {};

/**
 * Reads the answer of `rotate`: `"rotated"` or nothing (a storage written for
 * the spec) is done; `"not_rotatable"` throws `api_key_not_rotatable`.
 */
function readRotateAnswer(value: unknown): void {
  if (value === "not_rotatable") throw new ApiKeyOperationError("api_key_not_rotatable");
  if (value !== undefined && value !== "rotated") {
    throw new Error('answer is not "rotated", "not_rotatable" or nothing');
  }
}

/**
 * The error a failed storage call rejects with: the one way `ApiKeyStorageError`s are built. A
 * cause saying a table, column or function is missing becomes one naming the migration to apply.
 */
function toStorageError(operation: string, error: unknown): Error {
  if (error instanceof ApiKeyOperationError || error instanceof ApiKeyStorageError) return error;
  return new ApiKeyStorageError(operation, missingMigrationError(error) ?? error);
}

/** The stand-in looked up among the checked records when a prefix is unknown. */
const CHECKED = Object.freeze({});

/**
 * The storage as both flows use it (see the module documentation). Built once
 * per service from the `storage` option, which it validates.
 */
export class StorageAccess {
  /**
   * The validated synchronous lookup of the `peekByPrefix` capability
   * (`undefined` without it). Each stored object is checked once (an
   * in-process storage replaces fields only with valid values); an unknown
   * prefix looks up a stand-in, so it costs what a stored one does.
   */
  readonly peek: ((prefix: string) => Readonly<ApiKeyRecord> | null) | undefined;
  /** The line announcing the missing capabilities, `undefined` when none is missing. */
  readonly notice: string | undefined;
  /** The expiry-notice capability, `undefined` without it. */
  readonly expiryNotices: ExpiryNoticeAccess | undefined;
  /** The waiting-rotation capability, `undefined` without it. */
  readonly rotationWaits: RotationWaitAccess | undefined;
  /** `renameForTenant` under the deadline, `undefined` without the capability. */
  readonly renameForTenant:
    | ((tenantId: string, id: string, name: string, audit?: AuditAppend) => Promise<void>)
    | undefined;
  /** The usage capability, `undefined` without it. */
  readonly usage: UsageAccess | undefined;
  /** The audit capability (`appendAudit` and `readAudit`), `undefined` without it. */
  readonly audit: AuditAccess | undefined;
  /** The storage's class name (for log lines). */
  readonly name: string;
  /** Whether the storage keeps each record's `layout` (`storesLayout`): a key verifies only in it. */
  readonly storesLayout: boolean;
  /** Whether the storage keeps each record's `rateLimits` (`storesRateLimits`). */
  readonly storesRateLimits: boolean;
  /** `setCredits` under the deadline, `undefined` without `storesCredits`. */
  readonly setCredits: ((id: string, credits: ApiKeyCredits) => Promise<void>) | undefined;
  /**
   * `findTenantPool` under the deadline, its answer checked; `undefined`
   * without the capability (or without `storesCredits`).
   */
  readonly findTenantPool: ((tenantId: string) => Promise<ApiKeyRecord | null>) | undefined;
  /**
   * `setTenantPool` under the deadline, answering the prefixes written;
   * `undefined` without the capability (or without `storesCredits`).
   */
  readonly setTenantPool:
    | ((tenantId: string, remaining: number, updatedAt: Date) => Promise<string[]>)
    | undefined;
  readonly #storage: ApiKeyStorage;
  readonly #timeoutMs: number;
  readonly #markRevokedIfActive:
    | ((id: string, at: Date, audit?: AuditAppend) => Promise<boolean>)
    | undefined;
  readonly #replaceHash:
    | ((id: string, expectedHash: string, next: ApiKeyHashReplacement) => Promise<boolean>)
    | undefined;
  readonly #countHashes: ((now: Date) => Promise<ApiKeyHashCount[]>) | undefined;
  readonly #forTenant:
    | Required<Pick<ApiKeyStorage, "markRevokedForTenant" | "rotateForTenant">>
    | undefined;
  readonly #touchFailed = warnOnce("touchLastUsed");
  readonly #listPage: ApiKeyStorage["listPageByTenant"];
  readonly #findByReplacement: ApiKeyStorage["findByReplacement"];

  /**
   * Checks `storage` (a `TypeError` naming `label` when a required method is
   * missing or a capability is not a function) and detects its capabilities.
   */
  constructor(storage: unknown, timeoutMs: number, label: string) {
    if (typeof storage !== "object" || storage === null) {
      throw new TypeError(`${label} is required`);
    }
    const methods = storage as Record<string, unknown>;
    for (const method of API_KEY_STORAGE_METHODS) {
      if (typeof methods[method] !== "function") {
        throw new TypeError(`${label} is missing method ${method}`);
      }
    }
    const missing: string[] = [];
    for (const { methods: group, without } of CAPABILITIES) {
      for (const capability of group) {
        const method = methods[capability];
        if (method !== undefined && typeof method !== "function") {
          throw new TypeError(`${label}.${capability} must be a function`);
        }
      }
      const absent = group.filter((capability) => methods[capability] === undefined);
      if (absent.length > 0) missing.push(`${absent.join(" or ")} (${without})`);
    }
    const { storesLayout } = storage as ApiKeyStorage;
    if (storesLayout !== undefined && typeof storesLayout !== "boolean") {
      throw new TypeError(`${label}.storesLayout must be a boolean`);
    }
    this.storesLayout = storesLayout === true;
    if (!this.storesLayout) missing.push("storesLayout (a key verifies in any accepted layout)");
    const { storesRateLimits } = storage as ApiKeyStorage;
    if (storesRateLimits !== undefined && typeof storesRateLimits !== "boolean") {
      throw new TypeError(`${label}.storesRateLimits must be a boolean`);
    }
    this.storesRateLimits = storesRateLimits === true;
    if (!this.storesRateLimits) {
      missing.push("storesRateLimits (create and rotate refuse rateLimits)");
    }
    const { storesRateLimitKeyId } = storage as ApiKeyStorage;
    if (storesRateLimitKeyId !== undefined && typeof storesRateLimitKeyId !== "boolean") {
      throw new TypeError(`${label}.storesRateLimitKeyId must be a boolean`);
    }
    if (this.storesRateLimits && storesRateLimitKeyId !== true) {
      missing.push(
        "storesRateLimitKeyId (a rotated key without credits counts on its own windows)",
      );
    }
    const store = storage as ApiKeyStorage;
    const { storesCredits, setCredits } = store;
    if (storesCredits !== undefined && typeof storesCredits !== "boolean") {
      throw new TypeError(`${label}.storesCredits must be a boolean`);
    }
    if (storesCredits === true && typeof setCredits !== "function") {
      throw new TypeError(`${label}.setCredits must be a function with storesCredits`);
    }
    this.setCredits = storesCredits === true
      ? (id, credits) =>
        this.#call("setCredits", () => setCredits!.call(store, id, credits), ignore)
      : undefined;
    if (storesCredits !== true) {
      missing.push("storesCredits (create and rotate refuse credits)");
    }
    const { findTenantPool, setTenantPool } = store;
    for (const [name, method] of Object.entries({ findTenantPool, setTenantPool })) {
      if (method !== undefined && typeof method !== "function") {
        throw new TypeError(`${label}.${name} must be a function`);
      }
    }
    this.setTenantPool = storesCredits === true && setTenantPool !== undefined
      ? (tenantId, remaining, updatedAt) =>
        this.#call(
          "setTenantPool",
          () => setTenantPool.call(store, tenantId, remaining, updatedAt),
          readPrefixes,
        )
      : undefined;
    if (storesCredits === true && setTenantPool === undefined) {
      missing.push(
        "setTenantPool (each write-back of a tenant's shared credits reads every key of the tenant)",
      );
    }
    this.findTenantPool = storesCredits === true && findTenantPool !== undefined
      ? (tenantId) =>
        this.#call(
          "findTenantPool",
          () => findTenantPool.call(store, tenantId),
          readPoolRecord(tenantId),
        )
      : undefined;
    if (storesCredits === true && findTenantPool === undefined) {
      missing.push(
        "findTenantPool (each read of a tenant's shared credits reads every key of the tenant)",
      );
    }
    this.#storage = store;
    this.#timeoutMs = timeoutMs;
    this.#markRevokedIfActive = store.markRevokedIfActive?.bind(store);
    this.#replaceHash = store.replaceHash?.bind(store);
    this.#countHashes = store.countHashes?.bind(store);
    this.#listPage = store.listPageByTenant?.bind(store);
    this.#findByReplacement = store.findByReplacement?.bind(store);
    const { markRevokedForTenant, rotateForTenant } = store;
    this.#forTenant = markRevokedForTenant === undefined || rotateForTenant === undefined
      ? undefined
      : {
        markRevokedForTenant: markRevokedForTenant.bind(store),
        rotateForTenant: rotateForTenant.bind(store),
      };
    const { listExpiring, claimExpiryNotice } = store;
    this.expiryNotices = listExpiring === undefined || claimExpiryNotice === undefined
      ? undefined
      : {
        list: (options) =>
          this.#call(
            "listExpiring",
            () => listExpiring.call(store, options),
            readExpiringPage(options),
          ),
        claim: (id, thresholdMs, at) =>
          this.#call(
            "claimExpiryNotice",
            () => claimExpiryNotice.call(store, id, thresholdMs, at),
            readBoolean,
          ),
      };
    const { saveRotationWait, findRotationWait, lowerExpiry } = store;
    this.rotationWaits =
      saveRotationWait === undefined || findRotationWait === undefined || lowerExpiry === undefined
        ? undefined
        : {
          save: (wait) =>
            this.#call("saveRotationWait", () => saveRotationWait.call(store, wait), ignore),
          find: (newKeyId) =>
            this.#call(
              "findRotationWait",
              () => findRotationWait.call(store, newKeyId),
              readRotationWait,
            ),
          lowerExpiry: (id, expected, next) =>
            this.#call(
              "lowerExpiry",
              () => lowerExpiry.call(store, id, expected, next),
              readBoolean,
            ),
        };
    const { renameForTenant } = store;
    this.renameForTenant = renameForTenant === undefined
      ? undefined
      : (tenantId, id, name, audit) =>
        this.#call(
          "renameForTenant",
          () => renameForTenant.call(store, tenantId, id, name, ...this.#with(audit)),
          ignore,
        );
    const { recordUsage, readUsage, usageBatches } = store;
    if (usageBatches !== undefined && typeof usageBatches !== "boolean") {
      throw new TypeError(`${label}.usageBatches must be a boolean`);
    }
    if (usageBatches === true && recordUsage === undefined) {
      throw new TypeError(`${label}.recordUsage must be a function with usageBatches`);
    }
    if (recordUsage !== undefined && usageBatches !== true) {
      missing.push("usageBatches (a usage write retried after storageTimeoutMs may count twice)");
    }
    this.usage = recordUsage === undefined || readUsage === undefined ? undefined : {
      record: (rows, batchId) =>
        this.#call(
          "recordUsage",
          () =>
            usageBatches === true
              ? recordUsage.call(store, rows, batchId)
              : recordUsage.call(store, rows),
          ignore,
        ),
      read: (query) =>
        this.#call("readUsage", () => readUsage.call(store, query), readUsageBuckets(query)),
    };
    this.name = (store as { constructor?: { name?: unknown } }).constructor?.name as string ||
      "storage";
    const { appendAudit, readAudit, pruneAudit } = store;
    for (const [name, method] of Object.entries({ appendAudit, readAudit, pruneAudit })) {
      if (method !== undefined && typeof method !== "function") {
        throw new TypeError(`${label}.${name} must be a function`);
      }
    }
    this.audit = appendAudit === undefined || readAudit === undefined ? undefined : {
      append: (audit) =>
        this.#call("appendAudit", () => appendAudit.call(store, audit), readAuditRecord),
      read: (query) =>
        this.#call("readAudit", () => readAudit.call(store, query), readAuditAnswer(query)),
      prune: pruneAudit === undefined
        ? undefined
        : (tenantId, before) =>
          this.#call("pruneAudit", () => pruneAudit.call(store, tenantId, before), readCount),
    };
    this.notice = missing.length === 0
      ? undefined
      : `api-keys: the storage has no ${
        missing.join(", no ")
      }; optional ApiKeyStorage capabilities, see its documentation`;
    const peekByPrefix = store.peekByPrefix?.bind(store);
    if (peekByPrefix === undefined) {
      this.peek = undefined;
      return;
    }
    const checked = new WeakSet<object>([CHECKED]);
    this.peek = (prefix) => {
      let record: unknown;
      try {
        record = peekByPrefix(prefix) ?? null;
      } catch (error) {
        throw toStorageError("peekByPrefix", error);
      }
      if (!checked.has(record ?? CHECKED) && record !== null) {
        let read: ApiKeyRecord;
        try {
          read = readApiKeyRecord(record);
        } catch (error) {
          throw toStorageError("peekByPrefix", error);
        }
        if (read !== record) return read;
        checked.add(record as object);
      }
      return record as Readonly<ApiKeyRecord> | null;
    };
  }

  /** `findByPrefix`, read as a record or null. */
  findByPrefix(prefix: string): Promise<ApiKeyRecord | null> {
    return this.#call("findByPrefix", () => this.#storage.findByPrefix(prefix), readLookup);
  }

  /** `findById`, read as a record or null. */
  findById(id: string): Promise<ApiKeyRecord | null> {
    return this.#call("findById", () => this.#storage.findById(id), readRecordOrNull);
  }

  /** `listByTenant`, each row read as a record (one malformed row fails the list). */
  listByTenant(tenantId: string, includeRevoked: boolean): Promise<ApiKeyRecord[]> {
    return this.#call(
      "listByTenant",
      () => this.#storage.listByTenant(tenantId, { includeRevoked }),
      readRecords,
    );
  }

  /**
   * One page of a tenant's records (see `ApiKeyStorage.listPageByTenant`):
   * through the capability, checked; without it, every record of the tenant
   * from `listByTenant`, paged here.
   */
  async listPage(
    tenantId: string,
    options: ListApiKeyPageOptions,
  ): Promise<{ records: ApiKeyRecord[]; predecessors: Record<string, string> }> {
    const listPage = this.#listPage;
    const paging = await import("./_paging.ts"); // on use: ./api-keys/nest does not load it (issue 41)
    if (listPage === undefined) {
      return paging.pageOf(await this.listByTenant(tenantId, true), tenantId, options);
    }
    return await this.#call(
      "listPageByTenant",
      () => listPage(tenantId, options),
      readPage(paging, tenantId, options),
    );
  }

  /**
   * The record of `tenantId` that `keyId` replaced (see
   * `ApiKeyStorage.findByReplacement`), or null: through the capability,
   * checked; without it, from `listByTenant`.
   */
  async findByReplacement(tenantId: string, keyId: string): Promise<ApiKeyRecord | null> {
    const find = this.#findByReplacement;
    if (find === undefined) {
      const records = await this.listByTenant(tenantId, true);
      return records.find((record) => record.replacedByKeyId === keyId) ?? null;
    }
    return await this.#call(
      "findByReplacement",
      () => find(tenantId, keyId),
      readReplaced(tenantId, keyId),
    );
  }

  /** `insert` (with `audit`, appended in the same step). */
  insert(record: ApiKeyRecord, audit?: AuditAppend): Promise<void> {
    return this.#call("insert", () => this.#storage.insert(record, ...this.#with(audit)), ignore);
  }

  /** `rotate` (with `audit`, appended in the same step). */
  rotate(input: RotateApiKeyStorageInput, audit?: AuditAppend): Promise<void> {
    return this.#call(
      "rotate",
      () => this.#storage.rotate(input, ...this.#with(audit)),
      readRotateAnswer,
    );
  }

  /** The trailing `audit` argument of a change: none without the capability or a record. */
  #with(audit: AuditAppend | undefined): [] | [AuditAppend] {
    return audit === undefined || this.audit === undefined ? [] : [audit];
  }

  /**
   * Writes `revokedAt`: through `markRevokedIfActive` when the storage has it,
   * answering whether this call revoked the key; else `markRevoked`, always `true`.
   */
  revoke(id: string, at: Date, audit?: AuditAppend): Promise<boolean> {
    const markRevokedIfActive = this.#markRevokedIfActive;
    if (markRevokedIfActive === undefined) {
      return this.#call("markRevoked", () => this.#storage.markRevoked(id, at), () => true);
    }
    return this.#call(
      "markRevokedIfActive",
      () => markRevokedIfActive(id, at, ...this.#with(audit)),
      readBoolean,
    );
  }

  /**
   * `rotate` of a record of `tenantId`: through `rotateForTenant` when the
   * storage has it, else `rotate` (the caller checked the tenant on a read).
   */
  rotateForTenant(
    tenantId: string,
    input: RotateApiKeyStorageInput,
    audit?: AuditAppend,
  ): Promise<void> {
    const forTenant = this.#forTenant;
    if (forTenant === undefined) return this.rotate(input, audit);
    return this.#call(
      "rotateForTenant",
      () => forTenant.rotateForTenant(tenantId, input, ...this.#with(audit)),
      readRotateAnswer,
    );
  }

  /**
   * `revoke` of a record of `tenantId`: through `markRevokedForTenant` when
   * the storage has it, else `revoke` (the caller checked the tenant on a read).
   */
  revokeForTenant(
    tenantId: string,
    id: string,
    at: Date,
    audit?: AuditAppend,
  ): Promise<boolean> {
    const forTenant = this.#forTenant;
    if (forTenant === undefined) return this.revoke(id, at, audit);
    return this.#call(
      "markRevokedForTenant",
      () => forTenant.markRevokedForTenant(tenantId, id, at, ...this.#with(audit)),
      readBoolean,
    );
  }

  /** Whether the storage has `markRevokedIfActive` (a revoke tells whether it changed the key). */
  get revokesOnce(): boolean {
    return this.#markRevokedIfActive !== undefined;
  }

  /** Whether the storage has the `replaceHash` capability. */
  get canReplaceHash(): boolean {
    return this.#replaceHash !== undefined;
  }

  /** `replaceHash` (the capability; rejects without it), answering whether it replaced the hash. */
  replaceHash(id: string, expectedHash: string, next: ApiKeyHashReplacement): Promise<boolean> {
    const replaceHash = this.#replaceHash;
    if (replaceHash === undefined) {
      return Promise.reject(toStorageError("replaceHash", new Error("not supported")));
    }
    return this.#call("replaceHash", () => replaceHash(id, expectedHash, next), readBoolean);
  }

  /** Whether the storage has the `countHashes` capability. */
  get canCountHashes(): boolean {
    return this.#countHashes !== undefined;
  }

  /** `countHashes` (the capability; rejects without it), rows checked and merged. */
  countHashes(now: Date): Promise<ApiKeyHashCount[]> {
    const countHashes = this.#countHashes;
    if (countHashes === undefined) {
      return Promise.reject(toStorageError("countHashes", new Error("not supported")));
    }
    return this.#call("countHashes", () => countHashes(now), readHashCounts);
  }

  /**
   * `touchLastUsed(id, at())`, not awaited: a throw or rejection (of the
   * storage or of `at`) never reaches the caller and is warned about once.
   * `settled` (the telemetry bridge's span end) learns how it settled.
   */
  touchLastUsed(id: string, at: () => Date, settled?: (failed: boolean) => void): void {
    const storage = this.#storage;
    const touch = settled === undefined ? () => storage.touchLastUsed(id, at()) : async () => {
      try {
        await storage.touchLastUsed(id, at());
        settled(false);
      } catch (error) {
        settled(true);
        throw error;
      }
    };
    callDetached(touch, [], this.#touchFailed);
  }

  /**
   * Runs `call` under the storage deadline, rejecting with `Error(<what>
   * deadline exceeded)` past it; a synchronous throw is a rejection.
   */
  async withDeadline<T>(what: string, call: () => T | Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} deadline exceeded`)), this.#timeoutMs);
      });
      return await Promise.race([call(), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs `call` under the deadline and reads its answer; any failure is an `ApiKeyStorageError`. */
  async #call<T>(operation: string, call: () => unknown, read: (value: unknown) => T): Promise<T> {
    try {
      return read(await this.withDeadline("storage", call));
    } catch (error) {
      throw toStorageError(operation, error);
    }
  }
}
