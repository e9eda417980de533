/**
 * The storage contract of the API-key component. Adapters: `InMemoryApiKeyStorage`,
 * `PrismaApiKeyStorage`; check custom adapters with `runApiKeyStorageContract`.
 *
 * @module
 */
import type {
  ApiKeyCredits,
  ApiKeyHashCount,
  ApiKeyHashReplacement,
  ApiKeyRecord,
  ApiKeyRecordInput,
  ApiKeyStatus,
  Environment,
  ListApiKeysOptions,
  RotateApiKeyStorageInput,
} from "../types.ts";
import type {
  ApiKeyUsageBucket,
  ApiKeyUsageKeysReadQuery,
  ApiKeyUsageReadQuery,
  ApiKeyUsageRow,
} from "../metering/usage.ts";
import type {
  AuditAppend,
  AuditChainState,
  AuditReadQuery,
  StoredAuditRecord,
} from "../audit/types.ts";

/**
 * Where API-key records live. The spec's seven operations are required; a
 * storage with only these works with every feature of the service. Records
 * go in and come out as `ApiKeyRecordInput`, so a storage written for 0.1's
 * record shape (no `rotatedAt`, `replacedByKeyId`) fits; absent fields read as `null`. Adapters
 * need not validate records: the service checks each one it reads (a
 * malformed one is an `ApiKeyStorageError`; an invalid `expiresAt` reads as
 * expired).
 *
 * Optional members are capabilities, detected once at construction (the
 * service names the missing ones in one `console.info` line); each says what
 * happens without it and has its own cases in `runApiKeyStorageContract`.
 */
export interface ApiKeyStorage {
  /** Inserts a new record (ids and prefixes are unique). */
  insert(record: ApiKeyRecordInput, audit?: AuditAppend): Promise<void>;
  /** Finds a record by id. */
  findById(id: string): Promise<ApiKeyRecordInput | null>;
  /** Finds a record by public prefix, revoked, expired or rotated ones included. */
  findByPrefix(prefix: string): Promise<ApiKeyRecordInput | null>;
  /**
   * Capability: `findByPrefix`, synchronous and never throwing (in-process
   * storage). It may return the stored object, which callers never mutate (so
   * write only valid values into it). With it, verify skips the storage
   * deadline and the verification cache is on by default.
   */
  peekByPrefix?(prefix: string): Readonly<ApiKeyRecord> | null;
  /**
   * A tenant's records, newest first (`createdAt` descending, then `id`
   * ascending); revoked ones only with `includeRevoked`.
   */
  listByTenant(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecordInput[]>;
  /**
   * Capability: one page of a tenant's records matching `options` (status at
   * `options.now`, environment, `q`), in `options.sort` order strictly after
   * `options.after`, at most `options.limit`; with, for each record of the
   * page that replaced another record of the tenant, that record's id. Reads
   * only. Without it, the admin routes read `listByTenant` (every record of
   * the tenant, revoked ones included) and page it themselves.
   */
  listPageByTenant?(tenantId: string, options: ListApiKeyPageOptions): Promise<ApiKeyRecordPage>;
  /**
   * Capability: the record of `tenantId` whose `replacedByKeyId` is `keyId`
   * (the key a rotation to `keyId` replaced; the newest, `createdAt`
   * descending then `id` ascending, if several), revoked ones included; or
   * `null`. Reads only. Without it, the admin routes' key answers read
   * `listByTenant` (every record of the tenant) to find it.
   */
  findByReplacement?(tenantId: string, keyId: string): Promise<ApiKeyRecordInput | null>;
  /**
   * Capability: in one read, the records of `tenantId` among `ids` (distinct,
   * at most 100), each as `findById` reads it, in any order, revoked ones
   * included; an unknown id or another tenant's is left out. Reads only.
   * Without it, `GET /usage?keys=` of the admin routes reads each key by id.
   */
  findManyByIds?(tenantId: string, ids: readonly string[]): Promise<ApiKeyRecordInput[]>;
  /**
   * Capability (with `storesCredits`): the record of `tenantId` holding the
   * newest copy of the tenant's shared credit pool (`credits.sharedBy`
   * `"tenant"` or `credits.pool`, the greatest pool `updatedAt`; ties: the
   * newest record, `createdAt` descending then `id` ascending), revoked ones
   * included; or `null` when no record spends a pool. Reads only. Without
   * it, each read or change of the pool (`tenantCredits`, `GET /keys`, a key
   * created with `sharedBy: "tenant"`) reads `listByTenant`.
   */
  findTenantPool?(tenantId: string): Promise<ApiKeyRecordInput | null>;
  /**
   * Capability (with `storesCredits`): sets `remaining` and `updatedAt` of the
   * pool copy of every record of `tenantId` spending the tenant's pool
   * (revoked ones too), leaving the rest of each record's `credits` as it
   * is; resolves the prefixes of the records written. Without it, each
   * write-back of the pool reads `listByTenant` and calls `setCredits` per record.
   */
  setTenantPool?(tenantId: string, remaining: number, updatedAt: Date): Promise<string[]>;
  /** Sets `revokedAt`; an unknown id throws `ApiKeyOperationError("api_key_record_not_found")`. */
  markRevoked(id: string, revokedAt: Date): Promise<void>;
  /**
   * Capability: sets `revokedAt` only while it is null, in one step; resolves
   * whether this call did (of concurrent calls exactly one gets `true`); an
   * unknown id throws `api_key_record_not_found`. Without it, concurrent
   * `revoke`s may each emit `api_key.revoked`.
   */
  markRevokedIfActive?(id: string, revokedAt: Date, audit?: AuditAppend): Promise<boolean>;
  /**
   * Capability: compare-and-set of `hash`, `hashScheme` and `pepperVersion`
   * while the stored hash is `expectedHash`; resolves whether it did (`false`
   * for an unknown id). Without it, legacy hashes are not upgraded on use.
   */
  replaceHash?(id: string, expectedHash: string, next: ApiKeyHashReplacement): Promise<boolean>;
  /**
   * Capability: records usable at `now` (not revoked, `expiresAt` null or
   * later) counted per hash scheme (absent: `hmac-sha256`) and pepper version.
   * Without it, `hashReport()` and `retiredPepperVersions` are unavailable.
   */
  countHashes?(now: Date): Promise<ApiKeyHashCount[]>;
  /**
   * Capability: checks, before the service serves (`service.ready()`, the
   * Nest module's init), that the storage can serve as configured: rejects
   * with a `TypeError` naming the fix when it cannot (`PrismaApiKeyStorage`: a
   * session whose time zone is not UTC), with another error when the storage
   * fails (the service then logs one line and starts). Without it, nothing is
   * checked.
   */
  ready?(): Promise<void>;
  /**
   * Capability (with `rotateForTenant`): `markRevokedIfActive` only for a
   * record of `tenantId`, checked in the same step; else rejects with
   * `api_key_record_not_found`. Without them, the service reads the tenant first.
   */
  markRevokedForTenant?(
    tenantId: string,
    id: string,
    revokedAt: Date,
    audit?: AuditAppend,
  ): Promise<boolean>;
  /** Capability (with `markRevokedForTenant`): `rotate`, likewise only for `tenantId`. */
  rotateForTenant?(
    tenantId: string,
    input: RotateApiKeyStorageInput,
    audit?: AuditAppend,
  ): Promise<ApiKeyStorageRotateResult | void>;
  /**
   * Capability: sets the `name` of a record of `tenantId` in one step; an unknown id or
   * another tenant's record rejects with `api_key_record_not_found`. The admin rename
   * route needs it.
   */
  renameForTenant?(tenantId: string, id: string, name: string, audit?: AuditAppend): Promise<void>;
  /**
   * Capability: `renameForTenant` only while the record's name is
   * `expectedName`, in one step (a conditional write): `true` when it renamed,
   * `false` when the name is another (nothing written); an unknown id or
   * another tenant's record rejects with `api_key_record_not_found`. With the
   * audit log, the admin rename route records the name it replaced: two
   * renames of one key at once record a to b, then b to c (without it, both
   * may record the name read before them).
   */
  replaceNameForTenant?(
    tenantId: string,
    id: string,
    expectedName: string,
    name: string,
    audit?: AuditAppend,
  ): Promise<boolean>;
  /** Capability: `true` when each record's `layout` is kept; a key then verifies only in it. */
  readonly storesLayout?: boolean;
  /**
   * Capability: `true` when each record's `rateLimits` is kept as written; without it,
   * `create` and `rotate` refuse `rateLimits`.
   */
  readonly storesRateLimits?: boolean;
  /**
   * Capability (with `storesRateLimits`): `true` when each record's
   * `rateLimitKeyId` is kept; without it, a rotated key counts on its own
   * windows unless it shares a credit balance (`balanceKeyId`).
   */
  readonly storesRateLimitKeyId?: boolean;
  /**
   * Capability (with `setCredits`): `true` when each record's `credits` is kept as
   * written; without it, `create` and `rotate` refuse `credits`.
   */
  readonly storesCredits?: boolean;
  /**
   * Capability (with `storesCredits`): sets the `credits` of record `id` (a
   * balance written back from the limiter's store); an unknown id is ignored.
   */
  setCredits?(id: string, credits: ApiKeyCredits): Promise<void>;
  /**
   * Capability: `true` when `rotate` and `rotateForTenant` given
   * `expectedName` rotate only while the old record's name is that one, in
   * the same step, else answer `"not_rotatable"`. Without it a rename landing
   * while a rotation keeping the name is in flight stays on the old key only.
   */
  readonly rotateChecksName?: boolean;
  /** Sets `lastUsedAt` when later than the stored one (best effort; an unknown id is no error). */
  touchLastUsed(id: string, lastUsedAt: Date): Promise<void>;
  /**
   * In one step, inserts `newRecord` and sets the old record's `rotatedAt`,
   * `expiresAt` (`oldExpiresAt`) and `replacedByKeyId`, only while it is
   * neither rotated nor revoked, and answers `"rotated"`; else leaves nothing
   * usable and answers `"not_rotatable"` (unknown id: rejects with
   * `api_key_record_not_found`). A storage written for the spec may answer
   * nothing on success and reject with `api_key_not_rotatable`; the service
   * then reads the old record back and refuses (revoking `newRecord`) unless
   * its `replacedByKeyId` is `newRecord.id`.
   */
  rotate(
    input: RotateApiKeyStorageInput,
    audit?: AuditAppend,
  ): Promise<ApiKeyStorageRotateResult | void>;
  /**
   * Capability (with `claimExpiryNotice`; without them `notifyExpiring`
   * throws): unrevoked records with `expiresAt` in (`from`, `until`], by
   * `expiresAt`, then `id`, strictly after `after`, at most `limit`.
   */
  listExpiring?(options: ListExpiringApiKeysOptions): Promise<ApiKeyRecord[]>;
  /**
   * Capability (with `listExpiring`): claims the notice of `thresholdMs` for
   * key `id` in one step: succeeds only when the key holds no claim or a
   * larger threshold, then holds `thresholdMs` (threshold 0: end of rotation).
   * The id need not be stored. The event follows a won claim, so a claim
   * committed past the caller's deadline loses that notice (at most once).
   */
  claimExpiryNotice?(id: string, thresholdMs: number, at: Date): Promise<boolean>;
  /**
   * Capability (with `findRotationWait` and `lowerExpiry`; without them a
   * `graceStarts: "first-use"` rotation throws): stores a rotation's wait, one
   * per `newKeyId`, before rotating (it may outlive a failed rotation).
   */
  saveRotationWait?(wait: ApiKeyRotationWait): Promise<void>;
  /** Capability (see `saveRotationWait`): the wait saved for `newKeyId`, or `null`. */
  findRotationWait?(newKeyId: string): Promise<ApiKeyRotationWait | null>;
  /**
   * Capability (see `saveRotationWait`): compare-and-set of `expiresAt` from
   * `expectedExpiresAt`; answers whether it did (`false` for an unknown id).
   */
  lowerExpiry?(id: string, expectedExpiresAt: Date, nextExpiresAt: Date): Promise<boolean>;
  /**
   * Capability (with `readUsage`; without them the `usage` option and
   * `ApiKeysService.usage` throw a `TypeError`): adds each row's counts to its
   * stored (key, hour) row and raises the key's `lastUsedAt` to the row's, in
   * one step. At most 1,000 rows of distinct (key, hour). `batchId` names the
   * write (the same for each retry of it); with `usageBatches` a batch already
   * recorded changes nothing.
   */
  recordUsage?(rows: readonly ApiKeyUsageRow[], batchId?: string): Promise<void>;
  /**
   * Capability (with `recordUsage`): `true` when `recordUsage` records each
   * `batchId` once, in the same step as its rows: a write that committed after
   * the storage deadline and is retried (concurrently with it too) is counted
   * once. Without it such a retry is counted twice.
   */
  readonly usageBatches?: boolean;
  /**
   * Capability (see `recordUsage`): the tenant's counts (of `keyId` only, when
   * given) summed per hour in [`from`, `to`), ascending.
   */
  readUsage?(query: ApiKeyUsageReadQuery): Promise<ApiKeyUsageBucket[]>;
  /**
   * Capability (with `readUsage`): in one read, each of `keyIds`' counts (of
   * tenant `tenantId`) per hour in [`from`, `to`), ascending, a list per key
   * in the order of `keyIds`. Without it `GET /usage?keys=` reads each key apart.
   */
  readUsageOfKeys?(query: ApiKeyUsageKeysReadQuery): Promise<ApiKeyUsageBucket[][]>;
  /**
   * Capability (with `readAudit`; without them the `audit` option throws at
   * construction): appends a record to its tenant's hash chain (see
   * `api_keys/audit/chain.ts`: the next `seq` without gaps, the head's hash as
   * `prevHash`, `auditHash` of the content) and resolves it. With it,
   * `insert`, `rotate`, `rotateForTenant`, `markRevokedIfActive`,
   * `markRevokedForTenant`, `renameForTenant` and `replaceNameForTenant`
   * given an `audit` append it in the same step (transaction) as their
   * change, and only when the change happened (a revoke or a name replacement
   * answering `false`, or a rotation `"not_rotatable"`, appends nothing).
   */
  appendAudit?(audit: AuditAppend): Promise<StoredAuditRecord>;
  /** Capability (see `appendAudit`): records of one tenant in `seq` order, and its chain's state. */
  readAudit?(query: AuditReadQuery): Promise<AuditReadAnswer>;
  /**
   * Capability (with `appendAudit`): drops the tenant's records written before
   * `before`, always keeping the last one, and keeps the first remaining
   * record's `seq` and `prevHash` as the chain's anchor; resolves how many
   * were dropped. Without it, `pruneAuditLog` throws.
   */
  pruneAudit?(tenantId: string, before: Date): Promise<number>;
}

/** What `ApiKeyStorage.readAudit` answers. */
export interface AuditReadAnswer {
  /** The records, at most `limit`, in the query's order. */
  records: StoredAuditRecord[];
  /**
   * The chain's head and anchor, read in the same snapshot as `records` (one
   * statement or transaction: an append or a prune committed meanwhile is in
   * both or in neither; the built-in storages do). Read apart, a prune or an
   * append landing between the two can make a verify, an export or a
   * checkpoint fail with a problem that is not there.
   */
  state: AuditChainState;
}

/**
 * `ListApiKeyPageOptions.status`: the status at `now` (see `ApiKeyStatus`);
 * `unrevoked`: all but revoked; `all`: every record.
 */
export type ApiKeyPageStatus = ApiKeyStatus | "unrevoked" | "all";

/**
 * `ListApiKeyPageOptions.sort`, each order ending with `id` ascending:
 * `createdAt` descending or ascending, `name` ascending, `lastUsedAt`
 * descending with never-used records last.
 */
export type ApiKeyPageSort = "created_desc" | "created_asc" | "name_asc" | "last_used_desc";

/** What `ApiKeyStorage.listPageByTenant` reads. */
export interface ListApiKeyPageOptions {
  /** Most records answered (1 to 1,000). */
  limit: number;
  /**
   * The last record of the previous page: its `id` and its value of the sort
   * field (`createdAt`, `name` or `lastUsedAt`), or `null` for the first page.
   */
  after: { id: string; value: Date | string | null } | null;
  /** A substring of the name (ASCII letters in either case; other letters fold as the storage folds them) or the start of the prefix; `null`: any. */
  q: string | null;
  /** Which records by status at `now`. */
  status: ApiKeyPageStatus;
  /** Only this environment; `null`: both. */
  environment: Environment | null;
  /** The order. */
  sort: ApiKeyPageSort;
  /** The instant the status is read at. */
  now: Date;
}

/** What `ApiKeyStorage.listPageByTenant` answers. */
export interface ApiKeyRecordPage {
  /** The page's records, in order. */
  records: ApiKeyRecordInput[];
  /**
   * For each record of the page that replaced another (a rotation), the id of
   * the record it replaced (whose `replacedByKeyId` it is), by the page
   * record's id.
   */
  predecessors: Record<string, string>;
}

/** What `ApiKeyStorage.rotate` answers (seed 0.4). */
export type ApiKeyStorageRotateResult = "rotated" | "not_rotatable";

/** What `ApiKeyStorage.listExpiring` reads: a window of expiry times and a page of it. */
export interface ListExpiringApiKeysOptions {
  /** Records expiring after this instant (excluded)… */
  from: Date;
  /** …and at most at this one (included). */
  until: Date;
  /** The last record of the previous page (its `expiresAt` and `id`), or `null` for the first. */
  after: { expiresAt: Date; id: string } | null;
  /** Most records answered. */
  limit: number;
}

/** A rotation waiting for its new key's first use (`graceStarts: "first-use"`). */
export interface ApiKeyRotationWait {
  /** Id of the new key, whose first use starts the grace period. */
  newKeyId: string;
  /** Id of the rotated (old) key. */
  oldKeyId: string;
  /** Grace period of the rotation, in ms. */
  gracePeriodMs: number;
  /** Old key's `expiresAt` as rotated: min(rotation + `maxWaitMs` + `gracePeriodMs`, prior expiry). */
  waitEndsAt: Date;
}

/** Names of the optional members (capabilities) of `ApiKeyStorage`. */
export type ApiKeyStorageCapability =
  | "peekByPrefix"
  | "markRevokedIfActive"
  | "replaceHash"
  | "countHashes"
  | "ready"
  | "storesLayout"
  | "storesRateLimits"
  | "storesRateLimitKeyId"
  | "storesCredits"
  | "setCredits"
  | "rotateChecksName"
  | "listExpiring"
  | "claimExpiryNotice"
  | "saveRotationWait"
  | "findRotationWait"
  | "lowerExpiry"
  | "markRevokedForTenant"
  | "rotateForTenant"
  | "renameForTenant"
  | "replaceNameForTenant"
  | "listPageByTenant"
  | "findByReplacement"
  | "findManyByIds"
  | "findTenantPool"
  | "setTenantPool"
  | "recordUsage"
  | "readUsage"
  | "readUsageOfKeys"
  | "usageBatches"
  | "appendAudit"
  | "readAudit"
  | "pruneAudit";

/** Names of the required methods of `ApiKeyStorage` (the spec's seven operations). */
export const API_KEY_STORAGE_METHODS: readonly Exclude<
  keyof ApiKeyStorage,
  ApiKeyStorageCapability
>[] = Object.freeze([
  "insert",
  "findById",
  "findByPrefix",
  "listByTenant",
  "markRevoked",
  "touchLastUsed",
  "rotate",
]);
