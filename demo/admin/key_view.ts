/**
 * Builds the public view of a key record (`PublicKeyView`), framework-free,
 * for both demo servers: the fields to keep are listed, so `hash`,
 * `pepperVersion` and any field a storage adds later never leave the server.
 *
 * @module
 */
import type { ApiKeyRecord } from "../../api_keys/mod.ts";
import type { KeyStatus, PublicKeyView } from "./public-key-view.ts";

const iso = (date: Date | null): string | null => date === null ? null : date.toISOString();

/** The condition of `record` at `now`; revocation wins, then expiry, then rotation. */
export function keyStatus(record: ApiKeyRecord, now: Date): KeyStatus {
  if (record.revokedAt !== null) return "revoked";
  if (record.expiresAt !== null && record.expiresAt.getTime() <= now.getTime()) return "expired";
  if (record.rotatedAt !== null || record.replacedByKeyId !== null) return "rotated";
  return "active";
}

/**
 * Copies the public fields of `record`.
 *
 * @example
 * ```ts
 * import type { ApiKeyRecord } from "../../api_keys/mod.ts";
 * import { toPublicKeyView } from "./key_view.ts";
 * declare const record: ApiKeyRecord;
 * "hash" in toPublicKeyView(record, new Date()); // false
 * ```
 */
export function toPublicKeyView(record: ApiKeyRecord, now: Date): PublicKeyView {
  return {
    id: record.id,
    tenantId: record.tenantId,
    name: record.name,
    environment: record.environment,
    prefix: record.prefix,
    scopes: [...record.scopes],
    allowedIpCidrs: [...(record.allowedIpCidrs ?? [])],
    status: keyStatus(record, now),
    lastUsedAt: iso(record.lastUsedAt),
    expiresAt: iso(record.expiresAt),
    revokedAt: iso(record.revokedAt),
    rotatedAt: iso(record.rotatedAt),
    replacedByKeyId: record.replacedByKeyId,
    createdBy: record.createdBy,
    createdAt: record.createdAt.toISOString(),
  };
}
