/**
 * `ApiKeyStorage` over a Prisma-shaped client (`apiKey.create/findMany/
 * findUnique/update`, optional `$transaction`). No Prisma import: any object of
 * that shape works. Expects a model `ApiKey` with the `ApiKeyRecord` fields,
 * `id` and `prefix` unique, `scopes` and `allowedIpCidrs` string lists; the
 * `hashScheme` field is optional (a model without it keeps working); the
 * models `ApiKeyExpiryNotice` and `ApiKeyRotationWait` when the options name
 * their delegates.
 *
 * @module
 */
import { ApiKeyOperationError } from "../errors.ts";
import { CURRENT_HASH_SCHEME } from "../hasher.ts";
import { nullAbsentFields } from "./_answers.ts";
import { epochMsOf, instantOf, sqlInstant } from "./_sql_instant.ts";
import { acceptedUntilMs } from "../_accepted_until.ts";
import { MAX_API_KEY_INSTANT_MS } from "../_input.ts";
import type {
  ApiKeyRecordPage,
  ApiKeyRotationWait,
  ApiKeyStorage,
  ApiKeyStorageRotateResult,
  ListApiKeyPageOptions,
  ListExpiringApiKeysOptions,
} from "./types.ts";
import type {
  ApiKeyCredits,
  ApiKeyHashCount,
  ApiKeyHashReplacement,
  ApiKeyRecord,
  ApiKeyRecordInput,
  ListApiKeysOptions,
  RotateApiKeyStorageInput,
} from "../types.ts";
import {
  API_KEY_USAGE_REFUSALS,
  type ApiKeyUsageBucket,
  type ApiKeyUsageKeysReadQuery,
  type ApiKeyUsageReadQuery,
  type ApiKeyUsageRow,
} from "../metering/usage.ts";
import { MAX_USAGE_COUNT } from "../metering/_usage_counts.ts";
import {
  APPEND_AUDIT_SQL,
  PRUNE_AUDIT_SQL,
  readAuditParams,
  readAuditSql,
  toAuditReadAnswer,
  toStoredAuditRecord,
} from "../audit/_sql.ts";
import type { AuditAppend, AuditReadQuery, StoredAuditRecord } from "../audit/types.ts";
import type { AuditReadAnswer } from "./types.ts";

/** The `apiKey` delegate methods the adapter uses (as Prisma Client generates them). */
export interface PrismaApiKeyDelegate {
  /** Inserts a row. */
  create(args: { data: Record<string, unknown> }): Promise<unknown>;
  /** Lists rows (at most `take` when given). */
  findMany(args: {
    where: Record<string, unknown>;
    orderBy: Record<string, "asc" | "desc">[];
    take?: number;
  }): Promise<unknown[]>;
  /** Finds a row by a unique field. */
  findUnique(args: { where: { id: string } | { prefix: string } }): Promise<unknown | null>;
  /** Updates one row; rejects with code `P2025` when none matches `where`. */
  update(args: { where: Record<string, unknown>; data: Record<string, unknown> }): Promise<unknown>;
  /**
   * The model's field references (a generated delegate has them): `rotatedAt`
   * lets a page's status filters compare `expiresAt` with it; without it,
   * no `listPageByTenant`.
   */
  readonly fields?: { readonly rotatedAt?: unknown };
}

/**
 * A Prisma-shaped client: an `apiKey` delegate and, optionally, interactive
 * `$transaction`. A client that also has `$queryRawUnsafe` (see
 * `PrismaUsageClient`; a `PrismaClient` has it) turns on `findTenantPool`
 * and `setTenantPool` with `storesCredits`.
 */
export interface PrismaApiKeyClient {
  /** The `ApiKey` model delegate. */
  apiKey: PrismaApiKeyDelegate;
  /** Interactive transaction (used by `rotate` when present; by every audited change). */
  $transaction?: <T>(fn: (tx: PrismaTransactionClient) => Promise<T>) => Promise<T>;
}

/** The client an interactive transaction hands its function (raw SQL only with the `audit` option). */
export interface PrismaTransactionClient {
  /** The `ApiKey` model delegate, inside the transaction. */
  apiKey: PrismaApiKeyDelegate;
  /** Runs a query with positional parameters inside the transaction; answers its rows. */
  $queryRawUnsafe?(query: string, ...values: unknown[]): Promise<unknown>;
}

/**
 * The `updatedAt` of a row's copy of its tenant's credit pool, as the JSON
 * column holds it (an ISO string; null without a pool): the expression the
 * index of migration `0018_api_key_tenant_pool` is built on, written the same.
 */
const POOL_UPDATED_AT =
  `(CASE WHEN credits->>'sharedBy' = 'tenant' THEN credits->>'updatedAt' ELSE credits->'pool'->>'updatedAt' END)`;

/** `findTenantPool`: `$1` the tenant; the id of the row holding the newest pool copy. */
const TENANT_POOL_SQL = `SELECT id FROM api_keys
WHERE tenant_id = $1 AND ${POOL_UPDATED_AT} IS NOT NULL
ORDER BY ${POOL_UPDATED_AT} DESC, created_at DESC, id
LIMIT 1`;

/**
 * `setTenantPool`: `$1` the tenant, `$2` remaining, `$3` updatedAt (ISO); the
 * pool copy of each row spending it, in one statement; answers their prefixes.
 */
const SET_TENANT_POOL_SQL = `UPDATE api_keys SET credits = CASE
  WHEN credits->>'sharedBy' = 'tenant'
    THEN credits || jsonb_build_object('remaining', $2::float8, 'updatedAt', $3::text)
  ELSE jsonb_set(credits, '{pool}',
    (credits->'pool') || jsonb_build_object('remaining', $2::float8, 'updatedAt', $3::text))
END
WHERE tenant_id = $1 AND ${POOL_UPDATED_AT} IS NOT NULL
RETURNING prefix`;

/**
 * `ready`, first: `$1` an instant as ISO text, read back; the session's
 * DateStyle and time zone; and an instant (epoch ms as text: no float's
 * digits lost) at which the zone's offset is not 0, and the same a day before
 * and after (never by a change of offset, whose skipped hour reads a time sent
 * without its offset as itself): 1800, when most zones kept their local mean
 * time, else one from a year before now to 30 years after, a day apart; or
 * `null`: none, the zone is UTC.
 */
const SESSION_SQL = `SELECT $1::text::timestamptz AS back,
  left(current_setting('DateStyle'), 64) AS style, left(current_setting('TimeZone'), 64) AS zone,
  (SELECT floor(extract(epoch FROM t) * 1000)::bigint::text
   FROM (SELECT timestamptz '1800-01-15 12:00:00+00' AS t UNION ALL
     SELECT t FROM generate_series(now() - interval '1 year', now() + interval '30 years',
       interval '1 day') t) probes
   WHERE extract(timezone FROM t) <> 0
     AND extract(timezone FROM t - interval '1 day') = extract(timezone FROM t)
     AND extract(timezone FROM t + interval '1 day') = extract(timezone FROM t) LIMIT 1) AS shifted`;
/**
 * `ready`, then: `$1` that instant as a `Date` (as the client sends every instant it writes), `$2`
 * as ISO text: whether it arrived as itself, and whether the zone's offset there is not 0.
 */
const INSTANT_SQL = `SELECT $1::timestamptz = $2::text::timestamptz AS exact,
  extract(timezone FROM $2::text::timestamptz) <> 0 AS moved`;
/** The instant `ready` reads back. */
const PROBE = new Date(Date.UTC(2031, 5, 15, 12));
/** How to set a session parameter, in the errors of `ready`. */
const SET_IT = (option: string, role: string) =>
  `Set it on the adapter's connection string (?options=-c%20${option}) or for the app's role ` +
  `(ALTER ROLE ... SET ${role}); docs/operations.md, "Connection URLs and schemas"`;

/** The first row of a raw answer, as far as it is one (a stubbed client may answer anything). */
function firstRow(rows: unknown): Record<string, unknown> | undefined {
  const row = Array.isArray(rows) ? rows[0] : undefined;
  return typeof row === "object" && row !== null ? row as Record<string, unknown> : undefined;
}

/** Rows per `findMany` page of `countHashes`. */
const COUNT_PAGE = 1_000;

/**
 * The `apiKeyExpiryNotice` delegate methods the expiry notices use (model
 * `ApiKeyExpiryNotice`: `keyId` its id, `thresholdMs` a `BigInt`,
 * `claimedAt`). Both answer a count and never fail for a lost race, which
 * keeps a losing claim as cheap as a winning one.
 */
export interface PrismaExpiryNoticeDelegate {
  /** Inserts rows; with `skipDuplicates`, a taken `keyId` is skipped (`ON CONFLICT DO NOTHING`). */
  createMany(
    args: { data: { keyId: string; thresholdMs: number; claimedAt: Date }[]; skipDuplicates: true },
  ): Promise<unknown>;
  /** Updates the rows matching `where`, in one statement; answers `{ count }`. */
  updateMany(args: {
    where: { keyId: string; thresholdMs: { gt: number } };
    data: { thresholdMs: number; claimedAt: Date };
  }): Promise<unknown>;
}

/**
 * The `apiKeyRotationWait` delegate methods the rotations that wait use
 * (model `ApiKeyRotationWait`: `newKeyId` its id, `oldKeyId`,
 * `gracePeriodMs` a `BigInt`, `waitEndsAt`).
 */
export interface PrismaRotationWaitDelegate {
  /** Inserts a row. */
  create(args: {
    data: { newKeyId: string; oldKeyId: string; gracePeriodMs: number; waitEndsAt: Date };
  }): Promise<unknown>;
  /** Finds the row of `newKeyId`. */
  findUnique(args: { where: { newKeyId: string } }): Promise<unknown | null>;
}

/**
 * What the usage capability runs its SQL through (a `PrismaClient` has both):
 * one statement per `recordUsage` or `readUsage` call, over the tables
 * `api_key_usage` (migration `0010_api_key_usage`) and `api_keys`.
 */
export interface PrismaUsageClient {
  /** Runs a statement with positional parameters (`$1`, ...); answers the rows changed. */
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  /** Runs a query with positional parameters; answers its rows. */
  $queryRawUnsafe(query: string, ...values: unknown[]): Promise<unknown>;
}

/** The `api_key_usage` column of each refusal code (`api_key_revoked` → `revoked`). */
const USAGE_COLUMNS = API_KEY_USAGE_REFUSALS.map((code) => code.slice("api_key_".length));
const COUNT_COLUMNS = ["accepted", ...USAGE_COLUMNS, "cost"];

/**
 * `recordUsage` in one statement: the rows (a JSON array, `$1`) are added to
 * their (key, hour) with `ON CONFLICT … DO UPDATE`, in (key, hour) order, and
 * the keys' `last_used_at` raised in a data-modifying CTE, skipping rows
 * already as late. With `batch`, the batch id (`$2`) is inserted first into
 * `api_key_usage_batches` (migration 0013) with `ON CONFLICT DO NOTHING`, and
 * the rows count only when it was: a batch already recorded changes nothing,
 * and a retry running while the first write is still open waits for it on
 * the id's key, then skips.
 */
function recordUsageSql(batch: boolean): string {
  const rows = `SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(key_id text, tenant_id text,
    bucket timestamptz, ${COUNT_COLUMNS.map((c) => `${c} bigint`).join(", ")},
    last_used_at timestamptz)`;
  return `WITH ${
    batch
      ? `batch AS (
  INSERT INTO api_key_usage_batches (id) VALUES ($2::text) ON CONFLICT (id) DO NOTHING RETURNING id
), v AS (${rows} WHERE EXISTS (SELECT 1 FROM batch))`
      : `v AS (${rows})`
  }, touched AS (
  UPDATE api_keys k SET last_used_at = t.at
  FROM (SELECT key_id, max(last_used_at) AS at FROM v WHERE last_used_at IS NOT NULL
        GROUP BY key_id ORDER BY key_id) t
  WHERE k.id = t.key_id AND (k.last_used_at IS NULL OR k.last_used_at < t.at)
)
INSERT INTO api_key_usage (key_id, tenant_id, bucket, ${COUNT_COLUMNS.join(", ")})
SELECT key_id, tenant_id, bucket, ${COUNT_COLUMNS.join(", ")} FROM v ORDER BY key_id, bucket
ON CONFLICT (key_id, bucket) DO UPDATE SET ${
    COUNT_COLUMNS.map((c) =>
      `${c} = ${atMost(`api_key_usage.${c}::numeric + EXCLUDED.${c}`)}::bigint`
    )
      .join(", ")
  }`;
}

/** The SQL of `sum`, at most `MAX_USAGE_COUNT` (summed as `numeric`: never out of range). */
function atMost(sum: string): string {
  return `LEAST(${sum}, ${MAX_USAGE_COUNT})`;
}

/** The summed count columns of a read, each at most `MAX_USAGE_COUNT`. */
const SUMMED_COUNTS = COUNT_COLUMNS.map((c) => `${atMost(`sum(${c})`)}::float8 AS ${c}`).join(", ");

/**
 * The bucket of a read: the stored hour, or for a day read its UTC day's start (whatever the
 * session's time zone: truncated as a UTC wall time, then read back as UTC).
 */
const BUCKET_OF = {
  hour: "bucket",
  day: "(date_trunc('day', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')",
} as const;

/** `readUsage` by `granularity`: `$1` tenant, `$2`/`$3` the window, `$4` a key id or null. */
function readUsageSql(granularity: keyof typeof BUCKET_OF): string {
  const bucket = BUCKET_OF[granularity];
  return `SELECT ${epochMsOf(bucket)} AS bucket, ${SUMMED_COUNTS} FROM api_key_usage
WHERE tenant_id = $1 AND bucket >= $2::text::timestamptz AND bucket < $3::text::timestamptz
  AND ($4::text IS NULL OR key_id = $4::text)
GROUP BY ${bucket} ORDER BY ${bucket}`;
}

/** `readUsageOfKeys` by `granularity`: `$1` tenant, `$2`/`$3` the window, `$4` the key ids (a text array). */
function readUsageOfKeysSql(granularity: keyof typeof BUCKET_OF): string {
  const bucket = BUCKET_OF[granularity];
  return `SELECT key_id, ${epochMsOf(bucket)} AS bucket, ${SUMMED_COUNTS} FROM api_key_usage
WHERE tenant_id = $1 AND bucket >= $2::text::timestamptz AND bucket < $3::text::timestamptz
  AND key_id = ANY($4::text[])
GROUP BY key_id, ${bucket} ORDER BY key_id, ${bucket}`;
}

/** The read statements, by granularity. */
const READ_USAGE_SQL = { hour: readUsageSql("hour"), day: readUsageSql("day") };
const READ_USAGE_OF_KEYS_SQL = { hour: readUsageOfKeysSql("hour"), day: readUsageOfKeysSql("day") };

/** A `readUsage` answer row as a bucket (checked by the service). */
function toUsageBucket(row: unknown): ApiKeyUsageBucket {
  const r = row as Record<string, unknown>;
  const refused = Object.fromEntries(
    API_KEY_USAGE_REFUSALS.map((code, i) => [code, toNumber(r[USAGE_COLUMNS[i]])]),
  );
  return {
    start: instantOf(r.bucket),
    accepted: toNumber(r.accepted),
    refused,
    cost: toNumber(r.cost),
  } as ApiKeyUsageBucket;
}

/**
 * Extra delegates of `PrismaApiKeyStorage`, each turning on a capability
 * (see `ApiKeyStorage`); their tables are created by the migration
 * `prisma/migrations/0004_api_key_expiry`.
 */
export interface PrismaApiKeyStorageOptions {
  /** `prisma.apiKeyExpiryNotice`: turns on `listExpiring` and `claimExpiryNotice`. */
  expiryNotices?: PrismaExpiryNoticeDelegate;
  /** `prisma.apiKeyRotationWait`: turns on `saveRotationWait` and `findRotationWait`. */
  rotationWaits?: PrismaRotationWaitDelegate;
  /**
   * `true` when the model has the `layout` column (migration
   * `0006_api_key_layout`): turns on `storesLayout`.
   */
  storesLayout?: boolean;
  /**
   * `true` when the model has the `rateLimits` JSON column (migration
   * `0008_api_key_rate_limits`): turns on `storesRateLimits`.
   */
  storesRateLimits?: boolean;
  /**
   * `true` with `storesRateLimits` when the model has the `rateLimitKeyId`
   * column (migration `0014_api_key_rate_limit_key_id`): turns on
   * `storesRateLimitKeyId`, so a rotated key shares its chain's windows.
   */
  storesRateLimitKeyId?: boolean;
  /**
   * `true` when the model has the `credits` JSON column (migration
   * `0011_api_key_credits`): turns on `storesCredits` and `setCredits`.
   */
  storesCredits?: boolean;
  /** The client itself (`prisma`): turns on `recordUsage` and `readUsage` (raw SQL). */
  usage?: PrismaUsageClient;
  /**
   * `true` with `usage` when the table `api_key_usage_batches` exists
   * (migration `0013_api_key_usage_batches`): turns on `usageBatches`, so a
   * usage write retried after the storage deadline is counted once.
   */
  usageBatches?: boolean;
  /**
   * The client itself (`prisma`), with interactive `$transaction`, when the
   * tables and function of migration `0017_api_key_audit` exist: turns on
   * `appendAudit`, `readAudit` and `pruneAudit`; each audited change runs in
   * a transaction with one more statement (`api_key_audit_append`).
   */
  audit?: PrismaUsageClient;
}

/** Appends `audit` inside the transaction of `tx` (one statement). */
async function appendIn(tx: PrismaTransactionClient, audit: AuditAppend): Promise<void> {
  await tx.$queryRawUnsafe!(APPEND_AUDIT_SQL, audit.tenantId, audit.body);
}

/**
 * The `where` of a page's status at `now`, environment and `q` (see
 * `ListApiKeyPageOptions`); `rotatedAt` the field reference of the column.
 * Expired as `acceptedUntilMs` has it: `expiresAt` at or before `now`, or at
 * or before `rotatedAt` (a rotation without grace; NULL compares false).
 */
/** The last instant a stored expiry is read as; a later one is unreadable. */
const LAST_INSTANT = new Date(MAX_API_KEY_INSTANT_MS);

function pageFilters(options: ListApiKeyPageOptions, rotatedAt: unknown): Record<string, unknown> {
  const { status, now, environment, q } = options;
  // An expiry past what a Date holds (`infinity`) cannot be read: expired (`acceptedUntilMs`).
  const ended = {
    OR: [{ expiresAt: { lte: now } }, { expiresAt: { lte: rotatedAt } }, {
      expiresAt: { gt: LAST_INSTANT },
    }],
  };
  const unexpired = {
    OR: [{ expiresAt: null }, {
      AND: [
        { expiresAt: { gt: now, lte: LAST_INSTANT } },
        { OR: [{ rotatedAt: null }, { expiresAt: { gt: rotatedAt } }] },
      ],
    }],
  };
  const rotating = { OR: [{ rotatedAt: { not: null } }, { replacedByKeyId: { not: null } }] };
  const byStatus: Record<typeof status, Record<string, unknown>[]> = {
    all: [],
    unrevoked: [{ revokedAt: null }],
    revoked: [{ revokedAt: { not: null } }],
    expired: [{ revokedAt: null }, ended],
    rotating: [{ revokedAt: null }, unexpired, rotating],
    active: [{ revokedAt: null }, unexpired, { rotatedAt: null }, { replacedByKeyId: null }],
  };
  const and = [...byStatus[status]];
  if (environment !== null) and.push({ environment });
  if (q !== null) {
    // Prisma passes `contains` and `startsWith` to LIKE as they are: its wildcards escaped here.
    const text = q.replace(/[\\%_]/g, "\\$&");
    and.push({
      OR: [{ name: { contains: text, mode: "insensitive" } }, { prefix: { startsWith: text } }],
    });
  }
  return { AND: and };
}

function hasCode(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null &&
    (error as { code?: unknown }).code === code;
}

function isRecordNotFound(error: unknown): boolean {
  return hasCode(error, "P2025");
}

/** Throws a `TypeError` unless `delegate` has each of `methods`. */
function requireDelegate(delegate: unknown, methods: string[], label: string): void {
  for (const method of methods) {
    if (typeof (delegate as Record<string, unknown> | undefined)?.[method] !== "function") {
      throw new TypeError(`PrismaApiKeyStorage ${label} is missing method ${method}`);
    }
  }
}

/** A `BigInt` column as a number (Prisma reads `BigInt` as `bigint`). */
function toNumber(value: unknown): unknown {
  return typeof value === "bigint" ? Number(value) : value;
}

/** Credits as the JSON column holds them (`updatedAt` an ISO string). */
function creditsColumn(credits: ApiKeyCredits): Record<string, unknown> {
  const { pool } = credits;
  return {
    ...credits,
    updatedAt: credits.updatedAt.toISOString(),
    ...(pool === undefined ? {} : { pool: { ...pool, updatedAt: pool.updatedAt.toISOString() } }),
  };
}

/** Credits as read from the JSON column (`updatedAt` strings read as Dates; a malformed one is left for the record check). */
function creditsOfColumn(column: Record<string, unknown>): ApiKeyCredits {
  const dated = (value: Record<string, unknown>) =>
    typeof value.updatedAt === "string"
      ? { ...value, updatedAt: new Date(value.updatedAt) }
      : value;
  const credits = dated(column);
  const pool = column.pool;
  return (typeof pool === "object" && pool !== null
    ? { ...credits, pool: dated(pool as Record<string, unknown>) }
    : credits) as unknown as ApiKeyCredits;
}

/**
 * A row to create: `hashScheme` written only when it is not the default (an
 * older model lacks it), `layout`, `rateLimits`, `rateLimitKeyId` and
 * `credits` only with their capability.
 */
function toRow(record: ApiKeyRecordInput, storage: ApiKeyStorage): Record<string, unknown> {
  const { hashScheme, layout, rateLimits, rateLimitKeyId, credits, ...fields } = record;
  const row: Record<string, unknown> = {
    ...fields,
    allowedIpCidrs: [...(record.allowedIpCidrs ?? [])],
  };
  if (hashScheme !== undefined && hashScheme !== CURRENT_HASH_SCHEME) row.hashScheme = hashScheme;
  if (storage.storesLayout && layout !== undefined) row.layout = layout;
  if (storage.storesRateLimits && rateLimits !== undefined) row.rateLimits = rateLimits;
  if (storage.storesRateLimitKeyId && rateLimitKeyId !== undefined) {
    row.rateLimitKeyId = rateLimitKeyId;
  }
  if (storage.storesCredits && credits !== undefined) row.credits = creditsColumn(credits);
  return row;
}

/**
 * The record fields of a row (a row may have more columns), a null allowlist
 * read as an empty one, a missing or default `hashScheme` read as absent (the
 * default), a null `layout` as absent (the current layout), a missing nullable
 * column as null. Not validated: the service checks every record it reads.
 */
function toRecord(row: unknown): ApiKeyRecord {
  if (typeof row !== "object" || row === null) return row as ApiKeyRecord;
  const r = row as ApiKeyRecord;
  const record: ApiKeyRecord = {
    id: r.id,
    tenantId: r.tenantId,
    name: r.name,
    environment: r.environment,
    prefix: r.prefix,
    hash: r.hash,
    pepperVersion: r.pepperVersion,
    scopes: r.scopes,
    allowedIpCidrs: r.allowedIpCidrs ?? [],
    lastUsedAt: r.lastUsedAt,
    expiresAt: r.expiresAt,
    revokedAt: r.revokedAt,
    rotatedAt: r.rotatedAt,
    replacedByKeyId: r.replacedByKeyId,
    createdBy: r.createdBy,
    createdAt: r.createdAt,
  };
  nullAbsentFields(record as unknown as Record<string, unknown>);
  const scheme = r.hashScheme as unknown;
  if (scheme !== undefined && scheme !== null && scheme !== CURRENT_HASH_SCHEME) {
    record.hashScheme = scheme as ApiKeyRecord["hashScheme"];
  }
  const layout = (row as { layout?: unknown }).layout;
  if (layout !== undefined && layout !== null) record.layout = layout as string;
  const rateLimits = (row as { rateLimits?: unknown }).rateLimits;
  if (rateLimits !== undefined && rateLimits !== null) {
    record.rateLimits = rateLimits as ApiKeyRecord["rateLimits"];
  }
  const rateLimitKeyId = (row as { rateLimitKeyId?: unknown }).rateLimitKeyId;
  if (rateLimitKeyId !== undefined && rateLimitKeyId !== null) {
    record.rateLimitKeyId = rateLimitKeyId as string;
  }
  const credits = (row as { credits?: unknown }).credits;
  if (typeof credits === "object" && credits !== null) {
    record.credits = creditsOfColumn(credits as Record<string, unknown>);
  } else if (credits !== undefined && credits !== null) {
    record.credits = credits as ApiKeyCredits;
  }
  return record;
}

/**
 * Storage over a Prisma-shaped client, using only the spec's delegate calls
 * (`create`, `findMany`, `findUnique`, `update`, optional `$transaction`).
 * Capabilities: `markRevokedIfActive`, `replaceHash`, `countHashes`,
 * `lowerExpiry`, `replaceNameForTenant`, `rotateChecksName`, `listPageByTenant` (with the delegate's `fields`), `findByReplacement`, `findManyByIds` and the tenant-bound operations; the
 * expiry notices, rotation waits (migration `0004_api_key_expiry`), `storesLayout` (`0006`),
 * `storesRateLimits` (`0008`), `storesRateLimitKeyId` (`0014`), `storesCredits` (`0011`; with
 * `$queryRawUnsafe` also `findTenantPool` and `setTenantPool`, index `0018`), `recordUsage`/`readUsage` (`usage`, raw
 * SQL over `0010`) and `usageBatches` (`0013`) only
 * through `PrismaApiKeyStorageOptions`; never `peekByPrefix` (a shared
 * database changes behind in-process copies). Without the `hashScheme`
 * column (`0003`) rows read as the default scheme.
 *
 * `rotate` inserts the new row, then updates the old one where it is neither
 * rotated nor revoked, and still named `expectedName` when given (`P2025`: it
 * answers `"not_rotatable"`), in one transaction
 * with `$transaction`. Without it, a failed update is compensated by revoking
 * the new row (whose key was never handed out); if that fails too, the new
 * row stays listed as an active key nobody holds.
 *
 * @example
 * ```ts
 * import { PrismaApiKeyStorage } from "./prisma.ts";
 * import type { PrismaApiKeyClient } from "./prisma.ts";
 * declare const prisma: PrismaApiKeyClient;
 * const storage = new PrismaApiKeyStorage(prisma);
 * // With a generated PrismaClient, also the expiry notices and the rotations that wait:
 * // new PrismaApiKeyStorage(prisma, {
 * //   expiryNotices: prisma.apiKeyExpiryNotice, rotationWaits: prisma.apiKeyRotationWait,
 * // });
 * ```
 */
export class PrismaApiKeyStorage implements ApiKeyStorage {
  readonly #client: PrismaApiKeyClient;
  /** Capability: `rotate` given `expectedName` adds `name` to the old row's conditional update. */
  readonly rotateChecksName = true;
  /** Capability, with the `storesLayout` option only: the `layout` column is written and read. */
  readonly storesLayout?: boolean;
  /** Capability, with the `storesRateLimits` option only: the `rateLimits` column is written and read. */
  readonly storesRateLimits?: boolean;
  /** Capability, with the `storesRateLimitKeyId` option only: the `rateLimitKeyId` column is written and read. */
  readonly storesRateLimitKeyId?: boolean;
  /** Capability, with the `storesCredits` option only: the `credits` column is written and read. */
  readonly storesCredits?: boolean;
  /** Capability, with the `storesCredits` option only: `update` of the `credits` column. */
  readonly setCredits?: (id: string, credits: ApiKeyCredits) => Promise<void>;
  /**
   * Capability, with the `storesCredits` option on a client with
   * `$queryRawUnsafe`: one `SELECT` of the row holding the tenant's newest
   * pool copy (index: migration `0018_api_key_tenant_pool`), then `findUnique`.
   */
  readonly findTenantPool?: (tenantId: string) => Promise<ApiKeyRecord | null>;
  /**
   * Capability, likewise: one `UPDATE … RETURNING prefix` of the pool copy
   * of every row of the tenant spending it.
   */
  readonly setTenantPool?: (
    tenantId: string,
    remaining: number,
    updatedAt: Date,
  ) => Promise<string[]>;
  /**
   * Capability, with a client that has `$queryRawUnsafe` (a generated
   * `PrismaClient`): checks the session the client's instants cross. A
   * DateStyle other than ISO (the client reads instants back as invalid dates)
   * is a `TypeError`; so is a time zone whose offset is not 0 at some instant
   * (in 1800, or from a year ago to 30 years ahead), when an instant sent there
   * does not arrive as itself: a driver adapter (`@prisma/adapter-pg` 7,
   * prisma/orm#28629) sends it without its offset, so every instant Prisma
   * writes is stored moved by the zone's offset, while this storage's raw
   * statements store true ones. Each error names the setting and the fix.
   */
  readonly ready?: () => Promise<void>;
  /**
   * Capability, with the `expiryNotices` option only: one page of unrevoked
   * keys expiring in the window (`apiKey.findMany` with `take`).
   */
  readonly listExpiring?: (options: ListExpiringApiKeysOptions) => Promise<ApiKeyRecord[]>;
  /**
   * Capability, with the `expiryNotices` option only: `createMany` of the
   * key's row skipping a taken key, else a conditional `updateMany` `where:
   * { keyId, thresholdMs: { gt: thresholdMs } }`; a count of 1 wins.
   */
  readonly claimExpiryNotice?: (id: string, thresholdMs: number, at: Date) => Promise<boolean>;
  /** Capability, with the `rotationWaits` option only: `create` of the wait's row. */
  readonly saveRotationWait?: (wait: ApiKeyRotationWait) => Promise<void>;
  /** Capability, with the `rotationWaits` option only: `findUnique` by `newKeyId`. */
  readonly findRotationWait?: (newKeyId: string) => Promise<ApiKeyRotationWait | null>;
  /** Capability, with the `usage` option only: one `INSERT … ON CONFLICT` statement per call. */
  readonly recordUsage?: (rows: readonly ApiKeyUsageRow[], batchId?: string) => Promise<void>;
  /** Capability, with the `usageBatches` option only: each batch id is recorded once (`0013`). */
  readonly usageBatches?: boolean;
  /** Capability, with the `usage` option only: one `SELECT … GROUP BY bucket` (by UTC day for a day read). */
  readonly readUsage?: (query: ApiKeyUsageReadQuery) => Promise<ApiKeyUsageBucket[]>;
  /** Capability, with the `usage` option only: one `SELECT … GROUP BY key_id, bucket` (likewise). */
  readonly readUsageOfKeys?: (query: ApiKeyUsageKeysReadQuery) => Promise<ApiKeyUsageBucket[][]>;
  /** Capability, with the `audit` option only: one `api_key_audit_append` statement. */
  readonly appendAudit?: (audit: AuditAppend) => Promise<StoredAuditRecord>;
  /** Capability, with the `audit` option only: the records and the chain's head (one statement). */
  readonly readAudit?: (query: AuditReadQuery) => Promise<AuditReadAnswer>;
  /** Capability, with the `audit` option only: one statement deleting and re-anchoring. */
  readonly pruneAudit?: (tenantId: string, before: Date) => Promise<number>;
  /**
   * Capability, on a client whose `apiKey` delegate has `fields` (a generated
   * one does): one page of a tenant's records: `findMany` with the filters,
   * the keyset after the cursor and `take` (`last_used_desc` in two: the
   * used keys, then the never-used ones), then one `findMany` of the
   * records replaced by the page's (indexes: migration `0016_api_key_pages`).
   */
  readonly listPageByTenant?: (
    tenantId: string,
    options: ListApiKeyPageOptions,
  ) => Promise<ApiKeyRecordPage>;
  /** Whether the `audit` option is on. */
  readonly #audit: boolean = false;

  /**
   * Wraps `client`; `options` turn on the capabilities that need more than
   * the `apiKey` delegate. Throws a `TypeError` when a delegate lacks a
   * method it needs.
   */
  constructor(client: PrismaApiKeyClient, options: PrismaApiKeyStorageOptions = {}) {
    requireDelegate(
      client?.apiKey,
      ["create", "findMany", "findUnique", "update"],
      "client.apiKey",
    );
    this.#client = client;
    const raw = (client as Partial<PrismaUsageClient>).$queryRawUnsafe;
    if (typeof raw === "function") {
      this.ready = async () => {
        const session = firstRow(await raw.call(client, SESSION_SQL, PROBE.toISOString()));
        const { back, style, zone, shifted } = session ?? {};
        // Not an answer of PostgreSQL's (a client stubbed in an app's tests): unchecked, logged.
        if (typeof style !== "string" || typeof zone !== "string") {
          throw new Error("the session check answered no row");
        }
        if (!(back instanceof Date) || Number.isNaN(back.getTime())) {
          if (!/^ISO\b/.test(style)) {
            throw new TypeError(
              `PrismaApiKeyStorage: the database session's DateStyle is ${style}, not ISO: the ` +
                "Prisma Client reads every instant back as an invalid date (a create fails after " +
                `its row is written). ${SET_IT("DateStyle%3DISO", "datestyle = 'ISO'")}`,
            );
          }
          throw new Error("the session check read an instant back as no date");
        }
        if (shifted === null) return; // the zone is UTC
        const at = new Date(typeof shifted === "string" ? Number(shifted) : NaN);
        if (!Number.isInteger(at.getTime())) {
          throw new Error("the session check answered no instant");
        }
        const { exact, moved } =
          firstRow(await raw.call(client, INSTANT_SQL, at, at.toISOString())) ?? {};
        if (moved !== true || typeof exact !== "boolean") {
          throw new Error("the time zone check answered no row at an instant of another offset");
        }
        if (exact) return; // the client sends each instant with its offset
        throw new TypeError(
          `PrismaApiKeyStorage: the database session's time zone is ${zone}, not UTC: the ` +
            "Prisma Client stores each instant it writes moved by its offset " +
            "(@prisma/adapter-pg, prisma/orm#28629), this storage's raw statements true ones. " +
            SET_IT("TimeZone%3DUTC", "timezone = 'UTC'"),
        );
      };
    }
    const rotatedAt = client.apiKey.fields?.rotatedAt;
    if (rotatedAt !== undefined) {
      this.listPageByTenant = (tenantId, options) => this.#listPage(tenantId, options, rotatedAt);
    }
    const {
      expiryNotices,
      rotationWaits,
      storesLayout,
      storesRateLimits,
      storesRateLimitKeyId,
      storesCredits,
      usage,
      usageBatches,
      audit,
    } = options ?? {};
    for (
      const [name, flag] of Object.entries({
        storesLayout,
        storesRateLimits,
        storesRateLimitKeyId,
        storesCredits,
        usageBatches,
      })
    ) {
      if (flag !== undefined && typeof flag !== "boolean") {
        throw new TypeError(`PrismaApiKeyStorage options.${name} must be a boolean`);
      }
    }
    if (storesLayout === true) this.storesLayout = true;
    if (storesRateLimits === true) this.storesRateLimits = true;
    if (storesRateLimitKeyId === true) {
      if (storesRateLimits !== true) {
        throw new TypeError(
          "PrismaApiKeyStorage options.storesRateLimitKeyId needs options.storesRateLimits",
        );
      }
      this.storesRateLimitKeyId = true;
    }
    if (storesCredits === true) {
      this.storesCredits = true;
      this.setCredits = async (id, credits) => {
        try {
          await client.apiKey.update({ where: { id }, data: { credits: creditsColumn(credits) } });
        } catch (error) {
          if (!isRecordNotFound(error)) throw error;
        }
      };
      const query = (client as Partial<PrismaUsageClient>).$queryRawUnsafe;
      if (typeof query === "function") {
        this.findTenantPool = async (tenantId) => {
          const rows = await query.call(client, TENANT_POOL_SQL, tenantId) as { id: string }[];
          return rows.length === 0 ? null : await this.findById(rows[0].id);
        };
        this.setTenantPool = async (tenantId, remaining, updatedAt) => {
          const rows = await query.call(
            client,
            SET_TENANT_POOL_SQL,
            tenantId,
            remaining,
            sqlInstant(updatedAt),
          ) as { prefix: string }[];
          return rows.map((row) => row.prefix);
        };
      }
    }
    if (expiryNotices !== undefined) {
      requireDelegate(expiryNotices, ["createMany", "updateMany"], "options.expiryNotices");
      this.listExpiring = (listing) => this.#listExpiring(listing);
      this.claimExpiryNotice = (id, thresholdMs, at) =>
        claimNotice(expiryNotices, id, thresholdMs, at);
    }
    if (usageBatches === true && usage === undefined) {
      throw new TypeError("PrismaApiKeyStorage options.usageBatches needs options.usage");
    }
    if (usage !== undefined) {
      requireDelegate(usage, ["$executeRawUnsafe", "$queryRawUnsafe"], "options.usage");
      const once = usageBatches === true;
      if (once) this.usageBatches = true;
      const [plain, batched] = [recordUsageSql(false), recordUsageSql(true)];
      this.recordUsage = async (rows, batchId) => {
        const json = rows.map((row) => {
          const columns: Record<string, unknown> = {
            key_id: row.keyId,
            tenant_id: row.tenantId,
            bucket: row.bucket.toISOString(),
            accepted: row.accepted,
            cost: row.cost,
            last_used_at: row.lastUsedAt?.toISOString() ?? null,
          };
          API_KEY_USAGE_REFUSALS.forEach((code, i) =>
            columns[USAGE_COLUMNS[i]] = row.refused[code]
          );
          return columns;
        });
        // Without a batch id (or the option) the rows are added without the batch check.
        if (!once || batchId === undefined) {
          await usage.$executeRawUnsafe(plain, JSON.stringify(json));
        } else await usage.$executeRawUnsafe(batched, JSON.stringify(json), String(batchId));
      };
      this.readUsage = async ({ tenantId, keyId, from, to, granularity }) => {
        const sql = READ_USAGE_SQL[granularity === "day" ? "day" : "hour"];
        const rows = await usage.$queryRawUnsafe(
          sql,
          tenantId,
          sqlInstant(from),
          sqlInstant(to),
          keyId ?? null,
        );
        return Array.isArray(rows) ? rows.map(toUsageBucket) : rows as ApiKeyUsageBucket[];
      };
      this.readUsageOfKeys = async ({ tenantId, keyIds, from, to, granularity }) => {
        const sql = READ_USAGE_OF_KEYS_SQL[granularity === "day" ? "day" : "hour"];
        const rows = await usage.$queryRawUnsafe(
          sql,
          tenantId,
          sqlInstant(from),
          sqlInstant(to),
          [...keyIds],
        );
        if (!Array.isArray(rows)) return rows as ApiKeyUsageBucket[][];
        const lists = new Map(keyIds.map((id) => [id, [] as ApiKeyUsageBucket[]]));
        for (const row of rows) {
          lists.get((row as { key_id: string }).key_id)?.push(toUsageBucket(row));
        }
        return keyIds.map((id) => lists.get(id)!);
      };
    }
    if (audit !== undefined) {
      requireDelegate(audit, ["$executeRawUnsafe", "$queryRawUnsafe"], "options.audit");
      requireDelegate(client, ["$transaction"], "client (with options.audit)");
      this.#audit = true;
      this.appendAudit = async (entry) => {
        const rows = await audit.$queryRawUnsafe(APPEND_AUDIT_SQL, entry.tenantId, entry.body);
        return toStoredAuditRecord((rows as unknown[])[0], entry);
      };
      this.readAudit = async (query) =>
        toAuditReadAnswer(
          await audit.$queryRawUnsafe(readAuditSql(query.order), ...readAuditParams(query)),
        );
      this.pruneAudit = async (tenantId, before) => {
        const rows = await audit.$queryRawUnsafe(PRUNE_AUDIT_SQL, tenantId, sqlInstant(before));
        return Number((rows as { n: unknown }[])[0]?.n ?? 0);
      };
    }
    if (rotationWaits !== undefined) {
      requireDelegate(rotationWaits, ["create", "findUnique"], "options.rotationWaits");
      this.saveRotationWait = async ({ newKeyId, oldKeyId, gracePeriodMs, waitEndsAt }) => {
        await rotationWaits.create({ data: { newKeyId, oldKeyId, gracePeriodMs, waitEndsAt } });
      };
      this.findRotationWait = async (newKeyId) => {
        const row = await rotationWaits.findUnique({ where: { newKeyId } });
        if (row === null || row === undefined) return null;
        const r = row as Record<string, unknown>;
        return {
          newKeyId: r.newKeyId,
          oldKeyId: r.oldKeyId,
          gracePeriodMs: toNumber(r.gracePeriodMs),
          waitEndsAt: r.waitEndsAt,
        } as ApiKeyRotationWait;
      };
    }
  }

  /** Inserts a record (with `audit`, appended in the same transaction). */
  async insert(record: ApiKeyRecordInput, audit?: AuditAppend): Promise<void> {
    await this.#change(audit, (delegate) => delegate.create({ data: toRow(record, this) }));
  }

  /**
   * Runs `work` on the client; with `audit` (and the option), in a
   * transaction that then appends it, so a change that throws appends nothing.
   */
  async #change<T>(
    audit: AuditAppend | undefined,
    work: (delegate: PrismaApiKeyDelegate) => Promise<T>,
  ): Promise<T> {
    if (audit === undefined || !this.#audit) return await work(this.#client.apiKey);
    return await this.#client.$transaction!(async (tx) => {
      const answer = await work(tx.apiKey);
      await appendIn(tx, audit);
      return answer;
    });
  }

  async #listPage(
    tenantId: string,
    options: ListApiKeyPageOptions,
    rotatedAt: unknown,
  ): Promise<ApiKeyRecordPage> {
    const { limit, after, sort } = options;
    const where = { tenantId, ...pageFilters(options, rotatedAt) };
    const find = (
      keyset: Record<string, unknown>,
      orderBy: Record<string, "asc" | "desc">[],
      take: number,
    ) => this.#client.apiKey.findMany({ where: { AND: [where, keyset] }, orderBy, take });
    let rows: unknown[];
    if (sort !== "last_used_desc") {
      const field = sort === "name_asc" ? "name" : "createdAt";
      const direction = sort === "created_desc" ? "desc" : "asc";
      rows = await find(
        after === null ? {} : {
          OR: [
            { [field]: { [direction === "desc" ? "lt" : "gt"]: after.value } },
            { [field]: after.value, id: { gt: after.id } },
          ],
        },
        [{ [field]: direction }, { id: "asc" }],
        limit,
      );
    } else {
      rows = after !== null && after.value === null ? [] : await find(
        after === null ? { lastUsedAt: { not: null } } : {
          OR: [
            { lastUsedAt: { lt: after.value } },
            { lastUsedAt: after.value, id: { gt: after.id } },
          ],
        },
        [{ lastUsedAt: "desc" }, { id: "asc" }],
        limit,
      );
      if (rows.length < limit) {
        const unused = await find(
          { lastUsedAt: null, ...(after?.value === null && { id: { gt: after.id } }) },
          [{ id: "asc" }],
          limit - rows.length,
        );
        rows = [...rows, ...unused];
      }
    }
    const records = rows.map(toRecord);
    const predecessors: Record<string, string> = {};
    if (records.length > 0) {
      const replaced = await this.#client.apiKey.findMany({
        where: { tenantId, replacedByKeyId: { in: records.map((record) => record.id) } },
        orderBy: [{ id: "asc" }],
      });
      for (const row of replaced.map(toRecord)) predecessors[row.replacedByKeyId!] = row.id;
    }
    return { records, predecessors };
  }

  /**
   * Capability: the tenant's record that `keyId` replaced: `findMany` `where:
   * { tenantId, replacedByKeyId }`, newest first, `take: 1` (index of
   * migration `0016_api_key_pages`).
   */
  async findByReplacement(tenantId: string, keyId: string): Promise<ApiKeyRecord | null> {
    const rows = await this.#client.apiKey.findMany({
      where: { tenantId, replacedByKeyId: keyId },
      orderBy: [{ createdAt: "desc" }, { id: "asc" }],
      take: 1,
    });
    return rows.length === 0 ? null : toRecord(rows[0]);
  }

  /**
   * Capability: the tenant's records among `ids`: one `findMany` `where: { id:
   * { in: ids }, tenantId }` (on the primary key), by id.
   */
  async findManyByIds(tenantId: string, ids: readonly string[]): Promise<ApiKeyRecord[]> {
    const rows = await this.#client.apiKey.findMany({
      where: { id: { in: [...ids] }, tenantId },
      orderBy: [{ id: "asc" }],
    });
    return rows.map(toRecord);
  }

  /** Finds a record by id. */
  async findById(id: string): Promise<ApiKeyRecord | null> {
    const row = await this.#client.apiKey.findUnique({ where: { id } });
    return row === null || row === undefined ? null : toRecord(row);
  }

  /** Finds a record by prefix. */
  async findByPrefix(prefix: string): Promise<ApiKeyRecord | null> {
    const row = await this.#client.apiKey.findUnique({ where: { prefix } });
    return row === null || row === undefined ? null : toRecord(row);
  }

  /** Lists a tenant's records newest first (`createdAt` descending), then by `id`. */
  async listByTenant(tenantId: string, options?: ListApiKeysOptions): Promise<ApiKeyRecord[]> {
    const where: Record<string, unknown> = { tenantId };
    if (options?.includeRevoked !== true) where.revokedAt = null;
    const rows = await this.#client.apiKey.findMany({
      where,
      orderBy: [{ createdAt: "desc" }, { id: "asc" }],
    });
    return Array.isArray(rows) ? rows.map(toRecord) : rows;
  }

  /** Sets `revokedAt`; `P2025` becomes `api_key_record_not_found`. */
  async markRevoked(id: string, revokedAt: Date): Promise<void> {
    try {
      await this.#client.apiKey.update({ where: { id }, data: { revokedAt } });
    } catch (error) {
      if (isRecordNotFound(error)) throw new ApiKeyOperationError("api_key_record_not_found");
      throw error;
    }
  }

  /**
   * Sets `revokedAt` with a conditional update `where: { id, revokedAt: null }`;
   * after `P2025`, `findUnique` tells an unknown id (`api_key_record_not_found`)
   * from an already revoked key (`false`).
   */
  markRevokedIfActive(id: string, revokedAt: Date, audit?: AuditAppend): Promise<boolean> {
    return this.#revokeIfActive(id, undefined, revokedAt, audit);
  }

  /**
   * Capability: `markRevokedIfActive` with `tenantId` in the conditional
   * update's `where`; after `P2025`, a row of another tenant is
   * `api_key_record_not_found` like an unknown id.
   */
  markRevokedForTenant(
    tenantId: string,
    id: string,
    revokedAt: Date,
    audit?: AuditAppend,
  ): Promise<boolean> {
    return this.#revokeIfActive(id, tenantId, revokedAt, audit);
  }

  /**
   * Capability: `update` `where: { id, tenantId }`; `P2025` (an unknown id or
   * another tenant's row) becomes `api_key_record_not_found`.
   */
  async renameForTenant(
    tenantId: string,
    id: string,
    name: string,
    audit?: AuditAppend,
  ): Promise<void> {
    try {
      await this.#change(
        audit,
        (delegate) => delegate.update({ where: { id, tenantId }, data: { name } }),
      );
    } catch (error) {
      if (isRecordNotFound(error)) throw new ApiKeyOperationError("api_key_record_not_found");
      throw error;
    }
  }

  /**
   * Capability: `renameForTenant` with a conditional update `where: { id,
   * tenantId, name: expectedName }` (with `audit`, in its transaction);
   * `P2025` answers `false` when the row is the tenant's (another name).
   */
  async replaceNameForTenant(
    tenantId: string,
    id: string,
    expectedName: string,
    name: string,
    audit?: AuditAppend,
  ): Promise<boolean> {
    try {
      await this.#change(
        audit,
        (delegate) =>
          delegate.update({ where: { id, tenantId, name: expectedName }, data: { name } }),
      );
      return true;
    } catch (error) {
      if (!isRecordNotFound(error)) throw error;
    }
    await this.#requireRow(id, tenantId);
    return false;
  }

  async #revokeIfActive(
    id: string,
    tenantId: string | undefined,
    revokedAt: Date,
    audit: AuditAppend | undefined,
  ) {
    const where = tenantId === undefined
      ? { id, revokedAt: null }
      : { id, tenantId, revokedAt: null };
    try {
      await this.#change(audit, (delegate) => delegate.update({ where, data: { revokedAt } }));
      return true;
    } catch (error) {
      if (!isRecordNotFound(error)) throw error;
    }
    await this.#requireRow(id, tenantId);
    return false;
  }

  /**
   * Replaces the hash with a conditional update `where: { id, hash:
   * expectedHash }`; `P2025` (no row matched: another hash or an unknown id)
   * answers `false`. `hashScheme` is written when it is not the default, or
   * when the model has the column (the row, read first with `findUnique`,
   * carries it): a model without it keeps working.
   */
  async replaceHash(
    id: string,
    expectedHash: string,
    next: ApiKeyHashReplacement,
  ): Promise<boolean> {
    const data: Record<string, unknown> = { hash: next.hash, pepperVersion: next.pepperVersion };
    if (next.hashScheme !== CURRENT_HASH_SCHEME || await this.#hasSchemeColumn(id)) {
      data.hashScheme = next.hashScheme;
    }
    try {
      await this.#client.apiKey.update({ where: { id, hash: expectedHash }, data });
      return true;
    } catch (error) {
      if (isRecordNotFound(error)) return false;
      throw error;
    }
  }

  /**
   * Counts the rows usable at `now` (`revokedAt: null`, `expiresAt` null or
   * later, not rotated without grace: `acceptedUntilMs`) per hash scheme and
   * pepper version, reading them in pages of 1,000 ordered by `id`.
   */
  async countHashes(now: Date): Promise<ApiKeyHashCount[]> {
    const counts = new Map<string, ApiKeyHashCount>();
    let after: string | undefined;
    for (;;) {
      const where: Record<string, unknown> = {
        revokedAt: null,
        OR: [{ expiresAt: null }, { expiresAt: { gt: now } }],
      };
      if (after !== undefined) where.id = { gt: after };
      const rows = await this.#client.apiKey.findMany({
        where,
        orderBy: [{ id: "asc" }],
        take: COUNT_PAGE,
      });
      for (const row of rows) {
        const record = toRecord(row);
        if (acceptedUntilMs(record) <= now.getTime()) continue; // rotated without grace
        const { hashScheme = CURRENT_HASH_SCHEME, pepperVersion } = record;
        const key = `${hashScheme} ${pepperVersion}`;
        const seen = counts.get(key);
        if (seen !== undefined) seen.count++;
        else counts.set(key, { hashScheme, pepperVersion, count: 1 });
      }
      if (rows.length < COUNT_PAGE) return [...counts.values()];
      after = toRecord(rows[rows.length - 1]).id;
    }
  }

  /** Sets `lastUsedAt`; an unknown id is ignored. */
  async touchLastUsed(id: string, lastUsedAt: Date): Promise<void> {
    try {
      // Only later (P2025 otherwise): an instance whose clock is behind never moves it back.
      await this.#client.apiKey.update({
        where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: lastUsedAt } }] },
        data: { lastUsedAt },
      });
    } catch (error) {
      if (!isRecordNotFound(error)) throw error;
    }
  }

  /**
   * Capability: a conditional update `where: { id, expiresAt: expected }`;
   * `P2025` (no row matched) answers `false`.
   */
  async lowerExpiry(id: string, expectedExpiresAt: Date, nextExpiresAt: Date): Promise<boolean> {
    try {
      await this.#client.apiKey.update({
        where: { id, expiresAt: expectedExpiresAt },
        data: { expiresAt: nextExpiresAt },
      });
      return true;
    } catch (error) {
      if (isRecordNotFound(error)) return false;
      throw error;
    }
  }

  async #listExpiring(options: ListExpiringApiKeysOptions): Promise<ApiKeyRecord[]> {
    const where: Record<string, unknown> = {
      revokedAt: null,
      expiresAt: { gt: options.from, lte: options.until },
    };
    const after = options.after;
    if (after !== null) {
      where.OR = [
        { expiresAt: { gt: after.expiresAt } },
        { expiresAt: after.expiresAt, id: { gt: after.id } },
      ];
    }
    const rows = await this.#client.apiKey.findMany({
      where,
      orderBy: [{ expiresAt: "asc" }, { id: "asc" }],
      take: options.limit,
    });
    return Array.isArray(rows) ? rows.map(toRecord) : rows;
  }

  /** Rotates (see the class documentation). */
  rotate(input: RotateApiKeyStorageInput, audit?: AuditAppend): Promise<ApiKeyStorageRotateResult> {
    return this.#rotate(input, undefined, audit);
  }

  /**
   * Capability: `rotate` with `tenantId` in the old row's conditional
   * update; a row of another tenant is `api_key_record_not_found` like an
   * unknown id.
   */
  rotateForTenant(
    tenantId: string,
    input: RotateApiKeyStorageInput,
    audit?: AuditAppend,
  ): Promise<ApiKeyStorageRotateResult> {
    return this.#rotate(input, tenantId, audit);
  }

  async #rotate(
    input: RotateApiKeyStorageInput,
    tenantId: string | undefined,
    audit: AuditAppend | undefined,
  ): Promise<ApiKeyStorageRotateResult> {
    const insertNew = (delegate: PrismaApiKeyDelegate) =>
      delegate.create({ data: toRow(input.newRecord, this) });
    const markOld = (delegate: PrismaApiKeyDelegate) =>
      delegate.update({
        where: {
          id: input.oldKeyId,
          ...(tenantId === undefined ? {} : { tenantId }),
          ...(input.expectedName === undefined ? {} : { name: input.expectedName }),
          rotatedAt: null,
          revokedAt: null,
        },
        data: {
          rotatedAt: input.rotatedAt,
          expiresAt: input.oldExpiresAt,
          replacedByKeyId: input.newRecord.id,
        },
      });
    const client = this.#client;
    if (client.$transaction !== undefined) {
      try {
        await client.$transaction(async (tx) => {
          await insertNew(tx.apiKey);
          await markOld(tx.apiKey);
          if (audit !== undefined && this.#audit) await appendIn(tx, audit);
        });
      } catch (error) {
        return await this.#failRotation(error, input.oldKeyId, tenantId);
      }
      return "rotated";
    }
    // Step by step: the new row first, so a failure never leaves the old key rotated to nothing.
    await insertNew(client.apiKey);
    try {
      await markOld(client.apiKey);
    } catch (error) {
      // The old key is unchanged: retire the new row (its raw key is never handed out).
      await client.apiKey.update({
        where: { id: input.newRecord.id },
        data: { revokedAt: input.rotatedAt },
      });
      return await this.#failRotation(error, input.oldKeyId, tenantId);
    }
    return "rotated";
  }

  /**
   * The answer to a failed rotation: `P2025` means the race was lost
   * (`"not_rotatable"`) or the key is gone (rejects); other errors rethrown.
   */
  async #failRotation(
    error: unknown,
    oldKeyId: string,
    tenantId: string | undefined,
  ): Promise<"not_rotatable"> {
    if (!isRecordNotFound(error)) throw error;
    await this.#requireRow(oldKeyId, tenantId);
    return "not_rotatable";
  }

  /** Whether the row of `id` has a `hashScheme` column (false for an unknown id). */
  async #hasSchemeColumn(id: string): Promise<boolean> {
    const row = await this.#client.apiKey.findUnique({ where: { id } });
    return typeof row === "object" && row !== null && "hashScheme" in row;
  }

  /**
   * Throws `api_key_record_not_found` unless a row has `id` (and `tenantId`
   * when given): a conditional update got `P2025`.
   */
  async #requireRow(id: string, tenantId?: string): Promise<void> {
    const row = await this.#client.apiKey.findUnique({ where: { id } });
    if (
      row === null || row === undefined ||
      (tenantId !== undefined && (row as { tenantId?: unknown }).tenantId !== tenantId)
    ) {
      throw new ApiKeyOperationError("api_key_record_not_found");
    }
  }
}

/** `claimExpiryNotice` over the `apiKeyExpiryNotice` delegate (see `PrismaApiKeyStorage`). */
async function claimNotice(
  notices: PrismaExpiryNoticeDelegate,
  keyId: string,
  thresholdMs: number,
  claimedAt: Date,
): Promise<boolean> {
  const data = { keyId, thresholdMs, claimedAt };
  if (countOf(await notices.createMany({ data: [data], skipDuplicates: true })) === 1) return true;
  return countOf(
    await notices.updateMany({
      where: { keyId, thresholdMs: { gt: thresholdMs } },
      data: { thresholdMs, claimedAt },
    }),
  ) === 1;
}

/** The `count` of a `createMany` or `updateMany` answer (a `TypeError` when there is none). */
function countOf(answer: unknown): number {
  const count = (answer as { count?: unknown } | null)?.count;
  if (typeof count !== "number") throw new TypeError("a Prisma batch answer has no count");
  return count;
}
