/**
 * `ApiKeysService`: create, verify, authorize, rotate, revoke and list API
 * keys. Framework-neutral; the Nest module is a thin provider around it.
 *
 * @module
 */
import {
  API_KEY_ERROR_STATUS,
  ApiKeyError,
  type ApiKeyErrorCode,
  ApiKeyOperationError,
  ApiKeyStorageError,
  ApiKeyValidationError,
} from "./errors.ts";
import type { ApiKeyEvent, ApiKeyVerificationMetric } from "./events.ts";
import { Sha256Hasher } from "./hasher.ts";
import { InMemoryApiKeyStorage, PEEK_BY_PREFIX } from "./in_memory_storage.ts";
import {
  requireNonEmptyString,
  validateCreateInput,
  validateRotateInput,
} from "./input_validation.ts";
import { isIpAllowed } from "./ip_allowlist.ts";
import { DEFAULT_API_KEY_NAMESPACE, generateKey, parseKey } from "./key_format.ts";
import { isApiKeyRecord } from "./record.ts";
import { scopeSatisfies } from "./scopes.ts";
import { type ApiKeysServiceOptions, validateApiKeysServiceOptions } from "./service_options.ts";
import { createDispatcher, type Dispatch } from "./sinks.ts";
import type { ApiKeyStorage } from "./storage.ts";
import { compileTtlPolicy, type ExpiryResolver } from "./ttl_policy.ts";
import type {
  ApiKeyContext,
  ApiKeyRecord,
  ApiKeyVerificationOutcome,
  CreateApiKeyInput,
  CreateApiKeyResult,
  Environment,
  ListApiKeysOptions,
  RequiredScope,
  RotateApiKeyInput,
  RotateApiKeyResult,
} from "./types.ts";
import { uuidV7 } from "./uuid_v7.ts";
import { constantTimeEqual, VerificationCache } from "./verification_cache.ts";

/**
 * Request-level checks of `authorize`, applied after verification in this order:
 * IP allowlist, environment, scope.
 *
 * @example
 * ```ts
 * import type { AuthorizeOptions } from "./service.ts";
 * const options: AuthorizeOptions = {
 *   clientIp: "203.0.113.7", requiredEnvironment: "live",
 *   requiredScope: { resource: "orders", level: "read" },
 * };
 * ```
 */
export interface AuthorizeOptions {
  /** Client address; an allowlisted key refuses an unknown address. */
  clientIp?: string;
  /** Environment the route requires. */
  requiredEnvironment?: Environment;
  /** Scope the route requires. */
  requiredScope?: RequiredScope;
}

const DEFAULT_DEBOUNCE_MS = 60_000;
const DEFAULT_STORAGE_TIMEOUT_MS = 5_000;
const DEFAULT_CACHE_TTL_MS = 30_000;
const DEFAULT_CACHE_MAX_ENTRIES = 10_000;
const MAX_DEBOUNCE_ENTRIES = 100_000;

/** What is known of the key at a failure (only after the secret matched). */
interface KnownKey {
  keyId: string;
  tenantId: string;
  environment: Environment;
}

function freezeContext(record: Readonly<ApiKeyRecord>): ApiKeyContext {
  const context: ApiKeyContext = {
    keyId: record.id,
    tenantId: record.tenantId,
    environment: record.environment,
    scopes: Object.freeze([...record.scopes]) as string[],
    prefix: record.prefix,
  };
  if (record.allowedIpCidrs !== undefined && record.allowedIpCidrs.length > 0) {
    context.allowedIpCidrs = Object.freeze([...record.allowedIpCidrs]) as string[];
  }
  return Object.freeze(context);
}

/**
 * The synchronous prefix lookup of an unmodified `InMemoryApiKeyStorage`: it
 * cannot hang or fail, so verify skips the deadline and the copy.
 */
function syncLookupOf(
  storage: ApiKeyStorage,
): ((prefix: string) => Readonly<ApiKeyRecord> | null) | undefined {
  if (
    !(storage instanceof InMemoryApiKeyStorage) ||
    storage.findByPrefix !== InMemoryApiKeyStorage.prototype.findByPrefix
  ) return undefined;
  return (prefix) => storage[PEEK_BY_PREFIX](prefix);
}

/**
 * Builds an `ApiKeyError` without capturing a stack trace (about 1.5 µs saved
 * per failure; the stack of an authentication failure says nothing).
 */
function authError(code: ApiKeyErrorCode): ApiKeyError {
  const error = Object.create(ApiKeyError.prototype) as ApiKeyError;
  const template = AUTH_ERROR_TEMPLATES[code];
  Object.defineProperties(error, {
    message: { value: template.message, writable: true, configurable: true },
    stack: { value: `ApiKeyError: ${template.message}`, writable: true, configurable: true },
  });
  Object.assign(error, { name: "ApiKeyError", code, httpStatus: template.httpStatus });
  return error;
}

const AUTH_ERROR_TEMPLATES = Object.fromEntries(
  (Object.keys(API_KEY_ERROR_STATUS) as ApiKeyErrorCode[]).map((code) => {
    const { message, httpStatus } = new ApiKeyError(code);
    return [code, { message, httpStatus }];
  }),
) as Record<ApiKeyErrorCode, { message: string; httpStatus: number }>;

function toStorageError(operation: string, error: unknown): Error {
  if (error instanceof ApiKeyOperationError || error instanceof ApiKeyStorageError) return error;
  return new ApiKeyStorageError(operation, error);
}

/**
 * The API-key service. Contexts it returns are frozen.
 *
 * @example
 * ```ts
 * import { ApiKeysService } from "./service.ts";
 * import { InMemoryApiKeyStorage, PEEK_BY_PREFIX } from "./in_memory_storage.ts";
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
  readonly #storage: ApiKeyStorage;
  readonly #peek: ((prefix: string) => Readonly<ApiKeyRecord> | null) | undefined;
  readonly #hasher: Sha256Hasher;
  readonly #namespace: string;
  readonly #debounceMs: number;
  readonly #resolveExpiry: ExpiryResolver;
  readonly #emitUsage: boolean;
  readonly #emitEvent: Dispatch<ApiKeyEvent> | undefined;
  readonly #emitMetric: Dispatch<ApiKeyVerificationMetric> | undefined;
  readonly #onAuthFailed: ((prefix: string | null, code: ApiKeyErrorCode) => void) | undefined;
  readonly #cache: VerificationCache | undefined;
  readonly #cacheTtlMs: number;
  readonly #storageTimeoutMs: number;
  readonly #clock: () => Date;
  readonly #idFactory: () => string;
  readonly #monotonic: () => number;
  readonly #lastTouched = new Map<string, number>();
  readonly #checkedRecords = new WeakSet<object>();
  readonly #retiredVersionsWarned = new Set<number>();
  #authFailedWarned = false;

  /** Validates `options` (throws a `TypeError` naming the option) and builds the service. */
  constructor(options: ApiKeysServiceOptions) {
    validateApiKeysServiceOptions(options);
    this.#storage = options.storage;
    this.#peek = syncLookupOf(options.storage);
    this.#hasher = new Sha256Hasher({
      peppers: options.peppers,
      currentVersion: options.currentPepperVersion,
    });
    this.#namespace = options.namespace ?? DEFAULT_API_KEY_NAMESPACE;
    this.#debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    this.#resolveExpiry = compileTtlPolicy(options.ttlPolicy);
    this.#emitUsage = options.emitUsageEvents ?? false;
    this.#emitEvent = createDispatcher(options.onEvent, options.onEventError, "onEvent");
    this.#emitMetric = createDispatcher(options.onMetric, options.onMetricError, "onMetric");
    this.#onAuthFailed = options.onAuthFailed;
    const cache = options.cache ??
      (options.storage instanceof InMemoryApiKeyStorage ? {} : false);
    this.#cache = cache === false
      ? undefined
      : new VerificationCache(cache.maxEntries ?? DEFAULT_CACHE_MAX_ENTRIES);
    this.#cacheTtlMs = cache === false ? 0 : cache.ttlMs ?? DEFAULT_CACHE_TTL_MS;
    this.#storageTimeoutMs = options.storageTimeoutMs ?? DEFAULT_STORAGE_TIMEOUT_MS;
    this.#clock = options.clock ?? (() => new Date());
    this.#idFactory = options.idFactory ?? (() => uuidV7());
    this.#monotonic = options.monotonicClock ?? (() => performance.now());
  }

  /** Namespace of the keys this service issues and accepts. */
  get namespace(): string {
    return this.#namespace;
  }

  /**
   * Creates a key. Validates the input first (`ApiKeyValidationError` naming the
   * field; nothing is written), applies the TTL policy, emits `api_key.created`.
   */
  async create(input: CreateApiKeyInput): Promise<CreateApiKeyResult> {
    const valid = validateCreateInput(input);
    const now = this.#clock();
    const expiresAt = this.#resolveExpiry(valid.expiresAt, now);
    const key = generateKey({ environment: valid.environment, namespace: this.#namespace });
    const { hash, pepperVersion } = await this.#hasher.hash(key.secret);
    const record: ApiKeyRecord = {
      id: this.#newId(),
      tenantId: valid.tenantId,
      name: valid.name,
      environment: valid.environment,
      prefix: key.prefix,
      hash,
      pepperVersion,
      scopes: valid.scopes,
      allowedIpCidrs: valid.allowedIpCidrs,
      lastUsedAt: null,
      expiresAt,
      revokedAt: null,
      rotatedAt: null,
      replacedByKeyId: null,
      createdBy: valid.createdBy,
      createdAt: now,
    };
    await this.#storageCall("insert", () => this.#storage.insert(record));
    this.#emitEvent?.({
      type: "api_key.created",
      at: now,
      keyId: record.id,
      tenantId: record.tenantId,
      prefix: record.prefix,
      environment: record.environment,
      scopes: [...record.scopes],
      createdBy: record.createdBy,
    });
    return { id: record.id, key: key.raw };
  }

  /**
   * Verifies a raw key: parse (malformed) → find by prefix (unknown: invalid
   * after a dummy hash) → secret (invalid) → revoked → expired. Emits one
   * metric; failures call `onAuthFailed` and emit `api_key.auth_failed`;
   * storage failures reject with `ApiKeyStorageError` (outcome `error`).
   */
  verify(rawKey: string): Promise<ApiKeyContext> {
    return this.#verify(rawKey, true);
  }

  /**
   * Verifies `rawKey` and checks, in order, the IP allowlist, the environment
   * and the scope. A missing key (`undefined` or empty) is `api_key_missing`.
   * `api_key.used` is emitted only when every check passes.
   */
  async authorize(
    rawKey: string | undefined,
    options: AuthorizeOptions = {},
  ): Promise<ApiKeyContext> {
    if (rawKey === undefined || rawKey === null || rawKey === "") {
      this.#reportAuthFailure(null, "api_key_missing", undefined);
      throw new ApiKeyError("api_key_missing");
    }
    const context = await this.#verify(rawKey, false);
    let code: ApiKeyErrorCode | undefined;
    const { requiredEnvironment, requiredScope } = options;
    if (!isIpAllowed(options.clientIp, context.allowedIpCidrs)) {
      code = "api_key_ip_not_allowed";
    } else if (requiredEnvironment !== undefined && context.environment !== requiredEnvironment) {
      code = "api_key_environment_mismatch";
    } else if (
      requiredScope !== undefined &&
      !scopeSatisfies(context.scopes, requiredScope.resource, requiredScope.level)
    ) {
      code = "api_key_scope_insufficient";
    }
    if (code !== undefined) {
      this.#reportAuthFailure(context.prefix, code, {
        keyId: context.keyId,
        tenantId: context.tenantId,
        environment: context.environment,
      });
      throw new ApiKeyError(code);
    }
    if (this.#emitUsage) this.#emitUsed(context);
    return context;
  }

  /**
   * Rotates a key: issues a new key inheriting tenant, environment, scopes,
   * allowlist and name (unless overridden); the old key works until
   * `graceExpiresAt` (earlier of now + `gracePeriodMs`, default 24 h, and its own
   * expiry). Unknown id → `api_key_record_not_found`; revoked, expired or
   * already rotated → `api_key_not_rotatable`. Emits `api_key.rotated`.
   */
  async rotate(id: string, input?: RotateApiKeyInput): Promise<RotateApiKeyResult> {
    requireNonEmptyString(id, "id");
    const valid = validateRotateInput(input);
    const old = await this.#storageCall("findById", () => this.#storage.findById(id), true);
    if (old === null) throw new ApiKeyOperationError("api_key_record_not_found");
    const now = this.#clock();
    if (
      old.revokedAt !== null || old.rotatedAt !== null || old.replacedByKeyId !== null ||
      (old.expiresAt !== null && old.expiresAt.getTime() <= now.getTime())
    ) {
      throw new ApiKeyOperationError("api_key_not_rotatable");
    }
    const expiresAt = this.#resolveExpiry(valid.expiresAt, now);
    const graceExpiresAt = new Date(
      Math.min(now.getTime() + valid.gracePeriodMs, old.expiresAt?.getTime() ?? Infinity),
    );
    const key = generateKey({ environment: old.environment, namespace: this.#namespace });
    const { hash, pepperVersion } = await this.#hasher.hash(key.secret);
    const newRecord: ApiKeyRecord = {
      id: this.#newId(),
      tenantId: old.tenantId,
      name: valid.name ?? old.name,
      environment: old.environment,
      prefix: key.prefix,
      hash,
      pepperVersion,
      scopes: [...old.scopes],
      allowedIpCidrs: valid.allowedIpCidrs ?? [...(old.allowedIpCidrs ?? [])],
      lastUsedAt: null,
      expiresAt,
      revokedAt: null,
      rotatedAt: null,
      replacedByKeyId: null,
      createdBy: valid.createdBy ?? null,
      createdAt: now,
    };
    await this.#storageCall("rotate", () =>
      this.#storage.rotate({
        oldKeyId: old.id,
        newRecord,
        oldExpiresAt: graceExpiresAt,
        rotatedAt: now,
      }));
    this.#cache?.delete(old.prefix);
    this.#emitEvent?.({
      type: "api_key.rotated",
      at: now,
      tenantId: old.tenantId,
      oldKeyId: old.id,
      oldPrefix: old.prefix,
      newKeyId: newRecord.id,
      newPrefix: newRecord.prefix,
      environment: newRecord.environment,
      scopes: [...newRecord.scopes],
      graceExpiresAt: new Date(graceExpiresAt.getTime()),
      createdBy: newRecord.createdBy,
    });
    return { id: newRecord.id, key: key.raw, replacedKeyId: old.id, graceExpiresAt };
  }

  /**
   * Revokes a key at once (ending any grace period). Unknown id →
   * `api_key_record_not_found`; an already revoked key is a no-op without a
   * second event. Emits `api_key.revoked`.
   */
  async revoke(id: string): Promise<void> {
    requireNonEmptyString(id, "id");
    const record = await this.#storageCall("findById", () => this.#storage.findById(id), true);
    if (record === null) throw new ApiKeyOperationError("api_key_record_not_found");
    this.#cache?.delete(record.prefix);
    if (record.revokedAt !== null) return;
    const now = this.#clock();
    await this.#storageCall("markRevoked", () => this.#storage.markRevoked(id, now));
    this.#cache?.delete(record.prefix);
    this.#emitEvent?.({
      type: "api_key.revoked",
      at: now,
      keyId: record.id,
      tenantId: record.tenantId,
      prefix: record.prefix,
      environment: record.environment,
    });
  }

  /**
   * Lists a tenant's keys (active, rotated and expired; revoked ones only with
   * `includeRevoked`), ordered by `createdAt`, then `id`.
   */
  async list(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecord[]> {
    requireNonEmptyString(tenantId, "tenantId");
    const includeRevoked = options?.includeRevoked ?? false;
    if (typeof includeRevoked !== "boolean") {
      throw new ApiKeyValidationError("includeRevoked", "must be a boolean");
    }
    // Validated inside the storage call: a row whose getters throw is a storage failure too.
    return await this.#storageCall("listByTenant", async () => {
      const records = await this.#storage.listByTenant(tenantId, { includeRevoked });
      if (!Array.isArray(records) || !records.every(isApiKeyRecord)) {
        throw new ApiKeyStorageError("listByTenant", new Error("malformed record"));
      }
      return records;
    });
  }

  async #verify(rawKey: string, emitUsed: boolean): Promise<ApiKeyContext> {
    const start = this.#monotonic();
    const parsed = parseKey(rawKey);
    if (parsed === null || parsed.namespace !== this.#namespace) {
      throw this.#verificationFailure(start, "malformed", "api_key_malformed", null, undefined);
    }
    const { prefix, secret, environment } = parsed;
    const cache = this.#cache;
    if (cache !== undefined) {
      const entry = cache.get(prefix);
      if (entry !== undefined) {
        // `start` is now; a key without expiry needs no wall-clock read.
        if (
          start >= entry.cachedUntil ||
          (entry.expiresAtMs !== Infinity && this.#clock().getTime() >= entry.expiresAtMs)
        ) {
          cache.delete(prefix);
        } else if (constantTimeEqual(entry.secret, secret)) {
          return this.#verified(start, entry.context, emitUsed);
        }
      }
    }
    let record: Readonly<ApiKeyRecord> | null;
    const peek = this.#peek;
    if (peek !== undefined) {
      // In-process storage: no deadline timer, no copy, no extra await. A stored record is
      // checked once (the storage only ever replaces its dates with valid ones).
      record = peek(prefix);
      if (record !== null && !this.#checkedRecords.has(record)) {
        if (!isApiKeyRecord(record)) {
          this.#metric(start, "error", environment);
          throw new ApiKeyStorageError("findByPrefix", new Error("malformed record"));
        }
        this.#checkedRecords.add(record);
      }
    } else {
      try {
        record = await this.#storageCall(
          "findByPrefix",
          () => this.#storage.findByPrefix(prefix),
          true,
        );
      } catch (error) {
        this.#metric(start, "error", environment);
        throw error;
      }
    }
    if (record === null) {
      await this.#hasher.dummyVerify(secret);
      throw this.#verificationFailure(start, "invalid", "api_key_invalid", prefix, environment);
    }
    if (!this.#hasher.hasVersion(record.pepperVersion)) {
      this.#warnRetiredVersion(record.pepperVersion);
    }
    // The HMAC runs off the JS thread: start it, then build the context while it runs.
    const matches = this.#hasher.verify(secret, record.hash, record.pepperVersion);
    const context = freezeContext(record);
    if (!(await matches)) {
      throw this.#verificationFailure(start, "invalid", "api_key_invalid", prefix, environment);
    }
    const known = { keyId: record.id, tenantId: record.tenantId, environment: record.environment };
    if (record.revokedAt !== null) {
      throw this.#verificationFailure(
        start,
        "revoked",
        "api_key_revoked",
        prefix,
        environment,
        known,
      );
    }
    const expiresAtMs = record.expiresAt === null ? Infinity : record.expiresAt.getTime();
    if (expiresAtMs <= this.#clock().getTime()) {
      throw this.#verificationFailure(
        start,
        "expired",
        "api_key_expired",
        prefix,
        environment,
        known,
      );
    }
    cache?.set(prefix, {
      secret,
      context,
      expiresAtMs,
      cachedUntil: this.#monotonic() + this.#cacheTtlMs,
    });
    return this.#verified(start, context, emitUsed);
  }

  #verified(start: number, context: ApiKeyContext, emitUsed: boolean): ApiKeyContext {
    this.#touch(context.keyId);
    this.#metric(start, "success", context.environment);
    if (emitUsed && this.#emitUsage) this.#emitUsed(context);
    return context;
  }

  #verificationFailure(
    start: number,
    outcome: ApiKeyVerificationOutcome,
    code: ApiKeyErrorCode,
    prefix: string | null,
    environment: Environment | undefined,
    known?: KnownKey,
  ): ApiKeyError {
    this.#metric(start, outcome, environment);
    this.#reportAuthFailure(prefix, code, known);
    return authError(code);
  }

  #metric(start: number, outcome: ApiKeyVerificationOutcome, environment?: Environment): void {
    const emit = this.#emitMetric;
    if (emit === undefined) return;
    const metric: ApiKeyVerificationMetric = {
      type: "api_key.verification",
      outcome,
      durationMs: this.#monotonic() - start,
    };
    if (environment !== undefined) metric.environment = environment;
    emit(metric);
  }

  #reportAuthFailure(prefix: string | null, code: ApiKeyErrorCode, known: KnownKey | undefined) {
    if (this.#onAuthFailed !== undefined) {
      try {
        this.#onAuthFailed(prefix, code);
      } catch (error) {
        if (!this.#authFailedWarned) {
          this.#authFailedWarned = true;
          const name = error instanceof Error ? error.name : typeof error;
          console.warn(`api-keys: onAuthFailed threw (${name}); further failures are not logged`);
        }
      }
    }
    this.#emitEvent?.({ type: "api_key.auth_failed", at: this.#clock(), prefix, code, ...known });
  }

  #emitUsed(context: ApiKeyContext): void {
    this.#emitEvent?.({
      type: "api_key.used",
      at: this.#clock(),
      keyId: context.keyId,
      tenantId: context.tenantId,
      prefix: context.prefix,
      environment: context.environment,
      scopes: [...context.scopes],
    });
  }

  #touch(keyId: string): void {
    const now = this.#monotonic();
    if (this.#debounceMs > 0) {
      const last = this.#lastTouched.get(keyId);
      if (last !== undefined && now - last < this.#debounceMs) return;
      if (last === undefined && this.#lastTouched.size >= MAX_DEBOUNCE_ENTRIES) {
        this.#lastTouched.delete(this.#lastTouched.keys().next().value!);
      }
      this.#lastTouched.set(keyId, now);
    }
    try {
      this.#storage.touchLastUsed(keyId, this.#clock()).then(undefined, () => {});
    } catch {
      // best effort: a failing lastUsedAt write never fails a verification
    }
  }

  #warnRetiredVersion(version: number): void {
    if (this.#retiredVersionsWarned.has(version)) return;
    this.#retiredVersionsWarned.add(version);
    console.warn(
      `api-keys: a key record uses pepper version ${version}, which is not configured; ` +
        "such keys verify as invalid",
    );
  }

  #newId(): string {
    const id = this.#idFactory();
    if (typeof id !== "string" || id === "") {
      throw new TypeError("ApiKeysServiceOptions.idFactory must return a non-empty string");
    }
    return id;
  }

  /**
   * Runs one storage call under the deadline; any failure other than an
   * `ApiKeyOperationError` becomes an `ApiKeyStorageError` (cause kept private).
   * With `expectRecord`, the result must be a well-formed record or null.
   */
  #storageCall<T>(operation: string, call: () => Promise<T>, expectRecord?: false): Promise<T>;
  #storageCall(
    operation: string,
    call: () => Promise<ApiKeyRecord | null>,
    expectRecord: true,
  ): Promise<ApiKeyRecord | null>;
  async #storageCall<T>(
    operation: string,
    call: () => Promise<T>,
    expectRecord = false,
  ): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new ApiKeyStorageError(operation, new Error("storage deadline exceeded"))),
          this.#storageTimeoutMs,
        );
      });
      const result = await Promise.race([call(), deadline]);
      if (expectRecord && result !== null && !isApiKeyRecord(result)) {
        throw new ApiKeyStorageError(operation, new Error("malformed record"));
      }
      return result;
    } catch (error) {
      throw toStorageError(operation, error);
    } finally {
      clearTimeout(timer);
    }
  }
}
