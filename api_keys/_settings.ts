/**
 * The compiled settings of `ApiKeysService`: built and validated once, at
 * construction, from `ApiKeysServiceOptions`, and passed to the two flows
 * (`verify/_verify.ts`, `_manage.ts`). Peppers are parsed once (by the hasher), the
 * storage is wrapped once (deadline, record validation, capabilities), the
 * sinks are wrapped once (contained, never awaited). The parts of the
 * options `usage`, `feed` and `audit` (their options checked here) and the
 * storage's checks of its answers load after construction: everything that
 * may use them awaits `loaded()` first.
 *
 * @module
 */
import type { ApiKeyErrorCode } from "./errors.ts";
import type {
  ApiKeyAuthorizationMetric,
  ApiKeyEvent,
  ApiKeyOperationMetric,
  ApiKeyVerificationMetric,
} from "./events.ts";
import { createHasher, keysImported, type WebCryptoSha256Hasher } from "./hasher.ts";
import { checkedClock, durationProblem } from "./_input.ts";
import {
  assertValidNamespace,
  compileKeyLayouts,
  DEFAULT_API_KEY_NAMESPACE,
  type KeyLayouts,
  LEGACY_KEY_LAYOUTS,
} from "./key_format.ts";
import { VerificationCache } from "./verify/_cache.ts";
import type { FeedFollower } from "./verify/_fleet.ts";
import { HashUpgrade, validateRetiredVersions } from "./verify/_legacy.ts";
import type { ApiKeyTaps } from "../telemetry/_taps.ts";
import { createDispatcher, type Dispatch, type Redact, warnOnce } from "./_sinks.ts";
import { callDetached } from "../telemetry/_detached.ts";
import { MAX_TIMER_MS } from "../telemetry/_timer.ts";
import { StorageAccess } from "./storage/_access.ts";
import { allowsLifetime, compileTtlPolicy, type ExpiryResolver } from "./_ttl_policy.ts";
import type { ApiKeysServiceOptions, ApiKeyVerificationCacheOptions } from "./service_options.ts";
import type { ApiKeyTtlPolicy } from "./types.ts";
import { buildLimits, type RequestLimits } from "./metering/_limits.ts";
import type { UsageRecorder } from "./metering/_usage.ts";
import type { AuditLog } from "./audit/_log.ts";
import { auditOptions, feedOptions, MAX_MAX_STALENESS_MS, usageOptions } from "./_options.ts";
import { assertKnownFields } from "../telemetry/_known_fields.ts";

const DEFAULT_DEBOUNCE_MS = 60_000;
/** The default of `storageTimeoutMs` (also `keyImporter`'s deadline). */
export const DEFAULT_STORAGE_TIMEOUT_MS = 5_000;
const DEFAULT_CACHE_TTL_MS = 30_000;
const DEFAULT_CACHE_MAX_ENTRIES = 10_000;

const PREFIX = "ApiKeysServiceOptions.";
const FUNCTION_OPTIONS = [
  "onEvent",
  "onEventError",
  "onMetric",
  "onMetricError",
  "onAuthorizationMetric",
  "onAuthorizationMetricError",
  "onOperationMetric",
  "onOperationMetricError",
  "onAuthFailed",
  "clock",
  "idFactory",
  "monotonicClock",
] as const;

/** Every option of `ApiKeysServiceOptions` (an unknown one is refused). */
export const SERVICE_OPTIONS: readonly string[] = Object.keys(
  {
    peppers: true,
    hasher: true,
    storage: true,
    namespace: true,
    legacyKeyLayouts: true,
    currentPepperVersion: true,
    retiredPepperVersions: true,
    upgradeHashesOnUse: true,
    debounceMs: true,
    ttlPolicy: true,
    emitUsageEvents: true,
    onEvent: true,
    onEventError: true,
    onMetric: true,
    onMetricError: true,
    onAuthorizationMetric: true,
    onAuthorizationMetricError: true,
    onOperationMetric: true,
    onOperationMetricError: true,
    onAuthFailed: true,
    cache: true,
    feed: true,
    maxStalenessMs: true,
    unknownPrefixLookups: true,
    usage: true,
    storageTimeoutMs: true,
    clock: true,
    idFactory: true,
    monotonicClock: true,
    limiter: true,
    rateLimitResolver: true,
    creditThresholds: true,
    persistIntervalMs: true,
    audit: true,
  } satisfies Record<keyof ApiKeysServiceOptions, true>,
);

/**
 * Checks the `audit` option (when given): a storage without `appendAudit`,
 * `readAudit` and `markRevokedIfActive` is a `TypeError`, so is a bad option.
 * With it, one `console.info` line names where records go. Answers whether
 * refused verifications are recorded (`undefined`: no audit log).
 */
function checkAudit(options: unknown, storage: StorageAccess): boolean | undefined {
  if (options === undefined) return undefined;
  if (storage.audit === undefined || !storage.revokesOnce) {
    throw new TypeError(
      `${PREFIX}audit needs a storage with the capabilities appendAudit, readAudit and ` +
        "markRevokedIfActive (InMemoryApiKeyStorage, or PrismaApiKeyStorage with options.audit)",
    );
  }
  const { refusedVerifications } = auditOptions(options, `${PREFIX}audit`);
  console.info(
    `api-keys: audit log on; records go to the storage (${storage.name}.appendAudit), ` +
      "each in the same step as its change",
  );
  return refusedVerifications;
}

/** Everything the flows work with, compiled from the options. */
export interface Settings {
  /** Namespace of the keys issued and accepted. */
  readonly namespace: string;
  /** The accepted key layouts: the current one and `legacyKeyLayouts`. */
  readonly layouts: KeyLayouts;
  /** Hides the keys of every accepted layout in a log line: every line the service logs goes through it. */
  readonly redact: Redact;
  /** Hasher over the parsed peppers (or the `hasher` option's). */
  readonly hasher: WebCryptoSha256Hasher;
  /** The storage, wrapped (deadline, record validation, capabilities). */
  readonly storage: StorageAccess;
  /** The verification cache, when on. */
  readonly cache: VerificationCache | undefined;
  /** The change feed followed (option `feed`), when set and `loaded()`. */
  readonly fleet: FeedFollower | undefined;
  /** Minimum interval between `lastUsedAt` writes per key (ms). */
  readonly debounceMs: number;
  /** Whether successes emit `api_key.used`. */
  readonly emitUsageEvents: boolean;
  /** The compiled TTL policy. */
  readonly resolveExpiry: ExpiryResolver;
  /** Whether the TTL policy allows a key living that long (`null`: without expiry). */
  readonly allowsLifetime: (lifetimeMs: number | null) => boolean;
  /** The TTL policy's `defaultExpiresInMs`; `null` without one. */
  readonly defaultLifetimeMs: number | null;
  /** Wall clock; an injected one answering anything but a valid Date throws (see `checkedClock`). */
  readonly clock: () => Date;
  /** Monotonic clock in ms. */
  readonly monotonic: () => number;
  /**
   * With the default clocks, and a limiter, usage or `api_key.used` to serve:
   * a request's one wall-clock ms, its own `read` or from its monotonic read
   * (see `wallFromMonotonic`), handed to the limiter; `undefined` otherwise
   * (an injected clock is read as it is).
   */
  readonly wallAt: ((monotonicMs: number, read?: number) => number | undefined) | undefined;
  /** The `idFactory` option (`undefined`: UUIDv7 ids); `newRecordId` calls it and checks its answer. */
  readonly idFactory: (() => string) | undefined;
  /** Event sink, contained (`undefined`: no sink nor audit log). */
  readonly emitEvent: Dispatch<ApiKeyEvent> | undefined;
  /** Whether the audit log is on (option `audit`). */
  readonly audits: boolean;
  /** The audit log (option `audit`), when on and `loaded()`. */
  readonly audit: AuditLog | undefined;
  /** Metric sink, contained (`undefined`: no sink). */
  readonly emitMetric: Dispatch<ApiKeyVerificationMetric> | undefined;
  /** `api_key.authorization` sink, contained (`undefined`: no sink). */
  readonly emitAuthorizationMetric: Dispatch<ApiKeyAuthorizationMetric> | undefined;
  /** `api_key.operation` sink, contained (`undefined`: no sink). */
  readonly emitOperationMetric: Dispatch<ApiKeyOperationMetric> | undefined;
  /** `onAuthFailed`, contained and not awaited (`undefined`: none). */
  readonly notifyAuthFailed: ((prefix: string | null, code: ApiKeyErrorCode) => void) | undefined;
  /** The upgrade on use (`undefined`: off, or the storage has no `replaceHash`). */
  readonly upgrade: HashUpgrade | undefined;
  /** Pepper versions no usable record may use at start (`undefined`: no check). */
  readonly retiredPepperVersions: readonly number[] | undefined;
  /** The rate-limit check of authorization (option `limiter`), when set. */
  readonly limits: RequestLimits | undefined;
  /** Whether usage is recorded (option `usage`). */
  readonly recordsUsage: boolean;
  /** The usage recorder (option `usage`), when on and `loaded()`. */
  readonly usage: UsageRecorder | undefined;
  /**
   * Loads the usage recorder, feed follower and audit log the options ask for
   * and the storage's checks of its answers (started at construction; a
   * failed load is tried again): await it before any use of `usage`, `fleet`,
   * `audit` or `storage.peek`, so no count, invalidation or audit record is
   * skipped for a part not loaded yet.
   */
  readonly loaded: () => Promise<void>;
  /** The telemetry bridge's taps (each unset until `./telemetry` sets it). */
  readonly taps: ApiKeyTaps;
  /** A likely mistake in the options, which the service logs once at construction (`undefined`: none). */
  readonly warning: string | undefined;
}

/**
 * The line about a `nestarc-v0` layout (without its own namespace) read with
 * the default namespace because `namespace` is not given: 0.1's default was
 * `nk`, so its keys would all be `api_key_malformed`. `undefined` otherwise.
 */
function defaultNamespaceWarning(layouts: KeyLayouts, namespace: unknown): string | undefined {
  const nestarc = LEGACY_KEY_LAYOUTS["nestarc-v0"].name;
  if (
    namespace !== undefined ||
    !layouts.legacy.some((layout) => layout.name === nestarc && layout.namespace === undefined)
  ) {
    return undefined;
  }
  return `api-keys: legacyKeyLayouts has "${nestarc}" but no namespace is given, so its keys are ` +
    `read with the default namespace "${DEFAULT_API_KEY_NAMESPACE}"; @nestarc/api-keys' default ` +
    'namespace was "nk": pass `namespace: "nk"` if the old keys start nk_ (otherwise each is ' +
    "refused as api_key_malformed)";
}

/**
 * Throws a `TypeError` naming `label` unless `value` is omitted or a duration
 * from now (`durationProblem`), positive when `positive`, and at most `max`.
 */
function validateDuration(label: string, value: unknown, positive: boolean, max = Infinity): void {
  if (value === undefined) return;
  let problem = durationProblem(value, Date.now());
  if (problem === undefined && positive && value === 0) {
    problem = "must be a positive number of milliseconds";
  }
  if (problem === undefined && (value as number) > max) problem = `must be at most ${max} ms`;
  if (problem !== undefined) throw new TypeError(`${label} ${problem}`);
}

/** The TTL policy as read once (`{}` without one). */
function validateTtlPolicy(policy: unknown): Readonly<ApiKeyTtlPolicy> {
  if (policy === undefined) return Object.freeze({});
  const label = `${PREFIX}ttlPolicy`;
  if (typeof policy !== "object" || policy === null) {
    throw new TypeError(`${label} must be an object`);
  }
  const { defaultExpiresInMs, maxExpiresInMs, allowNeverExpires } = policy as ApiKeyTtlPolicy;
  validateDuration(`${label}.defaultExpiresInMs`, defaultExpiresInMs, true);
  validateDuration(`${label}.maxExpiresInMs`, maxExpiresInMs, true);
  if (
    defaultExpiresInMs !== undefined && maxExpiresInMs !== undefined &&
    defaultExpiresInMs > maxExpiresInMs
  ) {
    throw new TypeError(`${label}.defaultExpiresInMs must not exceed maxExpiresInMs`);
  }
  if (allowNeverExpires !== undefined && typeof allowNeverExpires !== "boolean") {
    throw new TypeError(`${label}.allowNeverExpires must be a boolean`);
  }
  return Object.freeze({ defaultExpiresInMs, maxExpiresInMs, allowNeverExpires });
}

/**
 * The verification cache the options ask for. Without a `cache` option it is
 * on exactly when the storage can be peeked (in-process: no other process can
 * change a record behind it) or a change feed tells of every change.
 */
function buildCache(
  cache: unknown,
  storage: StorageAccess,
  followsFeed: boolean,
): VerificationCache | undefined {
  if (cache === false || (cache === undefined && storage.peek === undefined && !followsFeed)) {
    return undefined;
  }
  const label = `${PREFIX}cache`;
  if (cache !== undefined && (typeof cache !== "object" || cache === null)) {
    throw new TypeError(`${label} must be false or { ttlMs, maxEntries }`);
  }
  const { ttlMs = DEFAULT_CACHE_TTL_MS, maxEntries = DEFAULT_CACHE_MAX_ENTRIES } =
    (cache ?? {}) as ApiKeyVerificationCacheOptions;
  if (!(typeof ttlMs === "number" && ttlMs > 0 && ttlMs <= 60_000)) {
    throw new TypeError(`${label}.ttlMs must be a number of milliseconds from 1 to 60000`);
  }
  if (!(Number.isSafeInteger(maxEntries) && maxEntries > 0)) {
    throw new TypeError(`${label}.maxEntries must be a positive integer`);
  }
  return new VerificationCache(maxEntries, ttlMs);
}

/** Most monotonic ms a wall-clock time taken from a monotonic read goes without a new `Date.now()`. */
const WALL_RESYNC_MS = 100;

/** The runtime's own `Date.now` (a fake timer replaces it). */
const NATIVE_DATE_NOW = Date.now;

/**
 * The wall-clock ms of a request at monotonic ms `at` (`performance.now()`,
 * read for this request): `read` when the request read the wall clock, else
 * `Date.now()` read again when 100 ms of monotonic time have passed since the
 * last read (or `at` is before it), else that read plus the whole ms elapsed
 * since. Only that base read outlives a request (100 ms of monotonic time at
 * most); the time itself moves with the request's own monotonic read, never
 * an earlier request's time. A wall-clock step (or a pause of the process) is
 * followed within 100 ms of monotonic time; otherwise the time is at most
 * 1 ms behind `Date.now()` at `at`. `undefined` while `Date.now` is not the
 * runtime's own (a fake timer: each part then reads its own clock).
 */
function wallFromMonotonic(): (at: number, read?: number) => number | undefined {
  let readMs = 0;
  let readAt = -Infinity;
  return (at, read) => {
    if (Date.now !== NATIVE_DATE_NOW) return undefined;
    if (read !== undefined) return read;
    const elapsed = at - readAt;
    if (elapsed >= 0 && elapsed < WALL_RESYNC_MS) return readMs + Math.floor(elapsed);
    readMs = Date.now();
    readAt = at;
    return readMs;
  };
}

/**
 * Validates `options` and compiles them; throws a `TypeError` whose message
 * names the option (every unknown one) (e.g. `ApiKeysServiceOptions.debounceMs must be a non-negative whole number of milliseconds`). Logs nothing.
 */
export function compileSettings(options: unknown): Settings {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("ApiKeysServiceOptions must be an object");
  }
  assertKnownFields(options, SERVICE_OPTIONS, "ApiKeysServiceOptions", "option");
  const o = options as Partial<Record<keyof ApiKeysServiceOptions, unknown>>;
  const layouts = compileKeyLayouts(o.legacyKeyLayouts, `${PREFIX}legacyKeyLayouts`);
  const redact: Redact = (line) => layouts.redact(line);
  const hasher = createHasher(
    { peppers: o.peppers, currentVersion: o.currentPepperVersion, hasher: o.hasher },
    {
      peppers: `${PREFIX}peppers`,
      currentVersion: `${PREFIX}currentPepperVersion`,
      hasher: `${PREFIX}hasher`,
    },
    layouts.legacy.length > 0,
  );
  validateDuration(`${PREFIX}storageTimeoutMs`, o.storageTimeoutMs, true, MAX_TIMER_MS);
  for (const name of ["emitUsageEvents", "upgradeHashesOnUse"] as const) {
    if (o[name] !== undefined && typeof o[name] !== "boolean") {
      throw new TypeError(`${PREFIX}${name} must be a boolean`);
    }
  }
  const storageTimeoutMs = (o.storageTimeoutMs as number | undefined) ??
    DEFAULT_STORAGE_TIMEOUT_MS;
  const storage = new StorageAccess(
    o.storage,
    storageTimeoutMs,
    `${PREFIX}storage`,
    o.upgradeHashesOnUse === false ? ["replaceHash"] : [],
    redact,
  );
  if (o.namespace !== undefined) assertValidNamespace(o.namespace, `${PREFIX}namespace`);
  validateDuration(`${PREFIX}debounceMs`, o.debounceMs, false);
  for (const name of FUNCTION_OPTIONS) {
    if (o[name] !== undefined && typeof o[name] !== "function") {
      throw new TypeError(`${PREFIX}${name} must be a function`);
    }
  }
  const ttlPolicy = validateTtlPolicy(o.ttlPolicy);
  const retiredPepperVersions = validateRetiredVersions(
    o.retiredPepperVersions,
    hasher.currentVersion,
    storage.canCountHashes,
    `${PREFIX}retiredPepperVersions`,
  );
  const cache = buildCache(o.cache, storage, o.feed !== undefined);
  const f = options as ApiKeysServiceOptions;
  const monotonic = f.monotonicClock ?? performance.now.bind(performance);
  validateDuration(`${PREFIX}maxStalenessMs`, o.maxStalenessMs, false, MAX_MAX_STALENESS_MS);
  const feed = feedOptions(f.feed, f.maxStalenessMs, f.unknownPrefixLookups, PREFIX);
  const onAuthFailed = f.onAuthFailed;
  const authFailedFailed = warnOnce("onAuthFailed", redact);
  const clock = f.clock === undefined ? () => new Date() : checkedClock(f.clock, `${PREFIX}clock`);
  const dispatch = createDispatcher(f.onEvent, f.onEventError, "onEvent", true, redact);
  const refusals = checkAudit(o.audit, storage);
  const parts: { fleet?: FeedFollower; audit?: AuditLog; usage?: UsageRecorder } = {};
  // With the audit log, the jobs' events (expiry notices, ended rotations, exposed keys) are recorded
  // (after the log's load, when one comes first).
  const emitEvent: Dispatch<ApiKeyEvent> | undefined = refusals === undefined
    ? dispatch
    : (event) => {
      if (parts.audit !== undefined) parts.audit.observe(event);
      else loaded().then(() => parts.audit?.observe(event), auditLoadFailed);
      dispatch?.(event);
    };
  const auditLoadFailed = warnOnce("audit log load", redact);
  const limits = buildLimits(o.limiter, o.rateLimitResolver, o.creditThresholds, PREFIX, redact);
  const usage = usageOptions(
    o.usage,
    storage.usage !== undefined,
    `${PREFIX}usage`,
    refusals === true,
  );
  const taps: ApiKeyTaps = {};
  const load = async () => {
    const [fleetCode, auditCode, usageCode] = await Promise.all([
      feed && import("./verify/_fleet.ts"),
      refusals !== undefined ? import("./audit/_log.ts") : undefined,
      usage && import("./metering/_usage.ts"),
      storage.loaded(),
      keysImported(hasher),
    ]);
    const audit = auditCode && storage.audit &&
      new auditCode.AuditLog(storage.audit, o.audit, clock, dispatch, `${PREFIX}audit`, redact);
    parts.fleet = fleetCode?.compileFeed(
      f.feed,
      f.maxStalenessMs,
      f.unknownPrefixLookups,
      cache,
      monotonic,
      PREFIX,
      redact,
    );
    parts.usage = usageCode?.compileUsage(
      o.usage,
      storage.usage,
      clock,
      `${PREFIX}usage`,
      taps,
      audit?.recordsRefusals ? (...args) => audit.refusals(...args) : undefined,
      storageTimeoutMs + (limits?.timeoutMs ?? 0),
      redact,
    );
    parts.audit = audit;
  };
  let loading: Promise<void> | undefined;
  const loaded = () =>
    loading ??= load().catch((error) => {
      loading = undefined;
      throw error;
    });
  loaded().catch(() => {}); // started now; reported to whoever awaits it
  return Object.freeze({
    namespace: f.namespace ?? DEFAULT_API_KEY_NAMESPACE,
    layouts,
    redact,
    hasher,
    storage,
    cache,
    get fleet() {
      return parts.fleet;
    },
    debounceMs: f.debounceMs ?? DEFAULT_DEBOUNCE_MS,
    emitUsageEvents: f.emitUsageEvents ?? false,
    resolveExpiry: compileTtlPolicy(ttlPolicy),
    allowsLifetime: (lifetimeMs: number | null) => allowsLifetime(ttlPolicy, lifetimeMs),
    defaultLifetimeMs: ttlPolicy.defaultExpiresInMs ?? null,
    clock,
    monotonic,
    wallAt: f.clock === undefined && f.monotonicClock === undefined &&
        (limits !== undefined || usage !== undefined || f.emitUsageEvents === true)
      ? wallFromMonotonic()
      : undefined,
    idFactory: f.idFactory,
    emitEvent,
    audits: refusals !== undefined,
    get audit() {
      return parts.audit;
    },
    emitMetric: createDispatcher(f.onMetric, f.onMetricError, "onMetric", false, redact),
    emitAuthorizationMetric: createDispatcher(
      f.onAuthorizationMetric,
      f.onAuthorizationMetricError,
      "onAuthorizationMetric",
      false,
      redact,
    ),
    emitOperationMetric: createDispatcher(
      f.onOperationMetric,
      f.onOperationMetricError,
      "onOperationMetric",
      false,
      redact,
    ),
    notifyAuthFailed: onAuthFailed === undefined
      ? undefined
      : (prefix: string | null, code: ApiKeyErrorCode) =>
        callDetached(onAuthFailed, [prefix, code], authFailedFailed),
    upgrade: storage.canReplaceHash && f.upgradeHashesOnUse !== false
      ? new HashUpgrade(hasher, storage, emitEvent, clock)
      : undefined,
    retiredPepperVersions,
    limits,
    recordsUsage: usage !== undefined,
    get usage() {
      return parts.usage;
    },
    loaded,
    taps,
    warning: defaultNamespaceWarning(layouts, o.namespace),
  });
}
