/**
 * What the admin routes do, on the admin key's own tenant only: create, list,
 * rotate and revoke keys, through the library's tenant-bound operations
 * (`listSummaries`, `rotateForTenant`, `revokeForTenant`). A key id of another
 * tenant answers exactly like an unknown id. Delegation never escalates: the admin key may create, rotate or
 * revoke only keys no more powerful than itself (`findEscalation`, see
 * docs/security.md, "Delegated key management (no escalation)").
 *
 * @module
 */
import {
  type ApiKeyContext,
  ApiKeyOperationError,
  type ApiKeyRecord,
  type ApiKeysService,
  type ApiKeyStorage,
  ApiKeyValidationError,
  flattenScopes,
  normalizeAllowedIpCidrs,
} from "../../api_keys/mod.ts";
import { DemoHttpError } from "../http_error.ts";
import type { CreateKeyDto } from "./create_key.dto.ts";
import type { IssuedKey, RotatedKey } from "./issued_key.ts";
import { findEscalation, type KeyPowers } from "../../api_keys/admin/mod.ts";
import { toPublicKeyView } from "./key_view.ts";
import type { PublicKeyView } from "./public_key_view.ts";
import type { RotateKeyDto } from "./rotate_key.dto.ts";

/**
 * Code of the 403 answered when a request would issue, or act on, a key more
 * powerful than the admin key. `error.details.key` says which key (`new`: the
 * key to issue; `target`: the key to rotate or revoke) and
 * `error.details.exceeds` where it exceeds (see `Escalation`).
 */
export const ESCALATION_REFUSED = "api_key_escalation_refused";

export type { IssuedKey, RotatedKey } from "./issued_key.ts";

/** A requested allowlist in canonical form; a bad entry is a 400 `api_key_invalid_input`. */
function canonicalAllowlist(entries: string[] | undefined): string[] {
  try {
    return normalizeAllowedIpCidrs(entries);
  } catch (error) {
    throw new ApiKeyValidationError("allowedIpCidrs", (error as Error).message);
  }
}

/** Throws the 403 `ESCALATION_REFUSED` when `key` is more powerful than `admin`. */
function assertNoEscalation(admin: KeyPowers, key: KeyPowers, which: "new" | "target"): void {
  const exceeds = findEscalation(admin, key);
  if (exceeds === null) return;
  throw new DemoHttpError(403, {
    code: ESCALATION_REFUSED,
    message: which === "new"
      ? "The admin key cannot issue a key more powerful than itself"
      : "The admin key cannot rotate or revoke a key more powerful than itself",
    details: { key: which, exceeds },
  });
}

/**
 * Admin operations scoped to the calling key's tenant. Framework-free, for
 * both demo servers (the Nest one provides it with a factory).
 */
export class TenantKeysService {
  readonly #service: ApiKeysService;
  readonly #storage: ApiKeyStorage;

  /** Builds the service over the library's key service and the same storage. */
  constructor(service: ApiKeysService, storage: ApiKeyStorage) {
    this.#service = service;
    this.#storage = storage;
  }

  /**
   * Creates a key in the admin's tenant, no more powerful than the admin key.
   * Omitted fields are read as `live`, any address and no expiry, and the
   * values checked are the values written.
   */
  async create(admin: ApiKeyContext, input: CreateKeyDto): Promise<IssuedKey> {
    const scopes = input.scopes.map(({ resource, level }) => ({ resource, level }));
    const requested: KeyPowers = {
      environment: input.environment ?? "live",
      scopes: flattenScopes(scopes),
      allowedIpCidrs: canonicalAllowlist(input.allowedIpCidrs),
      expiresAt: input.expiresAt === undefined ? null : new Date(input.expiresAt),
    };
    assertNoEscalation(await this.#adminRecord(admin), requested, "new");
    const created = await this.#service.create({
      tenantId: admin.tenantId,
      name: input.name,
      scopes,
      environment: requested.environment,
      expiresAt: requested.expiresAt,
      allowedIpCidrs: requested.allowedIpCidrs,
      createdBy: `key:${admin.prefix}`,
    });
    return { ...created, record: await this.get(admin, created.id) };
  }

  /** The admin tenant's keys, oldest first. */
  async list(admin: ApiKeyContext, includeRevoked: boolean): Promise<PublicKeyView[]> {
    const summaries = await this.#service.listSummaries(admin.tenantId, { includeRevoked });
    return summaries.map(toPublicKeyView);
  }

  /** One key of the admin's tenant; any other id is `api_key_record_not_found` (404). */
  async get(admin: ApiKeyContext, id: string): Promise<PublicKeyView> {
    const summaries = await this.#service.listSummaries(admin.tenantId, { includeRevoked: true });
    const summary = summaries.find((candidate) => candidate.id === id);
    if (summary === undefined) throw new ApiKeyOperationError("api_key_record_not_found");
    return toPublicKeyView(summary);
  }

  /**
   * Rotates a key of the admin's tenant. Both the key rotated and its
   * replacement must be no more powerful than the admin key. The replacement
   * keeps the old key's environment and scopes, and its allowlist and expiry
   * unless the body sets them; the values checked are the values written.
   */
  async rotate(admin: ApiKeyContext, id: string, input: RotateKeyDto): Promise<RotatedKey> {
    const target = await this.#find(admin, id);
    const replacement: KeyPowers = {
      environment: target.environment,
      scopes: target.scopes,
      allowedIpCidrs: input.allowedIpCidrs === undefined
        ? target.allowedIpCidrs ?? []
        : canonicalAllowlist(input.allowedIpCidrs),
      expiresAt: input.expiresAt === undefined ? target.expiresAt : new Date(input.expiresAt),
    };
    const adminRecord = await this.#adminRecord(admin);
    assertNoEscalation(adminRecord, target, "target");
    assertNoEscalation(adminRecord, replacement, "new");
    const rotated = await this.#service.rotateForTenant(admin.tenantId, target.id, {
      gracePeriodMs: input.gracePeriodMs,
      graceStarts: input.graceStarts,
      maxWaitMs: input.maxWaitMs,
      name: input.name,
      expiresAt: replacement.expiresAt,
      allowedIpCidrs: replacement.allowedIpCidrs,
      createdBy: `key:${admin.prefix}`,
    });
    return {
      id: rotated.id,
      key: rotated.key,
      replacedKeyId: rotated.replacedKeyId,
      graceExpiresAt: rotated.graceExpiresAt.toISOString(),
      record: await this.get(admin, rotated.id),
    };
  }

  /**
   * Revokes a key of the admin's tenant that is no more powerful than the
   * admin key (idempotent) and returns its public view.
   */
  async revoke(admin: ApiKeyContext, id: string): Promise<PublicKeyView> {
    const target = await this.#find(admin, id);
    assertNoEscalation(await this.#adminRecord(admin), target, "target");
    await this.#service.revokeForTenant(admin.tenantId, target.id);
    return this.get(admin, target.id);
  }

  /**
   * The admin key's own record: its powers as stored now. The context lacks
   * the expiry, so the rule reads every power from the record.
   */
  #adminRecord(admin: ApiKeyContext): Promise<ApiKeyRecord> {
    return this.#find(admin, admin.keyId);
  }

  async #find(admin: ApiKeyContext, id: string): Promise<ApiKeyRecord> {
    const record = await this.#storage.findById(id);
    if (record === null || record.tenantId !== admin.tenantId) {
      throw new ApiKeyOperationError("api_key_record_not_found");
    }
    return record;
  }
}
