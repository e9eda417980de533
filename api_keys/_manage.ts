/**
 * The manage flow of `ApiKeysService`: create, rotate, revoke and list keys,
 * with input validation, the TTL policy and lifecycle events. Create and
 * rotate build their new record with one function.
 *
 * @module
 */
import { ApiKeyOperationError } from "./errors.ts";
import { createdEvent } from "./events.ts";
import { requireRotationWaits } from "./_first_use.ts";
import {
  requireNonEmptyString,
  validateCreateInput,
  validateListOptions,
  validateRotateInput,
} from "./_input.ts";
import { generateKey } from "./key_format.ts";
import type { Settings } from "./_settings.ts";
import type {
  ApiKeyRecord,
  CreateApiKeyInput,
  CreateApiKeyResult,
  Environment,
  ListApiKeysOptions,
  RotateApiKeyInput,
  RotateApiKeyResult,
} from "./types.ts";

/** What a new key's record takes from its caller (create or rotate). */
interface NewKeyFields {
  tenantId: string;
  name: string;
  environment: Environment;
  scopes: string[];
  allowedIpCidrs: string[];
  expiresAt: Date | null;
  createdBy: string | null;
}

/**
 * Creates, rotates, revokes and lists keys with the compiled settings.
 *
 * @example
 * ```ts
 * import { compileSettings } from "./_settings.ts";
 * import { ManageFlow } from "./_manage.ts";
 * import { InMemoryApiKeyStorage } from "./in_memory_storage.ts";
 * const flow = new ManageFlow(compileSettings({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * }));
 * const { id } = await flow.create({
 *   tenantId: "t1", name: "ci", scopes: [{ resource: "orders", level: "read" }],
 * });
 * ```
 */
export class ManageFlow {
  readonly #s: Settings;

  /** A flow over `settings`. */
  constructor(settings: Settings) {
    this.#s = settings;
  }

  /** See `ApiKeysService.create`. */
  async create(input: CreateApiKeyInput): Promise<CreateApiKeyResult> {
    const s = this.#s;
    const valid = validateCreateInput(input);
    const now = s.clock();
    const { record, key } = await this.#newKey({
      ...valid,
      expiresAt: s.resolveExpiry(valid.expiresAt, now),
    }, now);
    await s.storage.insert(record);
    s.fleet?.wrote("created", record.prefix);
    s.emitEvent?.(createdEvent(record, now));
    return { id: record.id, key };
  }

  /** See `ApiKeysService.rotate`. */
  async rotate(id: string, input?: RotateApiKeyInput): Promise<RotateApiKeyResult> {
    const s = this.#s;
    requireNonEmptyString(id, "id");
    const now = s.clock();
    const valid = validateRotateInput(input, now);
    const waits = valid.graceStarts === "first-use" ? requireRotationWaits(s) : undefined;
    const old = await s.storage.findById(id);
    if (old === null) throw new ApiKeyOperationError("api_key_record_not_found");
    if (
      old.revokedAt !== null || old.rotatedAt !== null || old.replacedByKeyId !== null ||
      (old.expiresAt !== null && old.expiresAt.getTime() <= now.getTime())
    ) {
      throw new ApiKeyOperationError("api_key_not_rotatable");
    }
    // With graceStarts "first-use", the upper bound (maxWaitMs is 0 otherwise).
    const graceExpiresAt = new Date(
      Math.min(
        now.getTime() + valid.maxWaitMs + valid.gracePeriodMs,
        old.expiresAt?.getTime() ?? Infinity,
      ),
    );
    const { record, key } = await this.#newKey({
      tenantId: old.tenantId,
      name: valid.name ?? old.name,
      environment: old.environment,
      scopes: [...old.scopes],
      allowedIpCidrs: valid.allowedIpCidrs ?? [...(old.allowedIpCidrs ?? [])],
      expiresAt: s.resolveExpiry(valid.expiresAt, now, old.expiresAt),
      createdBy: valid.createdBy ?? null,
    }, now);
    // Saved first: the new key cannot be used before the rotation, and a failed rotation leaves
    // only a wait no key will ever claim.
    await waits?.save({
      newKeyId: record.id,
      oldKeyId: old.id,
      gracePeriodMs: valid.gracePeriodMs,
      waitEndsAt: graceExpiresAt,
    });
    await s.storage.rotate({
      oldKeyId: old.id,
      newRecord: record,
      oldExpiresAt: graceExpiresAt,
      rotatedAt: now,
    });
    s.cache?.invalidate(old.prefix);
    s.fleet?.wrote("created", record.prefix);
    s.fleet?.wrote("rotated", old.prefix);
    s.emitEvent?.({
      type: "api_key.rotated",
      at: now,
      tenantId: old.tenantId,
      oldKeyId: old.id,
      oldPrefix: old.prefix,
      newKeyId: record.id,
      newPrefix: record.prefix,
      environment: record.environment,
      scopes: [...record.scopes],
      graceExpiresAt: new Date(graceExpiresAt.getTime()),
      graceStarts: valid.graceStarts,
      createdBy: record.createdBy,
    });
    return { id: record.id, key, replacedKeyId: old.id, graceExpiresAt };
  }

  /**
   * See `ApiKeysService.revoke`; `onRevoked` runs only when this call revoked
   * the key, right before `api_key.revoked`.
   */
  async revoke(id: string, onRevoked?: () => void): Promise<void> {
    const s = this.#s;
    requireNonEmptyString(id, "id");
    const record = await s.storage.findById(id);
    if (record === null) throw new ApiKeyOperationError("api_key_record_not_found");
    // Dropped even when already revoked: another process may have revoked it while cached here.
    s.cache?.invalidate(record.prefix);
    if (record.revokedAt !== null) return;
    const now = s.clock();
    const revoked = await s.storage.revoke(id, now);
    // Again after the write: a verify that read the record during it may have cached it.
    s.cache?.invalidate(record.prefix);
    // A concurrent revoke won (only known with markRevokedIfActive): it changed and emitted.
    if (!revoked) return;
    s.fleet?.wrote("revoked", record.prefix);
    onRevoked?.();
    s.emitEvent?.({
      type: "api_key.revoked",
      at: now,
      keyId: record.id,
      tenantId: record.tenantId,
      prefix: record.prefix,
      environment: record.environment,
    });
  }

  /** See `ApiKeysService.list`. */
  list(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecord[]> {
    try {
      requireNonEmptyString(tenantId, "tenantId");
      return this.#s.storage.listByTenant(tenantId, validateListOptions(options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** A new key and its record, made at `now`: the one builder of create and rotate. */
  async #newKey(
    fields: NewKeyFields,
    now: Date,
  ): Promise<{ record: ApiKeyRecord; key: string }> {
    const s = this.#s;
    const key = generateKey({ environment: fields.environment, namespace: s.namespace });
    const { hash, pepperVersion } = await s.hasher.hash(key.secret);
    const id = s.idFactory();
    if (typeof id !== "string" || id === "") {
      throw new TypeError("ApiKeysServiceOptions.idFactory must return a non-empty string");
    }
    const record: ApiKeyRecord = {
      id,
      tenantId: fields.tenantId,
      name: fields.name,
      environment: fields.environment,
      prefix: key.prefix,
      hash,
      pepperVersion,
      scopes: fields.scopes,
      allowedIpCidrs: fields.allowedIpCidrs,
      lastUsedAt: null,
      expiresAt: fields.expiresAt,
      revokedAt: null,
      rotatedAt: null,
      replacedByKeyId: null,
      createdBy: fields.createdBy,
      createdAt: now,
    };
    return { record, key: key.raw };
  }
}
