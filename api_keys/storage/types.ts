/**
 * The storage contract of the API-key component. Adapters: `InMemoryApiKeyStorage`,
 * `PrismaApiKeyStorage`; check custom adapters with `runApiKeyStorageContract`.
 *
 * @module
 */
import type {
  ApiKeyHashCount,
  ApiKeyHashReplacement,
  ApiKeyRecord,
  ListApiKeysOptions,
  RotateApiKeyStorageInput,
} from "../types.ts";
import type { ApiKeyUsageBucket, ApiKeyUsageReadQuery, ApiKeyUsageRow } from "../usage.ts";

/**
 * Where API-key records live. The seven operations of the spec (`insert`,
 * `findById`, `findByPrefix`, `listByTenant`, `markRevoked`, `touchLastUsed`,
 * `rotate`) are required and return promises; a storage with only these works
 * with every feature of the service.
 *
 * Rules every adapter follows:
 * - `findByPrefix` returns the record whose `prefix` matches, revoked, expired or
 *   rotated ones included (the service decides), or `null`.
 * - `listByTenant` excludes revoked records unless `includeRevoked`, ordered by
 *   `createdAt`, then `id`.
 * - `markRevoked` of an unknown id throws `ApiKeyOperationError("api_key_record_not_found")`.
 * - `rotate` is atomic: it inserts `newRecord` and sets the old record's
 *   `rotatedAt`, `expiresAt` (`oldExpiresAt`) and `replacedByKeyId` in one step,
 *   only while the old record is neither rotated nor revoked. Otherwise (for
 *   example a concurrent rotate won the race) it leaves nothing usable (no
 *   new record, or a revoked one) and throws
 *   `ApiKeyOperationError("api_key_not_rotatable")`; an unknown old id throws
 *   `api_key_record_not_found`.
 * - `touchLastUsed` is best effort.
 *
 * Records need not be validated by the adapter: the service checks every
 * record it reads (a malformed one is an `ApiKeyStorageError`) and reads an
 * `expiresAt` that is not a valid date as expired.
 *
 * **Capabilities.** Optional methods give the service more than the spec's
 * operations. Each is detected once, when the service is built; a storage
 * without one keeps the behaviour described below, and the service says so in
 * one console line (`console.info`) at construction naming what is missing.
 * Each capability has its own cases in `runApiKeyStorageContract`.
 * - `peekByPrefix` (in-process storage): a synchronous lookup. With it, a
 *   verify reads the record without a deadline timer, a copy or an await, and
 *   the verification cache is on by default (no other process can change the
 *   records behind it). Without it, verify awaits `findByPrefix` under the
 *   storage deadline and the cache is off unless the `cache` option turns it on.
 * - `markRevokedIfActive`: sets `revokedAt` only while it is null, in one step,
 *   and answers whether it did; of concurrent calls exactly one answers
 *   `true`; an unknown id throws `api_key_record_not_found`. With it, the first
 *   of concurrent `revoke` calls wins and the others change nothing and emit
 *   nothing; without it, each may emit `api_key.revoked` and the last write
 *   sets `revokedAt`.
 * - `replaceHash`: compare-and-set of a record's hash: writes `hash`,
 *   `hashScheme` and `pepperVersion` only while the stored hash is still the
 *   expected one, in one step, and answers whether it did (`false` for
 *   another hash or an unknown id); of concurrent calls with one expected
 *   hash exactly one answers `true`. With it, a record on a legacy hash
 *   scheme or an old pepper version is re-hashed with the current ones after
 *   its first successful verify (upgrade on use); without it, such records
 *   stay as they are.
 * - `countHashes`: counts the records usable at an instant (not revoked,
 *   `expiresAt` null or later) per hash scheme and pepper version (a missing
 *   `hashScheme` counts as `hmac-sha256`). With it, `hashReport()` and the
 *   `retiredPepperVersions` check at start work; without it, they are
 *   unavailable (`retiredPepperVersions` is refused at construction).
 * - `listExpiring` with `claimExpiryNotice` (expiry notices): the scan and
 *   the compare-and-set claims of `ApiKeysService.notifyExpiring`. Without
 *   them, `notifyExpiring` throws.
 * - `storesLayout` (a property, `true`): the storage keeps a record's
 *   `layout` as written (`replaceHash` leaves it). With it, a key verifies
 *   only in its record's layout (absent: the current one); without it, in any
 *   layout the service accepts.
 * - `saveRotationWait`, `findRotationWait` and `lowerExpiry` (rotations that
 *   wait): a rotation with `graceStarts: "first-use"` saves its wait before
 *   rotating; the new key's first successful verify finds it and lowers the
 *   old key's `expiresAt` with a compare-and-set. Without them, such a
 *   rotation throws before writing anything.
 * - `markRevokedForTenant` and `rotateForTenant` (tenant-bound operations):
 *   `markRevokedIfActive` and `rotate` that act only on a record of the given
 *   tenant, checked in the same step as the write; an unknown id and another
 *   tenant's record both reject with `api_key_record_not_found` and change
 *   nothing. Without them, `revokeForTenant` and `rotateForTenant` read the
 *   record, check its tenant (which no operation changes), then act with
 *   `markRevokedIfActive` (or `markRevoked`) and `rotate`.
 * - `recordUsage` and `readUsage` (usage per key and hour): with them, the
 *   service option `usage` and `ApiKeysService.usage` work; without them,
 *   both throw a `TypeError`.
 *
 * @example
 * ```ts
 * import { InMemoryApiKeyStorage } from "./in_memory.ts";
 * const storage: ApiKeyStorage = new InMemoryApiKeyStorage();
 * ```
 */
export interface ApiKeyStorage {
  /** Inserts a new record (ids and prefixes are unique). */
  insert(record: ApiKeyRecord): Promise<void>;
  /** Finds a record by id. */
  findById(id: string): Promise<ApiKeyRecord | null>;
  /** Finds a record by public prefix. */
  findByPrefix(prefix: string): Promise<ApiKeyRecord | null>;
  /**
   * Capability (optional): the record of `prefix` or `null`, synchronously,
   * never throwing; answers what `findByPrefix` would (see the interface
   * rules). It may be the stored object itself, which callers must not mutate;
   * the service checks each object it gets once, so such a storage replaces
   * the fields of a stored record only with valid values.
   */
  peekByPrefix?(prefix: string): Readonly<ApiKeyRecord> | null;
  /** Lists a tenant's records ordered by `createdAt`, then `id`. */
  listByTenant(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecord[]>;
  /** Sets `revokedAt`. */
  markRevoked(id: string, revokedAt: Date): Promise<void>;
  /**
   * Capability (optional): sets `revokedAt` only if the record is not revoked
   * yet, atomically; resolves `true` when this call revoked it, `false` when it
   * was already revoked (see the interface rules).
   */
  markRevokedIfActive?(id: string, revokedAt: Date): Promise<boolean>;
  /**
   * Capability (optional): sets `hash`, `hashScheme` and `pepperVersion` of
   * record `id` to `next` only if its stored hash is still `expectedHash`,
   * atomically; resolves whether it did (see the interface rules). A storage
   * with `peekByPrefix` writes only valid values.
   */
  replaceHash?(id: string, expectedHash: string, next: ApiKeyHashReplacement): Promise<boolean>;
  /**
   * Capability (optional): the records usable at `now` counted per hash
   * scheme and pepper version, one row per pair with records (see the
   * interface rules).
   */
  countHashes?(now: Date): Promise<ApiKeyHashCount[]>;
  /**
   * Capability (optional, with `rotateForTenant`): `markRevokedIfActive` only
   * for a record of `tenantId`, in one step; an unknown id or another
   * tenant's record rejects with `api_key_record_not_found`.
   */
  markRevokedForTenant?(tenantId: string, id: string, revokedAt: Date): Promise<boolean>;
  /**
   * Capability (optional, with `markRevokedForTenant`): `rotate` only when
   * the old record belongs to `tenantId`, checked in the same step; an
   * unknown id or another tenant's record rejects with
   * `api_key_record_not_found` and leaves nothing usable.
   */
  rotateForTenant?(tenantId: string, input: RotateApiKeyStorageInput): Promise<void>;
  /** Capability (optional): `true` when the storage keeps each record's `layout` (see the interface rules). */
  readonly storesLayout?: boolean;
  /** Sets `lastUsedAt` (best effort). */
  touchLastUsed(id: string, lastUsedAt: Date): Promise<void>;
  /** Atomically rotates a key (see the interface rules). */
  rotate(input: RotateApiKeyStorageInput): Promise<void>;
  /**
   * Capability (optional, with `claimExpiryNotice`): the records that are
   * not revoked and whose `expiresAt` is after `from` and at most `until`,
   * ordered by `expiresAt`, then `id`, starting strictly after `after` in
   * that order, at most `limit` of them.
   */
  listExpiring?(options: ListExpiringApiKeysOptions): Promise<ApiKeyRecord[]>;
  /**
   * Capability (optional, with `listExpiring`): claims the notice of
   * `thresholdMs` for the key `id` at `at`, compare-and-set, in one step.
   * Each key holds the smallest threshold claimed so far: the claim succeeds
   * (`true`) only when the key holds none or a larger one, and then holds
   * `thresholdMs`. So of concurrent claims of one key and threshold exactly
   * one wins, and no larger threshold is claimed after a smaller one.
   * Threshold 0 is the end of the key's rotation. The id need not be stored.
   */
  claimExpiryNotice?(id: string, thresholdMs: number, at: Date): Promise<boolean>;
  /**
   * Capability (optional, with `findRotationWait` and `lowerExpiry`): stores
   * the wait of a rotation whose grace starts at the new key's first use
   * (one per `newKeyId`; saved before the rotation, so it may outlive a
   * rotation that failed).
   */
  saveRotationWait?(wait: ApiKeyRotationWait): Promise<void>;
  /** Capability (optional, see `saveRotationWait`): the wait saved for `newKeyId`, or `null`. */
  findRotationWait?(newKeyId: string): Promise<ApiKeyRotationWait | null>;
  /**
   * Capability (optional, see `saveRotationWait`): sets the `expiresAt` of
   * `id` to `nextExpiresAt` only while it is `expectedExpiresAt`, in one
   * step; answers whether it did (`false` for an unknown id).
   */
  lowerExpiry?(id: string, expectedExpiresAt: Date, nextExpiresAt: Date): Promise<boolean>;
  /**
   * Capability (optional, with `readUsage`): adds each row's counts to the
   * stored ones of its (key, hour), creating it when absent, and sets the
   * key's `lastUsedAt` to the row's when that is later (an unknown key's
   * `lastUsedAt` is ignored), all in one step. Rows of one call have distinct
   * (key, hour) pairs; at most 1,000.
   */
  recordUsage?(rows: readonly ApiKeyUsageRow[]): Promise<void>;
  /**
   * Capability (optional, with `recordUsage`): the stored counts of the
   * query's tenant (of `keyId` only, when given) per hour from `from`
   * (included) to `to` (excluded), summed over the keys, one bucket per hour
   * with counts, ascending.
   */
  readUsage?(query: ApiKeyUsageReadQuery): Promise<ApiKeyUsageBucket[]>;
}

/**
 * What `ApiKeyStorage.listExpiring` reads: a window of expiry times and a
 * page of it.
 *
 * @example
 * ```ts
 * const now = Date.now();
 * const firstPage: ListExpiringApiKeysOptions = {
 *   from: new Date(now), until: new Date(now + 7 * 864e5), after: null, limit: 500,
 * };
 * ```
 */
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

/**
 * A rotation waiting for its new key's first use (`graceStarts: "first-use"`).
 *
 * @example
 * ```ts
 * const wait: ApiKeyRotationWait = {
 *   newKeyId: "k2", oldKeyId: "k1", gracePeriodMs: 3_600_000,
 *   waitEndsAt: new Date("2030-01-08T01:00:00.000Z"),
 * };
 * ```
 */
export interface ApiKeyRotationWait {
  /** Id of the new key, whose first use starts the grace period. */
  newKeyId: string;
  /** Id of the rotated (old) key. */
  oldKeyId: string;
  /** Grace period of the rotation, in ms. */
  gracePeriodMs: number;
  /**
   * The upper bound: the old key's `expiresAt` as the rotation set it,
   * min(rotation + `maxWaitMs` + `gracePeriodMs`, its expiry before).
   */
  waitEndsAt: Date;
}

/**
 * Names of the optional members (capabilities) of `ApiKeyStorage`.
 *
 * @example
 * ```ts
 * const capability: ApiKeyStorageCapability = "claimExpiryNotice";
 * ```
 */
export type ApiKeyStorageCapability =
  | "peekByPrefix"
  | "markRevokedIfActive"
  | "replaceHash"
  | "countHashes"
  | "storesLayout"
  | "listExpiring"
  | "claimExpiryNotice"
  | "saveRotationWait"
  | "findRotationWait"
  | "lowerExpiry"
  | "markRevokedForTenant"
  | "rotateForTenant"
  | "recordUsage"
  | "readUsage";

/**
 * Names of the methods an `ApiKeyStorage` must have: the spec's seven
 * operations (the capabilities, `ApiKeyStorageCapability`, are optional).
 *
 * @example
 * ```ts
 * API_KEY_STORAGE_METHODS.includes("rotate"); // true
 * ```
 */
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
