/**
 * The storage contract of the API-key component. Adapters: `InMemoryApiKeyStorage`,
 * `PrismaApiKeyStorage`; check custom adapters with `runApiKeyStorageContract`.
 *
 * @module
 */
import type { ApiKeyRecord, ListApiKeysOptions, RotateApiKeyStorageInput } from "./types.ts";

/**
 * Where API-key records live. Every method returns a promise.
 *
 * Rules every adapter follows:
 * - `findByPrefix` returns the record whose `prefix` matches, revoked, expired or
 *   rotated ones included (the service decides), or `null`.
 * - `listByTenant` excludes revoked records unless `includeRevoked`, ordered by
 *   `createdAt`, then `id`.
 * - `markRevoked` of an unknown id throws `ApiKeyOperationError("api_key_record_not_found")`.
 * - `markRevokedIfActive` (optional) sets `revokedAt` only while it is null, in
 *   one step, and answers whether it did: of concurrent calls exactly one
 *   answers `true`; an unknown id throws `api_key_record_not_found`. With it,
 *   the first of concurrent `revoke` calls wins and the others change nothing
 *   and emit nothing; without it, each may emit `api_key.revoked` and the last
 *   write sets `revokedAt`.
 * - `rotate` is atomic: it inserts `newRecord` and sets the old record's
 *   `rotatedAt`, `expiresAt` (`oldExpiresAt`) and `replacedByKeyId` in one step,
 *   only while the old record is neither rotated nor revoked. Otherwise (for
 *   example a concurrent rotate won the race) it leaves nothing usable (no
 *   new record, or a revoked one) and throws
 *   `ApiKeyOperationError("api_key_not_rotatable")`; an unknown old id throws
 *   `api_key_record_not_found`.
 * - `touchLastUsed` is best effort.
 *
 * @example
 * ```ts
 * import type { ApiKeyStorage } from "./storage.ts";
 * import { InMemoryApiKeyStorage } from "./in_memory_storage.ts";
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
  /** Lists a tenant's records ordered by `createdAt`, then `id`. */
  listByTenant(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecord[]>;
  /** Sets `revokedAt`. */
  markRevoked(id: string, revokedAt: Date): Promise<void>;
  /**
   * Optional: sets `revokedAt` only if the record is not revoked yet, atomically;
   * resolves `true` when this call revoked it, `false` when it was already
   * revoked (see the interface rules).
   */
  markRevokedIfActive?(id: string, revokedAt: Date): Promise<boolean>;
  /** Sets `lastUsedAt` (best effort). */
  touchLastUsed(id: string, lastUsedAt: Date): Promise<void>;
  /** Atomically rotates a key (see the interface rules). */
  rotate(input: RotateApiKeyStorageInput): Promise<void>;
}

/**
 * Names of the methods an `ApiKeyStorage` must have (`markRevokedIfActive` is
 * optional).
 *
 * @example
 * ```ts
 * import { API_KEY_STORAGE_METHODS } from "./storage.ts";
 * API_KEY_STORAGE_METHODS.includes("rotate"); // true
 * ```
 */
export const API_KEY_STORAGE_METHODS: readonly Exclude<
  keyof ApiKeyStorage,
  "markRevokedIfActive"
>[] = Object.freeze([
  "insert",
  "findById",
  "findByPrefix",
  "listByTenant",
  "markRevoked",
  "touchLastUsed",
  "rotate",
]);
