/**
 * Usage per key: the counts `ApiKeysService` records per key and UTC hour
 * (option `usage`), the rows its storage stores (`recordUsage`), and what
 * `ApiKeysService.usage` answers.
 *
 * @module
 */

/**
 * The refusal codes counted per key, in column order: a wrong secret for a
 * stored prefix counts as `api_key_invalid` in that key's bucket; unknown
 * prefixes are never counted.
 */
export const API_KEY_USAGE_REFUSALS: readonly ApiKeyUsageRefusalCode[] = Object.freeze([
  "api_key_invalid",
  "api_key_revoked",
  "api_key_expired",
  "api_key_scope_insufficient",
  "api_key_environment_mismatch",
  "api_key_ip_not_allowed",
  "api_key_rate_limited",
  "api_key_usage_exceeded",
]);

/**
 * A refusal code counted per key (see `API_KEY_USAGE_REFUSALS`).
 */
export type ApiKeyUsageRefusalCode =
  | "api_key_invalid"
  | "api_key_revoked"
  | "api_key_expired"
  | "api_key_scope_insufficient"
  | "api_key_environment_mismatch"
  | "api_key_ip_not_allowed"
  | "api_key_rate_limited"
  | "api_key_usage_exceeded";

/**
 * Counts of one bucket: accepted requests, refusals by code, and the cost the
 * accepted requests spent.
 */
export interface ApiKeyUsageCounts {
  /** Requests accepted. */
  accepted: number;
  /** Requests refused, per code (every code present). */
  refused: Record<ApiKeyUsageRefusalCode, number>;
  /** Units spent by the accepted requests (1 each unless a cost is given). */
  cost: number;
}

/**
 * One row a flush writes (`ApiKeyStorage.recordUsage`): counts of one key in
 * one UTC hour, added to the stored ones.
 */
export interface ApiKeyUsageRow extends ApiKeyUsageCounts {
  /** The key's id. */
  keyId: string;
  /** The key's tenant. */
  tenantId: string;
  /** Start of the UTC hour counted. */
  bucket: Date;
  /** The latest successful verify counted here (sets the key's `lastUsedAt` if later), or `null`. */
  lastUsedAt: Date | null;
}

/**
 * What `ApiKeyStorage.readUsage` reads: hours of one tenant (of one key
 * with `keyId`), `from` (included) to `to` (excluded), both hour starts.
 */
export interface ApiKeyUsageReadQuery {
  /** The tenant whose keys are read. */
  tenantId: string;
  /** Only this key (of that tenant). */
  keyId?: string;
  /** First hour read. */
  from: Date;
  /** End of the hours read (excluded). */
  to: Date;
  /**
   * `"day"` (the service's day reads; `from` and `to` are then UTC day starts): the storage may
   * answer one bucket per UTC day, the sum of its hours, instead of the hours (the service sums
   * them per day either way).
   */
  granularity?: "hour" | "day";
}

/**
 * What `ApiKeyStorage.readUsageOfKeys` reads: hours of tenant `tenantId`'s
 * keys `keyIds` (each apart), `from` (included) to `to` (excluded).
 */
export interface ApiKeyUsageKeysReadQuery {
  /** The tenant whose keys are read (another tenant's key reads as no usage). */
  tenantId: string;
  /** The keys, at most 100. */
  keyIds: readonly string[];
  /** First hour read. */
  from: Date;
  /** End of the hours read (excluded). */
  to: Date;
  /** As `ApiKeyUsageReadQuery.granularity`. */
  granularity?: "hour" | "day";
}

/**
 * Counts of one bucket (an hour or a UTC day), summed over the keys read.
 */
export interface ApiKeyUsageBucket extends ApiKeyUsageCounts {
  /** Start of the bucket (UTC). */
  start: Date;
}

/**
 * What `ApiKeysService.usage` reads: a tenant's keys (or one of them), from
 * `from` to `to`, per hour (at most 31 days and 1 hour: a local month) or per UTC day (at most 366).
 */
export interface ApiKeyUsageQuery {
  /** Only this key (another tenant's key reads as no usage). */
  keyId?: string;
  /** Start (floored to its bucket). */
  from: Date;
  /** End (excluded). */
  to: Date;
  /** Bucket size. */
  granularity: "hour" | "day";
}

/**
 * A flush of the usage recorder, or counts dropped (`outcome`), for the
 * `usage.onMetric` sink.
 */
export interface ApiKeyUsageMetric {
  /** Metric type. */
  type: "api_key.usage_flush";
  /**
   * `written`: rows stored; `failed`: a write failed, its rows kept for the
   * next flush (also a clock or an audit refusal record that failed with
   * `audit.refusedVerifications`: `rows` held, they and the refusals kept); `dropped`: rows of the oldest keys dropped past `maxPendingKeys`.
   */
  outcome: "written" | "failed" | "dropped";
  /** Rows concerned. */
  rows: number;
}

/**
 * The service option `usage`: counts per key and hour, flushed in batches.
 */
export interface ApiKeyUsageOptions {
  /** Interval between flushes, in ms: 100 to 3,600,000 (default 10,000). */
  flushIntervalMs?: number;
  /**
   * Most (key, hour) rows waiting in memory, failed flushes included (default 100,000); a
   * flush's rows being written do not count (at most as many again).
   */
  maxPendingKeys?: number;
  /** Sink of `api_key.usage_flush` (sync or async). */
  onMetric?: (metric: ApiKeyUsageMetric) => void | Promise<void>;
  /** Receives errors of `onMetric` (default: one console warning, then silence). */
  onMetricError?: (error: unknown, metric: ApiKeyUsageMetric) => void;
}
