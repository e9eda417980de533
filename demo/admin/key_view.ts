/**
 * Builds the public view of a key (`PublicKeyView`) from the library's
 * `ApiKeySummary`, framework-free, for both demo servers: the summary holds
 * no hash or pepper version, and the fields kept are listed.
 *
 * @module
 */
import type { ApiKeySummary } from "../../api_keys/mod.ts";
import type { PublicKeyView } from "./public_key_view.ts";

const iso = (date: Date | null): string | null => date === null ? null : date.toISOString();

/**
 * Copies the public fields of `summary`, dates as ISO strings.
 *
 * @example
 * ```ts
 * import type { ApiKeySummary } from "../../api_keys/mod.ts";
 * import { toPublicKeyView } from "./key_view.ts";
 * declare const summary: ApiKeySummary;
 * toPublicKeyView(summary).status; // "active", "rotating", "expired" or "revoked"
 * ```
 */
export function toPublicKeyView(summary: ApiKeySummary): PublicKeyView {
  return {
    id: summary.id,
    tenantId: summary.tenantId,
    name: summary.name,
    environment: summary.environment,
    prefix: summary.prefix,
    scopes: [...summary.scopes],
    allowedIpCidrs: [...summary.allowedIpCidrs],
    status: summary.status,
    lastUsedAt: iso(summary.lastUsedAt),
    expiresAt: iso(summary.expiresAt),
    revokedAt: iso(summary.revokedAt),
    rotatedAt: iso(summary.rotatedAt),
    replacedByKeyId: summary.replacedByKeyId,
    createdBy: summary.createdBy,
    createdAt: summary.createdAt.toISOString(),
  };
}
