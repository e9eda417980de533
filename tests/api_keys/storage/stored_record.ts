/**
 * The stored record the storage tests start from (the wrapper's, the in-memory
 * adapter's and the Prisma adapter's): an active live key of tenant `t1`,
 * scope `orders:read`, created at the epoch.
 */
import type { ApiKeyRecord } from "../../../api_keys/types.ts";

/** A valid stored record, `overrides` applied. */
export function storedRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: "k1",
    tenantId: "t1",
    name: "n",
    environment: "live",
    prefix: "AbCdEfGhIjKl",
    hash: "A".repeat(43),
    pepperVersion: 1,
    scopes: ["orders:read"],
    allowedIpCidrs: [],
    lastUsedAt: null,
    expiresAt: null,
    revokedAt: null,
    rotatedAt: null,
    replacedByKeyId: null,
    createdBy: null,
    createdAt: new Date(0),
    ...overrides,
  };
}
