/**
 * Options of `ApiKeysService` (the same object `ApiKeysModule.forRoot` takes)
 * and their validation, done once at construction.
 *
 * @module
 */
import type { ApiKeyErrorCode } from "./errors.ts";
import type { ApiKeyEvent, ApiKeyVerificationMetric } from "./events.ts";
import { parsePeppers, resolveCurrentVersion } from "./hasher.ts";
import { durationProblem } from "./input_validation.ts";
import { assertValidNamespace } from "./key_format.ts";
import { API_KEY_STORAGE_METHODS, type ApiKeyStorage } from "./storage.ts";
import type { ApiKeyTtlPolicy } from "./types.ts";

/**
 * Settings of the verification cache.
 *
 * @example
 * ```ts
 * import type { ApiKeyVerificationCacheOptions } from "./service_options.ts";
 * const cache: ApiKeyVerificationCacheOptions = { ttlMs: 10_000, maxEntries: 5_000 };
 * ```
 */
export interface ApiKeyVerificationCacheOptions {
  /** How long a verified key is served from memory, in ms: 1 to 60,000 (default 30,000). */
  ttlMs?: number;
  /** Most keys held (least recently used evicted first; default 10,000). */
  maxEntries?: number;
}

/**
 * Options of `ApiKeysService`.
 *
 * @example
 * ```ts
 * import type { ApiKeysServiceOptions } from "./service_options.ts";
 * import { InMemoryApiKeyStorage } from "./in_memory_storage.ts";
 * const options: ApiKeysServiceOptions = {
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 *   namespace: "acme",
 * };
 * ```
 */
export interface ApiKeysServiceOptions {
  /** Peppers by version (keys may be numeric strings); each at least 32 bytes. */
  peppers: Record<number | string, string>;
  /** Where records live. */
  storage: ApiKeyStorage;
  /** Namespace of generated keys (default `ak`). Keys of another namespace are malformed. */
  namespace?: string;
  /** Pepper version for new hashes (default: the highest configured). */
  currentPepperVersion?: number;
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
  /** Called for each failed verification or authorization. */
  onAuthFailed?: (prefix: string | null, code: ApiKeyErrorCode) => void;
  /**
   * Verification cache. Default: on (30 s, 10,000 keys) with `InMemoryApiKeyStorage`,
   * off with any other storage. `false` turns it off.
   */
  cache?: false | ApiKeyVerificationCacheOptions;
  /** Deadline of each storage call, in ms (default 5,000). */
  storageTimeoutMs?: number;
  /** Wall clock (default `() => new Date()`). */
  clock?: () => Date;
  /** Record id factory (default UUIDv7). */
  idFactory?: () => string;
  /** Monotonic clock in ms for durations (default `performance.now`). */
  monotonicClock?: () => number;
}

const PREFIX = "ApiKeysServiceOptions.";
const FUNCTION_OPTIONS = [
  "onEvent",
  "onEventError",
  "onMetric",
  "onMetricError",
  "onAuthFailed",
  "clock",
  "idFactory",
  "monotonicClock",
] as const;

/** Longest timer delay: a longer `setTimeout` fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function isNonNegativeNumber(value: unknown): boolean {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
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

function validateTtlPolicy(policy: unknown): void {
  if (policy === undefined) return;
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
}

function validateCache(cache: unknown): void {
  if (cache === undefined || cache === false) return;
  const label = `${PREFIX}cache`;
  if (typeof cache !== "object" || cache === null) {
    throw new TypeError(`${label} must be false or { ttlMs, maxEntries }`);
  }
  const { ttlMs, maxEntries } = cache as ApiKeyVerificationCacheOptions;
  if (ttlMs !== undefined && !(isNonNegativeNumber(ttlMs) && ttlMs > 0 && ttlMs <= 60_000)) {
    throw new TypeError(`${label}.ttlMs must be a number of milliseconds from 1 to 60000`);
  }
  if (maxEntries !== undefined && !(Number.isSafeInteger(maxEntries) && maxEntries > 0)) {
    throw new TypeError(`${label}.maxEntries must be a positive integer`);
  }
}

/**
 * Validates service options; throws a `TypeError` whose message names the
 * option (e.g. `ApiKeysServiceOptions.debounceMs must be a non-negative number
 * of milliseconds`). Durations (`debounceMs`, `storageTimeoutMs`, the TTL
 * policy's) are finite and end by 9999-12-31T23:59:59.999Z counted from now;
 * `debounceMs` may be 0, the others must be positive; `storageTimeoutMs` is at
 * most 2147483647 (the longest timer).
 *
 * @example
 * ```ts
 * import { validateApiKeysServiceOptions } from "./service_options.ts";
 * try {
 *   validateApiKeysServiceOptions({ peppers: {} });
 * } catch (error) {
 *   console.log((error as TypeError).message);
 * }
 * ```
 */
export function validateApiKeysServiceOptions(options: unknown): void {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("ApiKeysServiceOptions must be an object");
  }
  const o = options as Record<string, unknown>;
  const peppers = parsePeppers(o.peppers, `${PREFIX}peppers`);
  resolveCurrentVersion(peppers, o.currentPepperVersion, `${PREFIX}currentPepperVersion`);
  const storage = o.storage as Record<string, unknown> | undefined;
  if (typeof storage !== "object" || storage === null) {
    throw new TypeError(`${PREFIX}storage is required`);
  }
  for (const method of API_KEY_STORAGE_METHODS) {
    if (typeof storage[method] !== "function") {
      throw new TypeError(`${PREFIX}storage is missing method ${method}`);
    }
  }
  if (
    storage.markRevokedIfActive !== undefined && typeof storage.markRevokedIfActive !== "function"
  ) {
    throw new TypeError(`${PREFIX}storage.markRevokedIfActive must be a function`);
  }
  if (o.namespace !== undefined) assertValidNamespace(o.namespace, `${PREFIX}namespace`);
  validateDuration(`${PREFIX}debounceMs`, o.debounceMs, false);
  validateDuration(`${PREFIX}storageTimeoutMs`, o.storageTimeoutMs, true, MAX_TIMER_MS);
  if (o.emitUsageEvents !== undefined && typeof o.emitUsageEvents !== "boolean") {
    throw new TypeError(`${PREFIX}emitUsageEvents must be a boolean`);
  }
  for (const name of FUNCTION_OPTIONS) {
    if (o[name] !== undefined && typeof o[name] !== "function") {
      throw new TypeError(`${PREFIX}${name} must be a function`);
    }
  }
  validateTtlPolicy(o.ttlPolicy);
  validateCache(o.cache);
}
