/**
 * Options of `ApiKeysService` (the same object `ApiKeysModule.forRoot` takes)
 * and their validation, which compiles them (once, at construction).
 *
 * @module
 */
import type { ApiKeyChangeFeed } from "./change_feed.ts";
import type { ApiKeyErrorCode } from "./errors.ts";
import type {
  ApiKeyAuthorizationMetric,
  ApiKeyEvent,
  ApiKeyOperationMetric,
  ApiKeyVerificationMetric,
} from "./events.ts";
import type { Sha256Hasher } from "./sha256_hasher.ts";
import type { LegacyKeyLayout } from "./key_format.ts";
import type { ApiKeyStorage } from "./storage/types.ts";
import type { ApiKeyTtlPolicy } from "./types.ts";
import type { RateLimiter } from "../rate_limits/mod.ts";
import type { ApiKeyRateLimitResolver } from "./metering/_limits.ts";
import type { ApiKeyUsageOptions } from "./metering/usage.ts";
import type { ApiKeyAuditOptions } from "./audit/types.ts";

/** Settings of the verification cache. */
export interface ApiKeyVerificationCacheOptions {
  /** How long a verified key is served from memory, in ms: 1 to 60,000 (default 30,000). */
  ttlMs?: number;
  /** Most keys held (least recently used evicted first; default 10,000). */
  maxEntries?: number;
}

/** Options of `ApiKeysService`. */
export interface ApiKeysServiceOptions {
  /**
   * Peppers by version (keys may be numeric strings); the current one at least
   * 32 bytes. Required unless `hasher` is given.
   */
  peppers?: Record<number | string, string>;
  /**
   * In place of `peppers` and `currentPepperVersion` (0.1's shape): a
   * `Sha256Hasher`, whose peppers and current version the service uses.
   */
  hasher?: Sha256Hasher;
  /** Where records live. */
  storage: ApiKeyStorage;
  /**
   * Namespace of generated keys (default `ak`). Keys of another namespace are
   * malformed, old ones too: `legacyKeyLayouts` keys carry this namespace
   * unless their layout names its own (`{ ...LEGACY_KEY_LAYOUTS["nestarc-v0"],
   * namespace: "Acme" }`).
   */
  namespace?: string;
  /**
   * Key layouts of another system accepted besides the current one (default
   * none): built-in names (`"nestarc-v0"`) or descriptions. A legacy key is
   * parsed into a prefix and a secret and looked up like any other; new keys
   * always have the current layout. The header rules, their length limit and
   * the service's log lines cover these layouts.
   */
  legacyKeyLayouts?: readonly LegacyKeyLayout[];
  /** Pepper version for new hashes (default: the highest configured). */
  currentPepperVersion?: number;
  /**
   * Pepper versions retired (default none: no check). With it, the service
   * refuses to start (`ready()`, the Nest module's init) while usable records
   * remain on one of them or on the `sha256` scheme, naming the count; `[]`
   * checks `sha256` only. After start too, `importKeys` refuses records on
   * them (or on `sha256`), and a record on them verifies as `api_key_invalid`,
   * as on an unconfigured version. Needs the storage capability `countHashes`;
   * must not include the current version.
   */
  retiredPepperVersions?: readonly number[];
  /**
   * Re-hash a record verified on a legacy hash scheme or an old pepper version
   * with the current ones, through the storage's `replaceHash` (default true).
   * `false` while another deployment that knows only the old hashes reads the
   * same records (a rolling deploy, a possible rollback): such records keep
   * verifying as stored, and nothing is written.
   */
  upgradeHashesOnUse?: boolean;
  /** Minimum interval between `lastUsedAt` writes per key, in ms (default 60,000; 0 = every use). */
  debounceMs?: number;
  /** Expiry policy of create and rotate. */
  ttlPolicy?: ApiKeyTtlPolicy;
  /** Emit `api_key.used` after each successful verify/authorize (default false). */
  emitUsageEvents?: boolean;
  /** Event sink (sync or async). */
  onEvent?: (event: ApiKeyEvent) => void | Promise<void>;
  /** Receives errors of `onEvent` (default: one console warning, then silence). */
  onEventError?: (error: unknown, event: ApiKeyEvent) => void;
  /** Metric sink (sync or async). */
  onMetric?: (metric: ApiKeyVerificationMetric) => void | Promise<void>;
  /** Receives errors of `onMetric` (default: one console warning, then silence). */
  onMetricError?: (error: unknown, metric: ApiKeyVerificationMetric) => void;
  /** Sink of `api_key.authorization`, a refusal after a proven secret (sync or async). */
  onAuthorizationMetric?: (metric: ApiKeyAuthorizationMetric) => void | Promise<void>;
  /** Receives errors of `onAuthorizationMetric` (default: one console warning, then silence). */
  onAuthorizationMetricError?: (error: unknown, metric: ApiKeyAuthorizationMetric) => void;
  /** Sink of `api_key.operation`, a create or rotate out of prefix attempts (sync or async). */
  onOperationMetric?: (metric: ApiKeyOperationMetric) => void | Promise<void>;
  /** Receives errors of `onOperationMetric` (default: one console warning, then silence). */
  onOperationMetricError?: (error: unknown, metric: ApiKeyOperationMetric) => void;
  /**
   * Called for each failed verification or authorization.
   *
   * @deprecated Seed 0.4: read the `api_key.auth_failed` (or
   * `api_key.authorization_denied`) event from `onEvent` instead; it goes in
   * the next major version.
   */
  onAuthFailed?: (prefix: string | null, code: ApiKeyErrorCode) => void;
  /**
   * Verification cache. Default: on (30 s, 10,000 keys) when the storage has the
   * `peekByPrefix` capability (in-process storage such as `InMemoryApiKeyStorage`)
   * or a `feed` is set, off otherwise. `false` turns it off.
   */
  cache?: false | ApiKeyVerificationCacheOptions;
  /**
   * A change feed every instance on the same storage follows: `createPostgresFeed`
   * (`@saferoute/api-kit/api-keys/postgres`) for a fleet on one PostgreSQL, or one
   * `InMemoryApiKeyChangeFeed` shared by the services over one in-memory storage.
   * Each change drops the cached entry of its key, everywhere; cached verifications
   * are served only while the feed's `stalenessMs` is within `maxStalenessMs`, so a
   * revocation, rotation or creation on one instance holds on every other within
   * that bound. When the feed has `snapshot`, the service also keeps the set of
   * stored prefixes and rejects an unknown prefix without a storage lookup (after
   * the same HMAC work) while the feed is fresh, beyond `unknownPrefixLookups`. The service subscribes on its first
   * verify or write and follows the feed until the feed is closed; closing it is
   * the caller's (`ApiKeysModule` closes the feed of its options when the app
   * closes). See docs/operations.md, "Fleets: the change feed".
   */
  feed?: ApiKeyChangeFeed;
  /**
   * With `feed`: the most the feed may lag, in ms, for cached verifications and
   * the prefix set to be trusted (0 to 60,000; default 2,000). Past it, every
   * verify goes to storage, so with the database down requests fail with
   * `ApiKeyStorageError` (503) instead of being answered from memory.
   */
  maxStalenessMs?: number;
  /**
   * With `feed`: lookups per second (per instance) for prefixes the prefix set
   * lacks, so a key created on another instance is accepted before its
   * `created` notice arrives; past the budget such a prefix is refused without
   * a lookup. `perSecond`: 0 to 10,000 (default 10; 0: never look up).
   */
  unknownPrefixLookups?: { perSecond: number };
  /**
   * Usage per key and UTC hour (default off; `true` for the defaults): counts
   * kept in memory and flushed every `flushIntervalMs` (default 10,000), with
   * `lastUsedAt` (which then ignores `debounceMs`). Needs the storage
   * capabilities `recordUsage` and `readUsage`; call `close()` on shutdown.
   */
  usage?: boolean | ApiKeyUsageOptions;
  /** Deadline of each storage call, in ms (default 5,000). */
  storageTimeoutMs?: number;
  /** Wall clock (default `() => new Date()`). */
  clock?: () => Date;
  /**
   * Record id factory (default UUIDv7): ids of 1 to 200 characters, not only
   * spaces, printable; another answer makes create throw a `TypeError`.
   */
  idFactory?: () => string;
  /** Monotonic clock in ms for durations (default `performance.now`). */
  monotonicClock?: () => number;
  /**
   * Enforces rate limits in `authorize`/`authorizeRequest` (`createRateLimiter` of
   * `./rate-limits`): after the key, IP, environment and scope checks pass, the key's
   * policies (or the resolver's) are checked and a key with credits spends the route's
   * `cost`, in one atomic step; a denial is `api_key_rate_limited` or
   * `api_key_usage_exceeded` (429).
   */
  limiter?: RateLimiter;
  /** With `limiter`: the policies of each request in place of the key's (see `ApiKeyRateLimitResolver`). */
  rateLimitResolver?: ApiKeyRateLimitResolver;
  /**
   * With `limiter`: balances (1–8 safe integers ≥ 1; default none) whose
   * crossing by a spend emits `api_key.credits_low`, once per key, threshold
   * and refill period across a fleet.
   */
  creditThresholds?: readonly number[];
  /**
   * With a `limiter` whose store keeps credit balances outside the database
   * (Redis, `drainCreditChanges`): how often the balances spent or changed
   * are written back to the keys' records, in ms (100 to 3,600,000; default
   * 10,000); also on `close()`. A Redis that loses a balance reloads it from
   * there, refunding at most one interval of spends. With any store, also how
   * often an `updateCredits` whose write to the records failed is written again.
   */
  persistIntervalMs?: number;
  /**
   * The verifiable audit log (default off; see docs/security.md, "The audit
   * log"): each create, import, rotate, revoke, rename and credit change, the
   * expiry notices, ended rotations and exposed keys recorded in a hash chain
   * per tenant, written in the same step as the change. Needs the storage
   * capabilities `appendAudit`, `readAudit` and `markRevokedIfActive` (a
   * `TypeError` at construction otherwise).
   */
  audit?: ApiKeyAuditOptions;
}
