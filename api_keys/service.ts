/**
 * `ApiKeysService`: create, verify, authorize, rotate, revoke and list API
 * keys. Framework-neutral; the Nest module is a thin provider around it.
 *
 * @module
 */
import { ExpiryJob } from "./_expiry.ts";
import type { ApiKeyHeaderReader } from "./extract_api_key.ts";
import { importKeys } from "./_import.ts";
import { checkReady, hashReport } from "./_legacy.ts";
import { ManageFlow } from "./_manage.ts";
import type { ApiKeysServiceOptions } from "./service_options.ts";
import { compileSettings, type Settings } from "./_settings.ts";
import type {
  ApiKeyContext,
  ApiKeyHashReport,
  ApiKeyRecord,
  ApiKeySummary,
  AuthorizeOptions,
  CreateApiKeyInput,
  CreateApiKeyResult,
  ImportApiKeyRecord,
  ImportApiKeysResult,
  ListApiKeysOptions,
  NotifyExpiringOptions,
  NotifyExpiringResult,
  RotateApiKeyInput,
  RotateApiKeyResult,
} from "./types.ts";
import { VerifyFlow } from "./_verify.ts";
import { attachServiceHooks } from "./_service_hooks.ts";
import { readUsage } from "./_usage.ts";
import type { ApiKeyUsageBucket, ApiKeyUsageQuery } from "./usage.ts";

/**
 * The API-key service. Contexts it returns are frozen.
 *
 * @example
 * ```ts
 * import { ApiKeysService } from "./service.ts";
 * import { InMemoryApiKeyStorage } from "./storage/in_memory.ts";
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const { key } = await service.create({
 *   tenantId: "t1", name: "ci", scopes: [{ resource: "orders", level: "read" }],
 * });
 * const context = await service.authorize(key, { requiredScope: { resource: "orders", level: "read" } });
 * context.tenantId; // "t1"
 * ```
 */
export class ApiKeysService {
  readonly #settings: Settings;
  readonly #verify: VerifyFlow;
  readonly #manage: ManageFlow;
  readonly #expiry: ExpiryJob;

  /**
   * Validates `options` (throws a `TypeError` naming the option) and compiles
   * them once for both flows. A storage without some optional capability
   * (see `ApiKeyStorage`) is announced with one `console.info` line naming it.
   */
  constructor(options: ApiKeysServiceOptions) {
    const settings = compileSettings(options);
    if (settings.storage.notice !== undefined) console.info(settings.storage.notice);
    this.#settings = settings;
    this.#verify = new VerifyFlow(settings);
    this.#manage = new ManageFlow(settings);
    attachServiceHooks(this, {
      emitEvent: settings.emitEvent,
      layouts: settings.layouts,
      verifyReported: (rawKey) => this.#verify.verifyReported(rawKey),
      revokeReported: (keyId, onRevoked) => this.#manage.revoke(keyId, onRevoked),
    });
    this.#expiry = new ExpiryJob(settings);
  }

  /** Namespace of the keys this service issues and accepts. */
  get namespace(): string {
    return this.#settings.namespace;
  }

  /**
   * Resolves when the service may serve: with `retiredPepperVersions`, once
   * the storage confirms that no usable record (not revoked, not expired) is
   * left on a retired pepper version or on the `sha256` scheme; otherwise at
   * once. Rejects with an `Error` naming the counts while some remain, and
   * with `ApiKeyStorageError` when the storage is down. Await it before
   * serving (the Nest module does, in `onModuleInit`).
   */
  ready(): Promise<void> {
    return checkReady(this.#settings);
  }

  /**
   * Counts the usable records (not revoked, not expired) per hash scheme and
   * pepper version, and how many are not yet on the current ones: when
   * `toUpgrade` is 0, legacy schemes and old pepper versions can be retired.
   * Needs the storage capability `countHashes` (rejects with
   * `ApiKeyStorageError` without it or when the storage fails).
   */
  hashReport(): Promise<ApiKeyHashReport> {
    return hashReport(this.#settings);
  }

  /**
   * Imports the records of another system (an array, any iterable, or an
   * async iterable such as a stream of JSON lines), one at a time. Each is
   * validated (a prefix of an accepted key layout, a known hash scheme of the
   * right form with a configured pepper version, or 0 for `sha256`; tenant,
   * name, scopes, environment, dates); a legacy scheme needs
   * `legacyKeyLayouts`. It is keyed by prefix, so a re-run changes nothing: a
   * free prefix is inserted (hash stored as given, emitting
   * `api_key.created`), a prefix holding the same hash, or the same id and
   * tenant since upgraded on use, is skipped (no event), another key there is
   * a conflict. Invalid records and storage failures are reported per record
   * without stopping the others. The TTL policy does not apply.
   */
  importKeys(
    records: Iterable<ImportApiKeyRecord> | AsyncIterable<ImportApiKeyRecord>,
  ): Promise<ImportApiKeysResult> {
    return importKeys(this.#settings, records);
  }

  /**
   * Creates a key. Validates the input first (`ApiKeyValidationError` naming the
   * field; nothing is written), applies the TTL policy, emits `api_key.created`.
   * A prefix already taken draws a new key; after 3 draws it emits
   * `api_key.operation` and throws `ApiKeyPrefixCollisionError` (so does `rotate`).
   */
  create(input: CreateApiKeyInput): Promise<CreateApiKeyResult> {
    return this.#manage.create(input);
  }

  /**
   * Verifies a raw key: parse (malformed) → find by prefix (unknown: invalid
   * after a dummy hash) → secret (invalid) → revoked → expired. Emits one
   * metric; failures call `onAuthFailed` and emit `api_key.auth_failed`;
   * storage failures reject with `ApiKeyStorageError` (outcome `error`).
   */
  verify(rawKey: string): Promise<ApiKeyContext> {
    return this.#verify.verify(rawKey);
  }

  /**
   * Verifies `rawKey` and checks, in order, the IP allowlist, the environment
   * and the scope. A missing key (`undefined` or empty) is `api_key_missing`.
   * A `requiredScope` level other than `"read"`/`"write"` rejects with a
   * `TypeError` before anything else.
   * `api_key.used` is emitted only when every check passes.
   */
  authorize(
    rawKey: string | undefined,
    options: AuthorizeOptions = {},
  ): Promise<ApiKeyContext> {
    return this.#verify.authorize(rawKey, options);
  }

  /**
   * Authorizes a request from its headers, the one call framework bindings
   * make: applies the header rules of `extractApiKey` (`X-API-Key` or a
   * key-shaped `Authorization: Bearer`; two different keys, differing values
   * or an over-long `X-API-Key` are `api_key_malformed`, the `reason` naming
   * the rule), then does what `authorize` does with `options`. Resolves the
   * frozen context or rejects with an `ApiKeyError` carrying the precise code
   * (or an `ApiKeyStorageError`). A header failure is reported like a key that
   * does not parse (metric outcome `malformed`, `onAuthFailed(null, code)`,
   * `api_key.auth_failed`).
   */
  authorizeRequest(
    readHeader: ApiKeyHeaderReader,
    options: AuthorizeOptions = {},
  ): Promise<ApiKeyContext> {
    return this.#verify.authorizeRequest(readHeader, options);
  }

  /**
   * Rotates a key: issues a new key inheriting tenant, environment, scopes,
   * allowlist and name (unless overridden); the old key works until
   * `graceExpiresAt` (earlier of now + `gracePeriodMs`, default 24 h, and its own
   * expiry). Unknown id → `api_key_record_not_found`; revoked, expired or
   * already rotated → `api_key_not_rotatable`. Emits `api_key.rotated`.
   *
   * With `graceStarts: "first-use"` (and `maxWaitMs`, required there, else
   * `api_key_invalid_input`), the grace starts at the new key's first
   * successful verify: `graceExpiresAt` and the old key's `expiresAt` are the
   * upper bound min(now + `maxWaitMs` + `gracePeriodMs`, its own expiry); that
   * first verify lowers the old key's `expiresAt` to min(that bound, first use
   * + `gracePeriodMs`) with a compare-and-set, off the request path. Needs the
   * storage's rotation-wait capability (see `ApiKeyStorage`), else throws a
   * `TypeError` before writing anything.
   */
  rotate(id: string, input?: RotateApiKeyInput): Promise<RotateApiKeyResult> {
    return this.#manage.rotate(id, input);
  }

  /**
   * Revokes a key at once (ending any grace period). Unknown id →
   * `api_key_record_not_found`; an already revoked key is a no-op without a
   * second event. Emits `api_key.revoked`.
   */
  revoke(id: string): Promise<void> {
    return this.#manage.revoke(id);
  }

  /**
   * Lists a tenant's keys (active, rotated and expired; revoked ones only with
   * `includeRevoked`), ordered by `createdAt`, then `id`.
   */
  list(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecord[]> {
    return this.#manage.list(tenantId, options);
  }

  /**
   * `rotate` on behalf of `tenantId`: an unknown id and another tenant's key
   * both reject with `api_key_record_not_found` and change nothing. The
   * storage checks the tenant in the same step as the write when it has the
   * tenant-bound capability (see `ApiKeyStorage`); without it, the tenant is
   * checked on the read before the rotation.
   */
  rotateForTenant(
    tenantId: string,
    id: string,
    input?: RotateApiKeyInput,
  ): Promise<RotateApiKeyResult> {
    return this.#manage.rotateForTenant(tenantId, id, input);
  }

  /**
   * `revoke` on behalf of `tenantId`: an unknown id and another tenant's key
   * both reject with `api_key_record_not_found` and change nothing (the
   * tenant is checked as `rotateForTenant` checks it).
   */
  revokeForTenant(tenantId: string, id: string): Promise<void> {
    return this.#manage.revokeForTenant(tenantId, id);
  }

  /**
   * Lists a tenant's keys as `list` does, each as an `ApiKeySummary`: no
   * `hash`, `hashScheme` or `pepperVersion`, and its `status` at the clock's
   * now (`active`, `rotating` in a rotation's grace, `expired`, `revoked`).
   */
  listSummaries(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeySummary[]> {
    return this.#manage.listSummaries(tenantId, options);
  }

  /**
   * One pass of the expiry notices, for any scheduler (the Nest module runs
   * it with its `expiryNotices` option). Emits `api_key.expiring` for each
   * usable key (not revoked, not expired) whose `expiresAt` is within a
   * threshold of `now` (default: the clock), once per key and threshold even
   * with several instances running at the same moment: a key first seen
   * inside several thresholds gets only the smallest, a larger threshold
   * never follows a smaller one (a clock moved back re-sends nothing), and
   * an expired or revoked key gets none. Also emits
   * `api_key.rotation_completed` once per rotation whose old key's grace
   * ended (not revoked), when the run comes within the largest threshold of
   * that end. Bad options reject with `api_key_invalid_input`; a storage
   * without the capabilities `listExpiring` and `claimExpiryNotice` rejects
   * with a `TypeError` saying so.
   */
  notifyExpiring(options: NotifyExpiringOptions): Promise<NotifyExpiringResult> {
    return this.#expiry.run(options);
  }

  /**
   * The stored usage of `tenantId`'s keys (of `keyId` only, when given;
   * another tenant's key reads as none) from the bucket of `from` to `to`,
   * per hour (span at most 31 days) or UTC day (at most 366): the buckets
   * with counts, ascending, summed over the keys. Counts still in memory
   * (up to one `flushIntervalMs` per instance) are not included. A bad
   * query rejects with `api_key_invalid_input`; a storage without
   * `readUsage` with a `TypeError`.
   */
  usage(tenantId: string, query: ApiKeyUsageQuery): Promise<ApiKeyUsageBucket[]> {
    return readUsage(this.#settings.storage.usage, tenantId, query);
  }

  /**
   * Flushes the usage counts held in memory and stops the flush timer (the
   * Nest module calls it on shutdown); resolves at once without the `usage`
   * option. Rejects with `ApiKeyStorageError` when a write fails (the counts
   * stay held for another `close()`).
   */
  close(): Promise<void> {
    return this.#settings.usage?.close() ?? Promise.resolve();
  }
}
