/**
 * `ApiKeysService`: create, verify, authorize, rotate, revoke and list API
 * keys. Framework-neutral; the Nest module is a thin provider around it.
 *
 * @module
 */
import { authorizationFailure, type AuthorizeOptions } from "./authorization.ts";
import { ApiKeyError } from "./errors.ts";
import { Sha256Hasher } from "./hasher.ts";
import { InMemoryApiKeyStorage } from "./in_memory_storage.ts";
import { DEFAULT_API_KEY_NAMESPACE } from "./key_format.ts";
import { ApiKeyManager } from "./key_management.ts";
import { LastUsedTracker } from "./last_used.ts";
import { assertScopeLevel } from "./scopes.ts";
import { type ApiKeysServiceOptions, validateApiKeysServiceOptions } from "./service_options.ts";
import { createDispatcher } from "./sinks.ts";
import { syncLookupOf } from "./storage_calls.ts";
import { compileTtlPolicy } from "./ttl_policy.ts";
import type {
  ApiKeyContext,
  ApiKeyRecord,
  CreateApiKeyInput,
  CreateApiKeyResult,
  ListApiKeysOptions,
  RotateApiKeyInput,
  RotateApiKeyResult,
} from "./types.ts";
import { uuidV7 } from "./uuid_v7.ts";
import { VerificationCache } from "./verification_cache.ts";
import { VerificationReporter } from "./verification_reporter.ts";
import { ApiKeyVerifier } from "./verifier.ts";

export type { AuthorizeOptions } from "./authorization.ts";

const DEFAULT_DEBOUNCE_MS = 60_000;
const DEFAULT_STORAGE_TIMEOUT_MS = 5_000;
const DEFAULT_CACHE_TTL_MS = 30_000;
const DEFAULT_CACHE_MAX_ENTRIES = 10_000;

/**
 * The API-key service. Contexts it returns are frozen.
 *
 * @example
 * ```ts
 * import { ApiKeysService } from "./service.ts";
 * import { InMemoryApiKeyStorage } from "./in_memory_storage.ts";
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
  readonly #namespace: string;
  readonly #emitUsage: boolean;
  readonly #reporter: VerificationReporter;
  readonly #verifier: ApiKeyVerifier;
  readonly #manager: ApiKeyManager;

  /** Validates `options` (throws a `TypeError` naming the option) and builds the service. */
  constructor(options: ApiKeysServiceOptions) {
    validateApiKeysServiceOptions(options);
    const storage = options.storage;
    const hasher = new Sha256Hasher({
      peppers: options.peppers,
      currentVersion: options.currentPepperVersion,
    });
    const namespace = options.namespace ?? DEFAULT_API_KEY_NAMESPACE;
    const emitEvent = createDispatcher(options.onEvent, options.onEventError, "onEvent");
    const cacheOptions = options.cache ??
      (storage instanceof InMemoryApiKeyStorage ? {} : false);
    const cache = cacheOptions === false
      ? undefined
      : new VerificationCache(cacheOptions.maxEntries ?? DEFAULT_CACHE_MAX_ENTRIES);
    const storageTimeoutMs = options.storageTimeoutMs ?? DEFAULT_STORAGE_TIMEOUT_MS;
    const clock = options.clock ?? (() => new Date());
    const monotonic = options.monotonicClock ?? (() => performance.now());
    this.#namespace = namespace;
    this.#emitUsage = options.emitUsageEvents ?? false;
    this.#reporter = new VerificationReporter({
      emitEvent,
      emitMetric: createDispatcher(options.onMetric, options.onMetricError, "onMetric"),
      onAuthFailed: options.onAuthFailed,
      clock,
      monotonic,
    });
    this.#verifier = new ApiKeyVerifier({
      storage,
      peek: syncLookupOf(storage),
      storageTimeoutMs,
      hasher,
      namespace,
      cache,
      cacheTtlMs: cacheOptions === false ? 0 : cacheOptions.ttlMs ?? DEFAULT_CACHE_TTL_MS,
      reporter: this.#reporter,
      lastUsed: new LastUsedTracker(
        storage,
        options.debounceMs ?? DEFAULT_DEBOUNCE_MS,
        clock,
        monotonic,
      ),
      clock,
      monotonic,
    });
    this.#manager = new ApiKeyManager({
      storage,
      storageTimeoutMs,
      hasher,
      namespace,
      resolveExpiry: compileTtlPolicy(options.ttlPolicy),
      emitEvent,
      cache,
      clock,
      idFactory: options.idFactory ?? (() => uuidV7()),
    });
  }

  /** Namespace of the keys this service issues and accepts. */
  get namespace(): string {
    return this.#namespace;
  }

  /**
   * Creates a key. Validates the input first (`ApiKeyValidationError` naming the
   * field; nothing is written), applies the TTL policy, emits `api_key.created`.
   */
  create(input: CreateApiKeyInput): Promise<CreateApiKeyResult> {
    return this.#manager.create(input);
  }

  /**
   * Verifies a raw key: parse (malformed) → find by prefix (unknown: invalid
   * after a dummy hash) → secret (invalid) → revoked → expired. Emits one
   * metric; failures call `onAuthFailed` and emit `api_key.auth_failed`;
   * storage failures reject with `ApiKeyStorageError` (outcome `error`).
   */
  verify(rawKey: string): Promise<ApiKeyContext> {
    return this.#verifier.verify(rawKey, this.#emitUsage);
  }

  /**
   * Verifies `rawKey` and checks, in order, the IP allowlist, the environment
   * and the scope. A missing key (`undefined` or empty) is `api_key_missing`.
   * A `requiredScope` level other than `"read"`/`"write"` rejects with a
   * `TypeError` before anything else.
   * `api_key.used` is emitted only when every check passes.
   */
  async authorize(
    rawKey: string | undefined,
    options: AuthorizeOptions = {},
  ): Promise<ApiKeyContext> {
    if (options.requiredScope !== undefined) {
      // A programmer error, thrown before any verification or report.
      assertScopeLevel(options.requiredScope.level, "AuthorizeOptions.requiredScope.level");
    }
    if (rawKey === undefined || rawKey === null || rawKey === "") {
      this.#reporter.authFailed(null, "api_key_missing", undefined);
      throw new ApiKeyError("api_key_missing");
    }
    const context = await this.#verifier.verify(rawKey, false);
    const code = authorizationFailure(context, options);
    if (code !== undefined) {
      this.#reporter.authFailed(context.prefix, code, {
        keyId: context.keyId,
        tenantId: context.tenantId,
        environment: context.environment,
      });
      throw new ApiKeyError(code);
    }
    if (this.#emitUsage) this.#reporter.used(context);
    return context;
  }

  /**
   * Rotates a key: issues a new key inheriting tenant, environment, scopes,
   * allowlist and name (unless overridden); the old key works until
   * `graceExpiresAt` (earlier of now + `gracePeriodMs`, default 24 h, and its own
   * expiry). Unknown id → `api_key_record_not_found`; revoked, expired or
   * already rotated → `api_key_not_rotatable`. Emits `api_key.rotated`.
   */
  rotate(id: string, input?: RotateApiKeyInput): Promise<RotateApiKeyResult> {
    return this.#manager.rotate(id, input);
  }

  /**
   * Revokes a key at once (ending any grace period). Unknown id →
   * `api_key_record_not_found`; an already revoked key is a no-op without a
   * second event. Emits `api_key.revoked`.
   */
  revoke(id: string): Promise<void> {
    return this.#manager.revoke(id);
  }

  /**
   * Lists a tenant's keys (active, rotated and expired; revoked ones only with
   * `includeRevoked`), ordered by `createdAt`, then `id`.
   */
  list(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecord[]> {
    return this.#manager.list(tenantId, options);
  }
}
