/**
 * In-process `ApiKeyStorage`, indexed by id, prefix and tenant, for tests,
 * demos and single-process services. Records are copied in and out.
 *
 * @module
 */
import { ApiKeyOperationError } from "../errors.ts";
import { API_KEY_HASH_SCHEMES, CURRENT_HASH_SCHEME } from "../hasher.ts";
import {
  isStoredCredits,
  LOOKUP_STAND_IN,
  newestPoolRecord,
  readApiKeyRecord,
  readExpiresAt,
  withPoolBalance,
} from "./_answers.ts";
import { pageOf } from "./_paging.ts";
import { acceptedUntilMs } from "../_accepted_until.ts";
import type {
  ApiKeyRecordPage,
  ApiKeyRotationWait,
  ApiKeyStorage,
  ApiKeyStorageRotateResult,
  ListApiKeyPageOptions,
  ListExpiringApiKeysOptions,
} from "./types.ts";
import type {
  ApiKeyCredits,
  ApiKeyHashCount,
  ApiKeyHashReplacement,
  ApiKeyPoolCredits,
  ApiKeyRecord,
  ApiKeyRecordInput,
  ListApiKeysOptions,
  RotateApiKeyStorageInput,
} from "../types.ts";
import type {
  ApiKeyUsageBucket,
  ApiKeyUsageKeysReadQuery,
  ApiKeyUsageReadQuery,
  ApiKeyUsageRow,
} from "../metering/usage.ts";
import { addCounts, zeroCounts } from "../metering/_usage_counts.ts";
import { MemoryAuditChains } from "../audit/_memory.ts";
import type { AuditAppend, AuditReadQuery, StoredAuditRecord } from "../audit/types.ts";
import type { AuditReadAnswer } from "./types.ts";

const notFound = () => new ApiKeyOperationError("api_key_record_not_found");

function copyDate(date: Date | null): Date | null {
  return date === null ? null : new Date(date.getTime());
}

/** A deep copy of a record (arrays and dates are new objects; `expiresAt` as the service reads it). */
function copyRecord(record: ApiKeyRecord): ApiKeyRecord {
  const copy: ApiKeyRecord = {
    ...record,
    scopes: [...record.scopes],
    lastUsedAt: copyDate(record.lastUsedAt),
    expiresAt: readExpiresAt(record.expiresAt),
    revokedAt: copyDate(record.revokedAt),
    rotatedAt: copyDate(record.rotatedAt),
    createdAt: new Date(record.createdAt.getTime()),
  };
  if (record.allowedIpCidrs !== undefined) copy.allowedIpCidrs = [...record.allowedIpCidrs];
  if (record.rateLimits !== undefined) copy.rateLimits = record.rateLimits.map((p) => ({ ...p }));
  if (record.credits !== undefined) copy.credits = copyCredits(record.credits);
  return copy;
}

function copyCredits(credits: ApiKeyCredits): ApiKeyCredits {
  const copy: ApiKeyCredits = copyBalance(credits);
  if (credits.pool !== undefined) copy.pool = copyBalance(credits.pool);
  return copy;
}

function copyBalance<C extends ApiKeyPoolCredits>(credits: C): C {
  return {
    ...credits,
    updatedAt: new Date(credits.updatedAt.getTime()),
    ...(credits.refill === undefined ? {} : { refill: { ...credits.refill } }),
  };
}

/** List order: newest first (`createdAt` descending), then `id` ascending. */
function byCreation(a: ApiKeyRecord, b: ApiKeyRecord): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Expiry order: `expiresAt` ascending, then `id` (records with an expiry only). */
function byExpiry(a: { expiresAt: Date; id: string }, b: { expiresAt: Date; id: string }): number {
  const byTime = a.expiresAt.getTime() - b.expiresAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Usage batch ids an `InMemoryApiKeyStorage` remembers (the newest): memory stays bounded. */
const MAX_USAGE_BATCHES = 10_000;

/**
 * Memory-backed storage with every capability of `ApiKeyStorage`
 * (`peekByPrefix`, `markRevokedIfActive`, `replaceHash`, `countHashes`,
 * `storesLayout`, `rotateChecksName`, `storesRateLimits`, `storesRateLimitKeyId`, `storesCredits`, the expiry notices, the rotations that wait, the
 * tenant-bound operations, the usage per key and hour with `usageBatches`). Lookups by id and prefix are O(1)
 * and listing is O(keys of the tenant), whatever the total count;
 * `listExpiring` scans every record, `readUsage` every stored hour of the tenant. Each write is one synchronous step, so
 * `rotate` and the compare-and-set capabilities are atomic.
 *
 * @example
 * ```ts
 * import { InMemoryApiKeyStorage } from "./in_memory.ts";
 * const storage = new InMemoryApiKeyStorage();
 * await storage.findByPrefix("AbCdEfGhIjKl"); // null
 * ```
 */
export class InMemoryApiKeyStorage implements ApiKeyStorage {
  readonly #byId = new Map<string, ApiKeyRecord>();
  readonly #idByPrefix = new Map<string, string>();
  readonly #idsByTenant = new Map<string, Set<string>>();
  /** Smallest expiry-notice threshold claimed per key id. */
  readonly #noticeClaims = new Map<string, number>();
  readonly #rotationWaits = new Map<string, ApiKeyRotationWait>();
  /** Usage rows per tenant, keyed by hour and key id. */
  readonly #usage = new Map<string, Map<string, ApiKeyUsageBucket & { keyId: string }>>();
  /**
   * Batch ids of `recordUsage` already recorded, the newest `MAX_USAGE_BATCHES` (one per flush
   * write; a recorder retries only its few failed writes, oldest first, before any new one).
   */
  readonly #usageBatches = new Set<string>();
  readonly #audit = new MemoryAuditChains();
  /** Capability: each record's `layout` is kept. */
  readonly storesLayout = true;
  /** Capability: `rotate` given `expectedName` rotates only while the old record holds it. */
  readonly rotateChecksName = true;
  /** Capability: each record's `rateLimits` are kept. */
  readonly storesRateLimits = true;
  /** Capability: each record's `rateLimitKeyId` is kept. */
  readonly storesRateLimitKeyId = true;
  /** Capability: each record's `credits` are kept (see `setCredits`). */
  readonly storesCredits = true;
  /** Capability: `recordUsage` records each batch id once. */
  readonly usageBatches = true;

  /** Number of stored records. */
  get size(): number {
    return this.#byId.size;
  }

  /** Stores a copy of `record` as read (`readApiKeyRecord`: absent nullable fields as null). */
  #add(given: ApiKeyRecordInput): void {
    const record = readApiKeyRecord(given);
    if (this.#byId.has(record.id)) throw new Error("duplicate API key id");
    if (this.#idByPrefix.has(record.prefix)) throw new Error("duplicate API key prefix");
    this.#byId.set(record.id, copyRecord(record));
    this.#idByPrefix.set(record.prefix, record.id);
    let ids = this.#idsByTenant.get(record.tenantId);
    if (ids === undefined) this.#idsByTenant.set(record.tenantId, ids = new Set());
    ids.add(record.id);
  }

  #require(id: string): ApiKeyRecord {
    const record = this.#byId.get(id);
    if (record === undefined) throw notFound();
    return record;
  }

  /**
   * Inserts a record; rejects on a duplicate id or prefix, and with a
   * `TypeError` naming the field for a malformed record.
   */
  insert(record: ApiKeyRecordInput, audit?: AuditAppend): Promise<void> {
    if (audit !== undefined) return this.#audited(audit, () => this.#add(record)).then(() => {});
    try {
      this.#add(record);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Finds a record by id. */
  findById(id: string): Promise<ApiKeyRecord | null> {
    const record = this.#byId.get(id);
    return Promise.resolve(record === undefined ? null : copyRecord(record));
  }

  /** Finds a record by prefix. */
  findByPrefix(prefix: string): Promise<ApiKeyRecord | null> {
    // An unknown prefix copies a stand-in: it costs what a stored one does.
    const record = this.peekByPrefix(prefix);
    const copy = copyRecord(record ?? LOOKUP_STAND_IN);
    return Promise.resolve(record === null ? null : copy);
  }

  /** Capability: the stored record of `prefix` itself (not a copy; do not mutate) or null. */
  peekByPrefix(prefix: string): Readonly<ApiKeyRecord> | null {
    const id = this.#idByPrefix.get(prefix);
    return id === undefined ? null : this.#byId.get(id) ?? null;
  }

  /** Lists a tenant's records newest first, revoked ones only with `includeRevoked`. */
  listByTenant(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecord[]> {
    const includeRevoked = options?.includeRevoked === true;
    const out: ApiKeyRecord[] = [];
    for (const id of this.#idsByTenant.get(tenantId) ?? []) {
      const record = this.#byId.get(id)!;
      if (includeRevoked || record.revokedAt === null) out.push(copyRecord(record));
    }
    return Promise.resolve(out.sort(byCreation));
  }

  /** Capability: one page of a tenant's records (`listPageByTenant`); reads only. */
  listPageByTenant(tenantId: string, options: ListApiKeyPageOptions): Promise<ApiKeyRecordPage> {
    const records = [...this.#idsByTenant.get(tenantId) ?? []].map((id) => this.#byId.get(id)!);
    const page = pageOf(records, tenantId, options);
    return Promise.resolve({ ...page, records: page.records.map(copyRecord) });
  }

  /** Capability: the tenant's record that `keyId` replaced (`findByReplacement`), or null. */
  findByReplacement(tenantId: string, keyId: string): Promise<ApiKeyRecord | null> {
    const found = this.#ofTenant(tenantId).find((record) => record.replacedByKeyId === keyId);
    return Promise.resolve(found === undefined ? null : copyRecord(found));
  }

  /** Capability: the tenant's records among `ids` (`findManyByIds`), copies. */
  findManyByIds(tenantId: string, ids: readonly string[]): Promise<ApiKeyRecord[]> {
    const found = [...new Set(ids)].map((id) => this.#byId.get(id))
      .filter((record) => record !== undefined && record.tenantId === tenantId);
    return Promise.resolve(found.map((record) => copyRecord(record!)));
  }

  /** Capability: the tenant's record holding the newest pool copy (`findTenantPool`), or null. */
  findTenantPool(tenantId: string): Promise<ApiKeyRecord | null> {
    const found = newestPoolRecord(this.#ofTenant(tenantId));
    return Promise.resolve(found === null ? null : copyRecord(found));
  }

  /**
   * Capability: the pool copy's `remaining` and `updatedAt` of every record of
   * `tenantId` spending the pool (`setTenantPool`); answers their prefixes.
   */
  setTenantPool(tenantId: string, remaining: number, updatedAt: Date): Promise<string[]> {
    const writes = this.#ofTenant(tenantId).flatMap((record) => {
      const credits = withPoolBalance(record.credits, remaining, new Date(updatedAt.getTime()));
      return credits === undefined ? [] : [{ record, credits }];
    });
    if (!writes.every(({ credits }) => isStoredCredits(credits))) {
      return Promise.reject(new TypeError("setTenantPool: credits are malformed"));
    }
    for (const { record, credits } of writes) record.credits = copyCredits(credits);
    return Promise.resolve(writes.map(({ record }) => record.prefix));
  }

  /** The stored records of `tenantId` (not copies), newest first. */
  #ofTenant(tenantId: string): ApiKeyRecord[] {
    return [...this.#idsByTenant.get(tenantId) ?? []].map((id) => this.#byId.get(id)!)
      .sort(byCreation);
  }

  /** Sets `revokedAt`; unknown ids reject with `api_key_record_not_found`. */
  markRevoked(id: string, revokedAt: Date): Promise<void> {
    try {
      this.#require(id).revokedAt = new Date(revokedAt.getTime());
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Sets `revokedAt` unless already set; answers whether it did. Unknown ids reject. */
  markRevokedIfActive(id: string, revokedAt: Date, audit?: AuditAppend): Promise<boolean> {
    if (audit !== undefined) {
      return this.#audited(audit, () => this.#revokeIfActive(id, revokedAt));
    }
    try {
      return Promise.resolve(this.#revokeIfActive(id, revokedAt));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #revokeIfActive(id: string, revokedAt: Date): boolean {
    const record = this.#require(id);
    if (record.revokedAt !== null) return false;
    record.revokedAt = new Date(revokedAt.getTime());
    return true;
  }

  /** Capability: `markRevokedIfActive` of a record of `tenantId`; others reject as unknown. */
  markRevokedForTenant(
    tenantId: string,
    id: string,
    revokedAt: Date,
    audit?: AuditAppend,
  ): Promise<boolean> {
    if (audit === undefined && this.#byId.get(id)?.tenantId !== tenantId) {
      return Promise.reject(notFound());
    }
    if (audit === undefined) return this.markRevokedIfActive(id, revokedAt);
    return this.#audited(audit, () => {
      if (this.#byId.get(id)?.tenantId !== tenantId) throw notFound();
      return this.#revokeIfActive(id, revokedAt);
    });
  }

  /**
   * Replaces the hash of `id` if it is still `expectedHash`, in one
   * synchronous step; answers whether it did. A `next` that is not a valid
   * hash, scheme and version rejects with a `TypeError` (peeked records are
   * checked once, so only valid values are written).
   */
  replaceHash(id: string, expectedHash: string, next: ApiKeyHashReplacement): Promise<boolean> {
    const { hash, hashScheme, pepperVersion } = next ?? {};
    if (
      typeof hash !== "string" || !API_KEY_HASH_SCHEMES.includes(hashScheme) ||
      !Number.isSafeInteger(pepperVersion)
    ) {
      return Promise.reject(new TypeError("replaceHash: next is not a valid hash replacement"));
    }
    const record = this.#byId.get(id);
    if (record === undefined || record.hash !== expectedHash) return Promise.resolve(false);
    record.hash = hash;
    record.pepperVersion = pepperVersion;
    if (hashScheme === CURRENT_HASH_SCHEME) delete record.hashScheme;
    else record.hashScheme = hashScheme;
    return Promise.resolve(true);
  }

  /** Counts the records usable at `now` per hash scheme and pepper version (O(records)). */
  countHashes(now: Date): Promise<ApiKeyHashCount[]> {
    const at = now.getTime();
    const counts = new Map<string, ApiKeyHashCount>();
    for (const record of this.#byId.values()) {
      if (record.revokedAt !== null || acceptedUntilMs(record) <= at) continue;
      const hashScheme = record.hashScheme ?? CURRENT_HASH_SCHEME;
      const key = `${hashScheme} ${record.pepperVersion}`;
      const seen = counts.get(key);
      if (seen !== undefined) seen.count++;
      else counts.set(key, { hashScheme, pepperVersion: record.pepperVersion, count: 1 });
    }
    return Promise.resolve([...counts.values()]);
  }

  /**
   * Capability: sets the `credits` of a known id (unknown ids are ignored);
   * malformed credits reject with a `TypeError`.
   */
  setCredits(id: string, credits: ApiKeyCredits): Promise<void> {
    if (!isStoredCredits(credits)) {
      return Promise.reject(new TypeError("setCredits: credits are malformed"));
    }
    const record = this.#byId.get(id);
    if (record !== undefined) record.credits = copyCredits(credits);
    return Promise.resolve();
  }

  /**
   * Sets `lastUsedAt` of a known id (unknown ids are ignored); one that is
   * not a valid `Date` rejects with a `TypeError`.
   */
  touchLastUsed(id: string, lastUsedAt: Date): Promise<void> {
    if (!(lastUsedAt instanceof Date) || Number.isNaN(lastUsedAt.getTime())) {
      return Promise.reject(new TypeError("touchLastUsed: lastUsedAt must be a valid Date"));
    }
    const record = this.#byId.get(id);
    // Only later: an instance whose clock is behind never moves it back.
    if (record !== undefined && !(record.lastUsedAt && record.lastUsedAt >= lastUsedAt)) {
      record.lastUsedAt = new Date(lastUsedAt.getTime());
    }
    return Promise.resolve();
  }

  /** Rotates in one synchronous step; a rotated or revoked key answers `"not_rotatable"`. */
  rotate(
    input: RotateApiKeyStorageInput,
    audit?: AuditAppend,
  ): Promise<ApiKeyStorageRotateResult> {
    return this.#rotate(undefined, input, audit);
  }

  #rotate(
    tenantId: string | undefined,
    input: RotateApiKeyStorageInput,
    audit: AuditAppend | undefined,
  ): Promise<ApiKeyStorageRotateResult> {
    const change = (): ApiKeyStorageRotateResult => {
      const old = this.#require(input.oldKeyId);
      if (tenantId !== undefined && old.tenantId !== tenantId) throw notFound();
      if (
        old.rotatedAt !== null || old.revokedAt !== null || old.replacedByKeyId !== null ||
        (input.expectedName !== undefined && old.name !== input.expectedName)
      ) {
        return "not_rotatable";
      }
      this.#add(input.newRecord);
      old.rotatedAt = new Date(input.rotatedAt.getTime());
      old.expiresAt = readExpiresAt(input.oldExpiresAt);
      old.replacedByKeyId = input.newRecord.id;
      return "rotated";
    };
    if (audit !== undefined) {
      return this.#audited(audit, () => change() === "rotated").then((done) =>
        done ? "rotated" : "not_rotatable"
      );
    }
    try {
      return Promise.resolve(change());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Runs `change` and appends `audit` in the same step when it answers anything but `false`. */
  async #audited<T>(audit: AuditAppend, change: () => T): Promise<T> {
    const [answer] = await this.#audit.run(audit, change);
    return answer;
  }

  /** Capability: appends a record to its tenant's chain. */
  async appendAudit(audit: AuditAppend): Promise<StoredAuditRecord> {
    const [, record] = await this.#audit.run(audit, () => true);
    return record!;
  }

  /** Capability: a tenant's records and its chain's state. */
  readAudit(query: AuditReadQuery): Promise<AuditReadAnswer> {
    return Promise.resolve({
      records: this.#audit.read(query),
      state: this.#audit.state(query.tenantId),
    });
  }

  /** Capability: drops records written before `before`, keeping the last one as the anchor's base. */
  pruneAudit(tenantId: string, before: Date): Promise<number> {
    return Promise.resolve(this.#audit.prune(tenantId, before));
  }

  /** Capability: `rotate` of a record of `tenantId`; others reject as unknown. */
  rotateForTenant(
    tenantId: string,
    input: RotateApiKeyStorageInput,
    audit?: AuditAppend,
  ): Promise<ApiKeyStorageRotateResult> {
    return this.#rotate(tenantId, input, audit);
  }

  /** Capability: sets the name of a record of `tenantId`; others reject as unknown. */
  renameForTenant(tenantId: string, id: string, name: string, audit?: AuditAppend): Promise<void> {
    const change = () => {
      const record = this.#byId.get(id);
      if (record?.tenantId !== tenantId) throw notFound();
      record.name = name;
    };
    if (audit !== undefined) return this.#audited(audit, change);
    try {
      return Promise.resolve(change());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Capability: `renameForTenant` only while the record is named `expectedName` (`false` else). */
  replaceNameForTenant(
    tenantId: string,
    id: string,
    expectedName: string,
    name: string,
    audit?: AuditAppend,
  ): Promise<boolean> {
    const change = () => {
      const record = this.#byId.get(id);
      if (record?.tenantId !== tenantId) throw notFound();
      if (record.name !== expectedName) return false;
      record.name = name;
      return true;
    };
    if (audit !== undefined) return this.#audited(audit, change);
    try {
      return Promise.resolve(change());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Capability: unrevoked records expiring in the window, in expiry order, one page. */
  listExpiring(options: ListExpiringApiKeysOptions): Promise<ApiKeyRecord[]> {
    const from = options.from.getTime();
    const until = options.until.getTime();
    const found: { expiresAt: Date; id: string; record: ApiKeyRecord }[] = [];
    for (const record of this.#byId.values()) {
      const { expiresAt, id } = record;
      if (expiresAt === null || record.revokedAt !== null) continue;
      const ms = expiresAt.getTime();
      if (ms <= from || ms > until) continue;
      if (options.after !== null && byExpiry({ expiresAt, id }, options.after) <= 0) continue;
      found.push({ expiresAt, id, record });
    }
    found.sort(byExpiry);
    return Promise.resolve(found.slice(0, options.limit).map((entry) => copyRecord(entry.record)));
  }

  /** Capability: claims the notice of `thresholdMs` unless the key holds one at most as large. */
  claimExpiryNotice(id: string, thresholdMs: number, _at: Date): Promise<boolean> {
    const held = this.#noticeClaims.get(id);
    if (held !== undefined && held <= thresholdMs) return Promise.resolve(false);
    this.#noticeClaims.set(id, thresholdMs);
    return Promise.resolve(true);
  }

  /** Capability: stores a copy of the wait (a duplicate `newKeyId` rejects). */
  saveRotationWait(wait: ApiKeyRotationWait): Promise<void> {
    if (this.#rotationWaits.has(wait.newKeyId)) {
      return Promise.reject(new Error("duplicate rotation wait"));
    }
    this.#rotationWaits.set(wait.newKeyId, { ...wait, waitEndsAt: new Date(wait.waitEndsAt) });
    return Promise.resolve();
  }

  /** Capability: a copy of the wait saved for `newKeyId`, or null. */
  findRotationWait(newKeyId: string): Promise<ApiKeyRotationWait | null> {
    const wait = this.#rotationWaits.get(newKeyId);
    return Promise.resolve(
      wait === undefined ? null : { ...wait, waitEndsAt: new Date(wait.waitEndsAt) },
    );
  }

  /**
   * Capability: adds each row to its (key, hour) and raises the key's
   * `lastUsedAt`, in one step; a `batchId` already recorded changes nothing.
   */
  recordUsage(rows: readonly ApiKeyUsageRow[], batchId?: string): Promise<void> {
    if (batchId !== undefined) {
      if (this.#usageBatches.has(batchId)) return Promise.resolve();
      this.#usageBatches.add(batchId);
      if (this.#usageBatches.size > MAX_USAGE_BATCHES) {
        this.#usageBatches.delete(this.#usageBatches.values().next().value!);
      }
    }
    for (const row of rows) {
      let tenant = this.#usage.get(row.tenantId);
      if (tenant === undefined) this.#usage.set(row.tenantId, tenant = new Map());
      const id = `${row.bucket.getTime()} ${row.keyId}`;
      let stored = tenant.get(id);
      if (stored === undefined) {
        stored = { ...zeroCounts(), keyId: row.keyId, start: new Date(row.bucket) };
        tenant.set(id, stored);
      }
      addCounts(stored, row);
      const record = this.#byId.get(row.keyId);
      const at = row.lastUsedAt?.getTime() ?? -Infinity;
      if (record !== undefined && at > (record.lastUsedAt?.getTime() ?? -Infinity)) {
        record.lastUsedAt = new Date(at);
      }
    }
    return Promise.resolve();
  }

  /** Capability: each key's hours in the window, in one read. */
  readUsageOfKeys(query: ApiKeyUsageKeysReadQuery): Promise<ApiKeyUsageBucket[][]> {
    const index = new Map(query.keyIds.map((keyId, i) => [keyId, i]));
    return Promise.resolve(
      this.#hours(query.tenantId, query.from, query.to, (keyId) => index.get(keyId), index.size),
    );
  }

  /** Capability: the tenant's hours in the window, summed over its keys (or one key). */
  readUsage(query: ApiKeyUsageReadQuery): Promise<ApiKeyUsageBucket[]> {
    const { keyId } = query;
    const one = (id: string) => keyId === undefined || id === keyId ? 0 : undefined;
    return Promise.resolve(this.#hours(query.tenantId, query.from, query.to, one, 1)[0]);
  }

  /** The tenant's hours in [from, to) summed into `lists` lists, a row into `listOf` its key's (none: skipped). */
  #hours(
    tenantId: string,
    fromDate: Date,
    toDate: Date,
    listOf: (keyId: string) => number | undefined,
    lists: number,
  ): ApiKeyUsageBucket[][] {
    const from = fromDate.getTime();
    const to = toDate.getTime();
    const hours = Array.from({ length: lists }, () => new Map<number, ApiKeyUsageBucket>());
    for (const row of this.#usage.get(tenantId)?.values() ?? []) {
      const ms = row.start.getTime();
      const list = listOf(row.keyId);
      if (ms < from || ms >= to || list === undefined) continue;
      let hour = hours[list].get(ms);
      if (hour === undefined) hours[list].set(ms, hour = { ...zeroCounts(), start: new Date(ms) });
      addCounts(hour, row);
    }
    return hours.map((byStart) =>
      [...byStart.values()].sort((a, b) => a.start.getTime() - b.start.getTime())
    );
  }

  /** Capability: sets `expiresAt` to `next` only while it is `expected`. */
  lowerExpiry(id: string, expectedExpiresAt: Date, nextExpiresAt: Date): Promise<boolean> {
    const record = this.#byId.get(id);
    if (record?.expiresAt?.getTime() !== expectedExpiresAt.getTime()) {
      return Promise.resolve(false);
    }
    record.expiresAt = readExpiresAt(nextExpiresAt);
    return Promise.resolve(true);
  }
}
