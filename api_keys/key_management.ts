/**
 * The write side of `ApiKeysService`: create, rotate, revoke and list keys,
 * with input validation, the TTL policy and lifecycle events.
 *
 * @module
 */
import { ApiKeyOperationError, ApiKeyStorageError, ApiKeyValidationError } from "./errors.ts";
import type { ApiKeyEvent } from "./events.ts";
import type { Sha256Hasher } from "./hasher.ts";
import {
  requireNonEmptyString,
  validateCreateInput,
  validateRotateInput,
} from "./input_validation.ts";
import { generateKey } from "./key_format.ts";
import { readApiKeyRecord } from "./record.ts";
import type { Dispatch } from "./sinks.ts";
import { callStorage } from "./storage_calls.ts";
import type { ApiKeyStorage } from "./storage.ts";
import type { ExpiryResolver } from "./ttl_policy.ts";
import type {
  ApiKeyRecord,
  CreateApiKeyInput,
  CreateApiKeyResult,
  ListApiKeysOptions,
  RotateApiKeyInput,
  RotateApiKeyResult,
} from "./types.ts";
import type { VerificationCache } from "./verification_cache.ts";

/** What an `ApiKeyManager` manages keys with. */
export interface ApiKeyManagerOptions {
  /** Storage of the key records. */
  storage: ApiKeyStorage;
  /** Deadline of each storage call (ms). */
  storageTimeoutMs: number;
  /** Hasher of new secrets. */
  hasher: Sha256Hasher;
  /** Namespace of the issued keys. */
  namespace: string;
  /** The compiled TTL policy. */
  resolveExpiry: ExpiryResolver;
  /** Event sink (`undefined`: events are not emitted). */
  emitEvent: Dispatch<ApiKeyEvent> | undefined;
  /** Verification cache to invalidate on rotate and revoke, if enabled. */
  cache: VerificationCache | undefined;
  /** Wall clock. */
  clock: () => Date;
  /** Id factory of new records. */
  idFactory: () => string;
}

/** Creates, rotates, revokes and lists keys (see the `ApiKeysService` methods). */
export class ApiKeyManager {
  readonly #storage: ApiKeyStorage;
  readonly #storageTimeoutMs: number;
  readonly #hasher: Sha256Hasher;
  readonly #namespace: string;
  readonly #resolveExpiry: ExpiryResolver;
  readonly #emitEvent: Dispatch<ApiKeyEvent> | undefined;
  readonly #cache: VerificationCache | undefined;
  readonly #clock: () => Date;
  readonly #idFactory: () => string;
  readonly #markRevokedIfActive: ((id: string, at: Date) => Promise<boolean>) | undefined;

  /**
   * Keeps the collaborators of `options`; uses the storage's
   * `markRevokedIfActive` when it has one at this point.
   */
  constructor(options: ApiKeyManagerOptions) {
    this.#storage = options.storage;
    this.#storageTimeoutMs = options.storageTimeoutMs;
    this.#hasher = options.hasher;
    this.#namespace = options.namespace;
    this.#resolveExpiry = options.resolveExpiry;
    this.#emitEvent = options.emitEvent;
    this.#cache = options.cache;
    this.#clock = options.clock;
    this.#idFactory = options.idFactory;
    this.#markRevokedIfActive = options.storage.markRevokedIfActive?.bind(options.storage);
  }

  /** See `ApiKeysService.create`. */
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
    await callStorage("insert", this.#storageTimeoutMs, () => this.#storage.insert(record));
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

  /** See `ApiKeysService.rotate`. */
  async rotate(id: string, input?: RotateApiKeyInput): Promise<RotateApiKeyResult> {
    requireNonEmptyString(id, "id");
    const now = this.#clock();
    const valid = validateRotateInput(input, now);
    const old = await this.#findById(id);
    if (old === null) throw new ApiKeyOperationError("api_key_record_not_found");
    if (
      old.revokedAt !== null || old.rotatedAt !== null || old.replacedByKeyId !== null ||
      (old.expiresAt !== null && old.expiresAt.getTime() <= now.getTime())
    ) {
      throw new ApiKeyOperationError("api_key_not_rotatable");
    }
    const expiresAt = this.#resolveExpiry(valid.expiresAt, now, old.expiresAt);
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
    await callStorage("rotate", this.#storageTimeoutMs, () =>
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

  /** See `ApiKeysService.revoke`. */
  async revoke(id: string): Promise<void> {
    requireNonEmptyString(id, "id");
    const record = await this.#findById(id);
    if (record === null) throw new ApiKeyOperationError("api_key_record_not_found");
    // Dropped even when already revoked: another process may have revoked it while cached here.
    this.#cache?.delete(record.prefix);
    if (record.revokedAt !== null) return;
    const now = this.#clock();
    const revoked = await this.#markRevoked(id, now);
    // Again after the write: a verify that read the record during it may have cached it.
    this.#cache?.delete(record.prefix);
    // A concurrent revoke won (only known with markRevokedIfActive): it changed and emitted.
    if (!revoked) return;
    this.#emitEvent?.({
      type: "api_key.revoked",
      at: now,
      keyId: record.id,
      tenantId: record.tenantId,
      prefix: record.prefix,
      environment: record.environment,
    });
  }

  /** See `ApiKeysService.list`. */
  async list(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecord[]> {
    requireNonEmptyString(tenantId, "tenantId");
    const includeRevoked = options?.includeRevoked ?? false;
    if (typeof includeRevoked !== "boolean") {
      throw new ApiKeyValidationError("includeRevoked", "must be a boolean");
    }
    // Read inside the storage call: a row whose getters throw is a storage failure too.
    return await callStorage("listByTenant", this.#storageTimeoutMs, async () => {
      const rows = await this.#storage.listByTenant(tenantId, { includeRevoked });
      const records = Array.isArray(rows) ? rows.map(readApiKeyRecord) : [null];
      if (records.includes(null)) {
        throw new ApiKeyStorageError("listByTenant", new Error("malformed record"));
      }
      return records as ApiKeyRecord[];
    });
  }

  /**
   * Writes `revokedAt`; answers whether this call revoked the key (always
   * `true` without `markRevokedIfActive`).
   */
  #markRevoked(id: string, at: Date): Promise<boolean> {
    const markRevokedIfActive = this.#markRevokedIfActive;
    if (markRevokedIfActive === undefined) {
      return callStorage("markRevoked", this.#storageTimeoutMs, async () => {
        await this.#storage.markRevoked(id, at);
        return true;
      });
    }
    return callStorage("markRevokedIfActive", this.#storageTimeoutMs, async () => {
      const revoked = await markRevokedIfActive(id, at);
      if (typeof revoked !== "boolean") {
        throw new ApiKeyStorageError("markRevokedIfActive", new Error("answer is not a boolean"));
      }
      return revoked;
    });
  }

  #findById(id: string): Promise<ApiKeyRecord | null> {
    return callStorage("findById", this.#storageTimeoutMs, () => this.#storage.findById(id), true);
  }

  #newId(): string {
    const id = this.#idFactory();
    if (typeof id !== "string" || id === "") {
      throw new TypeError("ApiKeysServiceOptions.idFactory must return a non-empty string");
    }
    return id;
  }
}
