/**
 * Helpers over `ApiKeyRecord`: reading, copying and list ordering.
 *
 * @module
 */
import type { ApiKeyRecord } from "./types.ts";

function copyDate(date: Date | null): Date | null {
  return date === null ? null : new Date(date.getTime());
}

function isInvalidDate(value: unknown): value is Date {
  return value instanceof Date && Number.isNaN(value.getTime());
}

/**
 * A copy of a stored `expiresAt` as the service reads it. A `Date` that is
 * not a valid date (a bad row, or one written by an older version) counts as
 * expired: it reads as the epoch, 1970-01-01T00:00:00.000Z.
 *
 * @example
 * ```ts
 * import { readExpiresAt } from "./record.ts";
 * readExpiresAt(new Date(Number.NaN))?.getTime(); // 0
 * readExpiresAt(null); // null
 * ```
 */
export function readExpiresAt(expiresAt: Date | null): Date | null {
  return isInvalidDate(expiresAt) ? new Date(0) : copyDate(expiresAt);
}

/**
 * A deep copy of a record (arrays and dates are new objects; `expiresAt` as
 * `readExpiresAt` reads it).
 *
 * @example
 * ```ts
 * import { copyApiKeyRecord } from "./record.ts";
 * import type { ApiKeyRecord } from "./types.ts";
 * declare const record: ApiKeyRecord;
 * const copy = copyApiKeyRecord(record);
 * ```
 */
export function copyApiKeyRecord(record: ApiKeyRecord): ApiKeyRecord {
  const copy: ApiKeyRecord = {
    ...record,
    scopes: [...record.scopes],
    lastUsedAt: copyDate(record.lastUsedAt),
    expiresAt: readExpiresAt(record.expiresAt),
    revokedAt: copyDate(record.revokedAt),
    rotatedAt: copyDate(record.rotatedAt),
    createdAt: new Date(record.createdAt.getTime()),
  };
  if (record.allowedIpCidrs !== undefined) copy.allowedIpCidrs = [...record.allowedIpCidrs];
  return copy;
}

/**
 * List order: `createdAt` ascending, then `id`.
 *
 * @example
 * ```ts
 * import { compareApiKeyRecords } from "./record.ts";
 * import type { ApiKeyRecord } from "./types.ts";
 * declare const records: ApiKeyRecord[];
 * records.sort(compareApiKeyRecords);
 * ```
 */
export function compareApiKeyRecords(a: ApiKeyRecord, b: ApiKeyRecord): number {
  const byTime = a.createdAt.getTime() - b.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function isDateOrNull(value: unknown): boolean {
  return value === null || (value instanceof Date && !Number.isNaN(value.getTime()));
}

function isStringArray(value: unknown): boolean {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/**
 * Whether `value` has the shape of an `ApiKeyRecord` (every field of the right
 * type, every date valid). Stored values go through `readApiKeyRecord`.
 *
 * @example
 * ```ts
 * import { isApiKeyRecord } from "./record.ts";
 * isApiKeyRecord({ id: "k1" }); // false
 * ```
 */
export function isApiKeyRecord(value: unknown): value is ApiKeyRecord {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Record<string, unknown>;
  return typeof r.id === "string" && typeof r.tenantId === "string" &&
    typeof r.name === "string" && (r.environment === "live" || r.environment === "test") &&
    typeof r.prefix === "string" && typeof r.hash === "string" &&
    Number.isSafeInteger(r.pepperVersion) && isStringArray(r.scopes) &&
    (r.allowedIpCidrs === undefined || isStringArray(r.allowedIpCidrs)) &&
    isDateOrNull(r.lastUsedAt) && isDateOrNull(r.expiresAt) && isDateOrNull(r.revokedAt) &&
    isDateOrNull(r.rotatedAt) &&
    (r.replacedByKeyId === null || typeof r.replacedByKeyId === "string") &&
    (r.createdBy === null || typeof r.createdBy === "string") &&
    r.createdAt instanceof Date && !Number.isNaN(r.createdAt.getTime());
}

/**
 * A stored value as the service reads it: the record when it has the shape of
 * an `ApiKeyRecord` once an unreadable `expiresAt` is read as expired
 * (`readExpiresAt`; the result is then a shallow copy), else `null`. Storage
 * adapters and the service use it to refuse malformed rows.
 *
 * @example
 * ```ts
 * import { readApiKeyRecord } from "./record.ts";
 * readApiKeyRecord({ id: "k1" }); // null
 * ```
 */
export function readApiKeyRecord(value: unknown): ApiKeyRecord | null {
  if (typeof value !== "object" || value === null) return null;
  const { expiresAt } = value as { expiresAt?: unknown };
  const record = isInvalidDate(expiresAt)
    ? { ...value, expiresAt: readExpiresAt(expiresAt) }
    : value;
  return isApiKeyRecord(record) ? record : null;
}
