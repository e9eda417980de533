/**
 * What the admin routes do, on the admin key's own tenant only: create, list,
 * rotate and revoke keys, never granting (or re-issuing) a scope the admin
 * key lacks. A key id of another tenant answers exactly like an unknown id.
 *
 * @module
 */
import { ForbiddenException, Inject, Injectable } from "@nestjs/common";
import {
  type ApiKeyContext,
  ApiKeyOperationError,
  type ApiKeyRecord,
  ApiKeysService,
  type ApiKeyStorage,
  type Scope,
  scopeSatisfies,
} from "../../api_keys/mod.ts";
import { DEMO_KEY_STORAGE } from "../tokens.ts";
import type { CreateKeyDto } from "./create-key.dto.ts";
import type { IssuedKey, RotatedKey } from "./issued-key.ts";
import { type PublicKeyView, toPublicKeyView } from "./public-key-view.ts";
import type { RotateKeyDto } from "./rotate-key.dto.ts";

/** Code of the 403 answered when a request asks for a scope the admin key lacks. */
export const SCOPE_NOT_GRANTABLE = "api_key_scope_not_grantable";

export type { IssuedKey, RotatedKey } from "./issued-key.ts";

/** `resource:level` back to a scope (the resource never contains `:`). */
function parseFlatScope(flat: string): Scope {
  const at = flat.lastIndexOf(":");
  return { resource: flat.slice(0, at), level: flat.slice(at + 1) as Scope["level"] };
}

/** Admin operations scoped to the calling key's tenant. */
@Injectable()
export class TenantKeysService {
  readonly #service: ApiKeysService;
  readonly #storage: ApiKeyStorage;

  /** Builds the service over the library's key service and the same storage. */
  constructor(
    @Inject(ApiKeysService) service: ApiKeysService,
    @Inject(DEMO_KEY_STORAGE) storage: ApiKeyStorage,
  ) {
    this.#service = service;
    this.#storage = storage;
  }

  /** Creates a key in the admin's tenant; every scope must be held by the admin key. */
  async create(admin: ApiKeyContext, input: CreateKeyDto): Promise<IssuedKey> {
    this.#assertGrantable(admin, input.scopes);
    const created = await this.#service.create({
      tenantId: admin.tenantId,
      name: input.name,
      scopes: input.scopes.map(({ resource, level }) => ({ resource, level })),
      environment: input.environment,
      expiresAt: input.expiresAt === undefined ? undefined : new Date(input.expiresAt),
      allowedIpCidrs: input.allowedIpCidrs,
      createdBy: `key:${admin.prefix}`,
    });
    return { ...created, record: await this.get(admin, created.id) };
  }

  /** The admin tenant's keys, oldest first. */
  async list(admin: ApiKeyContext, includeRevoked: boolean): Promise<PublicKeyView[]> {
    const now = new Date();
    const records = await this.#service.list(admin.tenantId, { includeRevoked });
    return records.map((record) => toPublicKeyView(record, now));
  }

  /** One key of the admin's tenant; any other id is `api_key_record_not_found` (404). */
  async get(admin: ApiKeyContext, id: string): Promise<PublicKeyView> {
    return toPublicKeyView(await this.#find(admin, id), new Date());
  }

  /**
   * Rotates a key of the admin's tenant. The new key inherits the old scopes,
   * so the admin key must hold all of them.
   */
  async rotate(admin: ApiKeyContext, id: string, input: RotateKeyDto): Promise<RotatedKey> {
    const old = await this.#find(admin, id);
    this.#assertGrantable(admin, old.scopes.map(parseFlatScope));
    const rotated = await this.#service.rotate(old.id, {
      gracePeriodMs: input.gracePeriodMs,
      name: input.name,
      expiresAt: input.expiresAt === undefined ? undefined : new Date(input.expiresAt),
      allowedIpCidrs: input.allowedIpCidrs,
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

  /** Revokes a key of the admin's tenant (idempotent) and returns its public view. */
  async revoke(admin: ApiKeyContext, id: string): Promise<PublicKeyView> {
    const record = await this.#find(admin, id);
    await this.#service.revoke(record.id);
    return this.get(admin, record.id);
  }

  async #find(admin: ApiKeyContext, id: string): Promise<ApiKeyRecord> {
    const record = await this.#storage.findById(id);
    if (record === null || record.tenantId !== admin.tenantId) {
      throw new ApiKeyOperationError("api_key_record_not_found");
    }
    return record;
  }

  #assertGrantable(admin: ApiKeyContext, scopes: readonly Scope[]): void {
    const missing = scopes
      .filter(({ resource, level }) => !scopeSatisfies(admin.scopes, resource, level))
      .map(({ resource, level }) => `${resource}:${level}`);
    if (missing.length > 0) {
      throw new ForbiddenException({
        code: SCOPE_NOT_GRANTABLE,
        message: "The admin key cannot grant scopes it does not hold",
        details: { notGrantable: missing, adminScopes: [...admin.scopes] },
      });
    }
  }
}
