/**
 * The checks of the `ApiKeysService` options whose code loads after
 * construction (`usage`, `feed`, `audit`, `persistIntervalMs`): run at
 * construction, so a bad option still throws there, while the recorder,
 * follower, audit log and credit book they configure load with the flows.
 *
 * @module
 */
import type { ApiKeyAuditOptions } from "./audit/types.ts";
import type { ApiKeyChangeFeed } from "./change_feed.ts";
import type { ApiKeyUsageOptions } from "./metering/usage.ts";
import { assertKnownFields } from "../telemetry/_known_fields.ts";

/** Largest `maxStalenessMs`: the longest cache TTL, in ms. */
export const MAX_MAX_STALENESS_MS = 60_000;

/** Largest `unknownPrefixLookups.perSecond`. */
const MAX_UNKNOWN_PREFIX_LOOKUPS_PER_SECOND = 10_000;
/** Default lookups per second for prefixes the feed's set does not hold. */
const DEFAULT_UNKNOWN_PREFIX_LOOKUPS_PER_SECOND = 10;
const HOUR_MS = 3_600_000;
const DEFAULT_FLUSH_INTERVAL_MS = 10_000;
const DEFAULT_MAX_PENDING_KEYS = 100_000;

/** Throws a `TypeError` naming `label` unless `value` is a safe integer in [min, max]. */
function requireInteger(value: unknown, min: number, max: number, label: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > max) {
    throw new TypeError(`${label} must be a whole number from ${min} to ${max}`);
  }
  return value as number;
}

/** Every option of `ApiKeyAuditOptions`. */
const AUDIT_OPTIONS: readonly string[] = Object.keys(
  {
    checkpointKey: true,
    checkpointEvery: true,
    checkpointIntervalMs: true,
    refusedVerifications: true,
  } satisfies Record<keyof ApiKeyAuditOptions, true>,
);

/**
 * The checked `audit` option (a `TypeError` naming `label` for a bad one).
 *
 * @example
 * ```ts
 * import { auditOptions } from "./_options.ts";
 * auditOptions({ checkpointKey: "k".repeat(32) }, "audit").checkpointEvery; // 1000
 * ```
 */
export function auditOptions(options: unknown, label: string): Required<ApiKeyAuditOptions> {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`${label} must be an object`);
  }
  assertKnownFields(options, AUDIT_OPTIONS, label, "option");
  const {
    checkpointKey,
    checkpointEvery = 1_000,
    checkpointIntervalMs = 900_000,
    refusedVerifications = false,
  } = options as Record<string, unknown>;
  if (typeof checkpointKey !== "string" || new TextEncoder().encode(checkpointKey).length < 32) {
    throw new TypeError(`${label}.checkpointKey must be a string of at least 32 bytes`);
  }
  const inRange = (value: unknown, min: number, max: number) =>
    Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
  if (!inRange(checkpointEvery, 1, 1_000_000)) {
    throw new TypeError(`${label}.checkpointEvery must be an integer from 1 to 1,000,000`);
  }
  if (!inRange(checkpointIntervalMs, 1_000, 86_400_000)) {
    throw new TypeError(
      `${label}.checkpointIntervalMs must be an integer from 1,000 to 86,400,000`,
    );
  }
  if (typeof refusedVerifications !== "boolean") {
    throw new TypeError(`${label}.refusedVerifications must be a boolean`);
  }
  return {
    checkpointKey,
    checkpointEvery: checkpointEvery as number,
    checkpointIntervalMs: checkpointIntervalMs as number,
    refusedVerifications,
  };
}

/** The checked `usage` option: its intervals and sinks (functions not yet contained). */
export interface UsageOptions {
  /** Interval between writes, in ms. */
  readonly flushIntervalMs: number;
  /** Most rows held. */
  readonly maxPendingKeys: number;
  /** The option's `onMetric`. */
  readonly onMetric: ApiKeyUsageOptions["onMetric"];
  /** The option's `onMetricError`. */
  readonly onMetricError: ApiKeyUsageOptions["onMetricError"];
}

/**
 * The checked `usage` option (`undefined` when omitted or `false`); a
 * `TypeError` naming `label` when it is malformed, the storage lacks the
 * usage capability (`hasAccess` false), or the audit log's
 * `refusedVerifications` (`refusals`) asks for it while it is off.
 *
 * @example
 * ```ts
 * import { usageOptions } from "./_options.ts";
 * usageOptions(true, true, "usage", false)?.flushIntervalMs; // 10000
 * ```
 */
export function usageOptions(
  option: unknown,
  hasAccess: boolean,
  label: string,
  refusals: boolean,
): UsageOptions | undefined {
  if (option === undefined || option === false) {
    if (refusals) {
      throw new TypeError(`ApiKeysServiceOptions.audit.refusedVerifications needs ${label}`);
    }
    return undefined;
  }
  if (option !== true && (typeof option !== "object" || option === null)) {
    throw new TypeError(`${label} must be true, false or { flushIntervalMs, maxPendingKeys }`);
  }
  const o = (option === true ? {} : option) as ApiKeyUsageOptions;
  const flushIntervalMs = o.flushIntervalMs === undefined
    ? DEFAULT_FLUSH_INTERVAL_MS
    : requireInteger(o.flushIntervalMs, 100, HOUR_MS, `${label}.flushIntervalMs`);
  const maxPendingKeys = o.maxPendingKeys === undefined
    ? DEFAULT_MAX_PENDING_KEYS
    : requireInteger(o.maxPendingKeys, 1, 100_000_000, `${label}.maxPendingKeys`);
  for (const name of ["onMetric", "onMetricError"] as const) {
    if (o[name] !== undefined && typeof o[name] !== "function") {
      throw new TypeError(`${label}.${name} must be a function`);
    }
  }
  if (!hasAccess) {
    throw new TypeError(
      `${label} needs a storage with the capabilities recordUsage and readUsage (see ApiKeyStorage)`,
    );
  }
  return { flushIntervalMs, maxPendingKeys, onMetric: o.onMetric, onMetricError: o.onMetricError };
}

/**
 * The checked `feed` option: the feed and the unknown-prefix lookups per
 * second (`undefined` without a feed). Throws a `TypeError` naming the option
 * for a feed of the wrong shape (`subscribe` and `status`; `publish` and
 * `snapshot` functions when present), a bad `unknownPrefixLookups`, or either
 * of it and `maxStalenessMs` without a feed.
 *
 * @example
 * ```ts
 * import { feedOptions } from "./_options.ts";
 * feedOptions(undefined, undefined, undefined, "ApiKeysServiceOptions."); // undefined
 * ```
 */
export function feedOptions(
  feed: unknown,
  maxStalenessMs: number | undefined,
  unknownPrefixLookups: unknown,
  label: string,
): { feed: ApiKeyChangeFeed; perSecond: number } | undefined {
  if (feed === undefined) {
    for (const [name, value] of Object.entries({ maxStalenessMs, unknownPrefixLookups })) {
      if (value !== undefined) throw new TypeError(`${label}${name} needs a feed`);
    }
    return undefined;
  }
  const f = feed as Partial<Record<keyof ApiKeyChangeFeed, unknown>> | null;
  if (
    typeof f !== "object" || f === null || typeof f.subscribe !== "function" ||
    typeof f.status !== "function" ||
    (f.publish !== undefined && typeof f.publish !== "function") ||
    (f.snapshot !== undefined && typeof f.snapshot !== "function")
  ) {
    throw new TypeError(
      `${label}feed must be a change feed (subscribe and status functions; publish and snapshot ` +
        "functions when present)",
    );
  }
  const perSecond = unknownPrefixLookups === undefined
    ? DEFAULT_UNKNOWN_PREFIX_LOOKUPS_PER_SECOND
    : (unknownPrefixLookups as { perSecond?: unknown } | null)?.perSecond;
  if (
    !Number.isInteger(perSecond) || (perSecond as number) < 0 ||
    (perSecond as number) > MAX_UNKNOWN_PREFIX_LOOKUPS_PER_SECOND
  ) {
    throw new TypeError(
      `${label}unknownPrefixLookups must be { perSecond } with an integer from 0 to ` +
        MAX_UNKNOWN_PREFIX_LOOKUPS_PER_SECOND,
    );
  }
  return { feed: feed as ApiKeyChangeFeed, perSecond: perSecond as number };
}

/**
 * Throws a `TypeError` naming a bad `persistIntervalMs` after `label` (a
 * whole number of ms from 100 to 3600000, and only with a limiter).
 *
 * @example
 * ```ts
 * import { checkPersistInterval } from "./_options.ts";
 * checkPersistInterval(undefined, false, "ApiKeysServiceOptions.");
 * ```
 */
export function checkPersistInterval(
  persistIntervalMs: unknown,
  hasLimiter: boolean,
  label: string,
): void {
  if (persistIntervalMs === undefined) return;
  if (!hasLimiter) throw new TypeError(`${label}persistIntervalMs needs a limiter`);
  if (
    !Number.isSafeInteger(persistIntervalMs) || (persistIntervalMs as number) < 100 ||
    (persistIntervalMs as number) > 3_600_000
  ) {
    throw new TypeError(`${label}persistIntervalMs must be a whole number from 100 to 3600000`);
  }
}
