/**
 * The verify path of `ApiKeysService`: parse → cache → find by prefix →
 * secret → environment segment → revoked → expired, with one metric per verify. Until the secret is
 * proven, every failure does the same work in the same order.
 *
 * @module
 */
import { ApiKeyStorageError } from "./errors.ts";
import type { Sha256Hasher } from "./hasher.ts";
import { parseKey, redactApiKeys } from "./key_format.ts";
import type { LastUsedTracker } from "./last_used.ts";
import { isApiKeyRecord } from "./record.ts";
import { callStorage, type SyncPrefixLookup } from "./storage_calls.ts";
import type { ApiKeyStorage } from "./storage.ts";
import type { ApiKeyContext, ApiKeyRecord } from "./types.ts";
import { constantTimeEqual, type VerificationCache } from "./verification_cache.ts";
import type { VerificationReporter } from "./verification_reporter.ts";

/** What an `ApiKeyVerifier` verifies with. */
export interface ApiKeyVerifierOptions {
  /** Storage of the key records. */
  storage: ApiKeyStorage;
  /** Synchronous lookup of in-process storage (skips deadline and copy), if any. */
  peek: SyncPrefixLookup | undefined;
  /** Deadline of a storage lookup (ms). */
  storageTimeoutMs: number;
  /** Hasher of the secrets. */
  hasher: Sha256Hasher;
  /** Namespace of the accepted keys. */
  namespace: string;
  /** Verification cache, if enabled. */
  cache: VerificationCache | undefined;
  /** Life of a cache entry (ms). */
  cacheTtlMs: number;
  /** Reporter of metrics and failures. */
  reporter: VerificationReporter;
  /** Writer of `lastUsedAt`. */
  lastUsed: LastUsedTracker;
  /** Wall clock (expiry checks). */
  clock: () => Date;
  /** Monotonic clock in ms (durations, cache life). */
  monotonic: () => number;
}

function freezeContext(record: Readonly<ApiKeyRecord>): ApiKeyContext {
  const context: ApiKeyContext = {
    keyId: record.id,
    tenantId: record.tenantId,
    environment: record.environment,
    scopes: Object.freeze([...record.scopes]) as string[],
    prefix: record.prefix,
  };
  if (record.allowedIpCidrs !== undefined && record.allowedIpCidrs.length > 0) {
    context.allowedIpCidrs = Object.freeze([...record.allowedIpCidrs]) as string[];
  }
  return Object.freeze(context);
}

/**
 * Stands in for the cached secret when there is none: as long as a secret, never equal to
 * one (not base62). A literal, so it is a flat string like the secrets it is compared with.
 */
const NO_SECRET = "################################";

/** The stand-in looked up among the checked records when a prefix is unknown. */
const CHECKED = Object.freeze({});

/** Verifies raw keys; the contexts it returns are frozen. */
export class ApiKeyVerifier {
  readonly #storage: ApiKeyStorage;
  readonly #peek: SyncPrefixLookup | undefined;
  readonly #storageTimeoutMs: number;
  readonly #hasher: Sha256Hasher;
  readonly #namespace: string;
  readonly #cache: VerificationCache | undefined;
  readonly #cacheTtlMs: number;
  readonly #reporter: VerificationReporter;
  readonly #lastUsed: LastUsedTracker;
  readonly #clock: () => Date;
  readonly #monotonic: () => number;
  readonly #checkedRecords = new WeakSet<object>([CHECKED]);
  readonly #retiredVersionsWarned = new Set<number>();

  /** Keeps the collaborators of `options`. */
  constructor(options: ApiKeyVerifierOptions) {
    this.#storage = options.storage;
    this.#peek = options.peek;
    this.#storageTimeoutMs = options.storageTimeoutMs;
    this.#hasher = options.hasher;
    this.#namespace = options.namespace;
    this.#cache = options.cache;
    this.#cacheTtlMs = options.cacheTtlMs;
    this.#reporter = options.reporter;
    this.#lastUsed = options.lastUsed;
    this.#clock = options.clock;
    this.#monotonic = options.monotonic;
  }

  /**
   * Verifies `rawKey` (see `ApiKeysService.verify`); `emitUsed` says whether a
   * success emits `api_key.used` (authorize passes `false` and emits it only
   * after its own checks).
   */
  async verify(rawKey: string, emitUsed: boolean): Promise<ApiKeyContext> {
    const start = this.#monotonic();
    const parsed = parseKey(rawKey);
    if (parsed === null || parsed.namespace !== this.#namespace) {
      throw this.#reporter.failure(start, "malformed", "api_key_malformed", null, undefined);
    }
    const { prefix, secret, environment } = parsed;
    // Until the secret is proven, every path does the same work in the same order: one cache
    // comparison, one storage lookup, one HMAC verification, the same awaits.
    const cache = this.#cache;
    if (cache !== undefined) {
      // Compared with a stand-in when nothing is cached: a cached prefix costs a wrong secret
      // what an unknown one does. A hit is the very key verified (same secret and environment);
      // anything else is settled by the storage path.
      const entry = cache.get(prefix);
      if (
        constantTimeEqual(entry?.secret ?? NO_SECRET, secret) && entry !== undefined &&
        entry.context.environment === environment
      ) {
        // `start` is now; a key without expiry needs no wall-clock read.
        if (
          start < entry.cachedUntil &&
          (entry.expiresAtMs === Infinity || this.#clock().getTime() < entry.expiresAtMs)
        ) {
          cache.touch(prefix);
          return this.#verified(start, entry.context, emitUsed);
        }
        cache.invalidate(prefix);
      }
    }
    // Read before the lookup: an invalidation from here on drops this verify's fill.
    const generation = cache?.generation ?? 0;
    let record: Readonly<ApiKeyRecord> | null;
    const peek = this.#peek;
    if (peek !== undefined) {
      // In-process storage: no deadline timer, no copy, no extra await. A stored record is
      // checked once (the storage only ever replaces its dates with valid ones).
      record = peek(prefix);
      // Looked up for an unknown prefix too (a stand-in), so it costs what a stored one does.
      if (!this.#checkedRecords.has(record ?? CHECKED) && record !== null) {
        if (!isApiKeyRecord(record)) {
          this.#reporter.metric(start, "error", environment);
          throw new ApiKeyStorageError("findByPrefix", new Error("malformed record"));
        }
        this.#checkedRecords.add(record);
      }
    } else {
      try {
        record = await callStorage(
          "findByPrefix",
          this.#storageTimeoutMs,
          () => this.#storage.findByPrefix(prefix),
          true,
        );
      } catch (error) {
        this.#reporter.metric(start, "error", environment);
        throw error;
      }
    }
    // An unknown prefix and a retired pepper cost the hasher what a stored key does.
    const matches =
      await (record === null
        ? this.#hasher.dummyVerify(secret)
        : this.#hasher.verify(secret, record.hash, record.pepperVersion));
    if (record === null || !matches) {
      // A retired pepper is warned about; looked up for an unknown prefix too (version 0 is
      // never configured), so it costs what a stored key does.
      const version = record === null ? 0 : record.pepperVersion;
      if (!this.#hasher.hasVersion(version) && record !== null) this.#warnRetiredVersion(version);
      throw this.#reporter.failure(start, "invalid", "api_key_invalid", prefix, environment);
    }
    const known = { keyId: record.id, tenantId: record.tenantId, environment: record.environment };
    // The secret is proven: the key's <env> segment must be the record's (the checksum is public).
    if (environment !== record.environment) {
      throw this.#reporter.failure(start, "invalid", "api_key_invalid", prefix, environment, known);
    }
    const context = freezeContext(record);
    if (record.revokedAt !== null) {
      throw this.#reporter.failure(start, "revoked", "api_key_revoked", prefix, environment, known);
    }
    const expiresAtMs = record.expiresAt === null ? Infinity : record.expiresAt.getTime();
    if (expiresAtMs <= this.#clock().getTime()) {
      throw this.#reporter.failure(start, "expired", "api_key_expired", prefix, environment, known);
    }
    cache?.set(prefix, {
      secret,
      context,
      expiresAtMs,
      cachedUntil: this.#monotonic() + this.#cacheTtlMs,
    }, generation);
    return this.#verified(start, context, emitUsed);
  }

  #verified(start: number, context: ApiKeyContext, emitUsed: boolean): ApiKeyContext {
    this.#lastUsed.touch(context.keyId);
    this.#reporter.metric(start, "success", context.environment);
    if (emitUsed) this.#reporter.used(context);
    return context;
  }

  #warnRetiredVersion(version: number): void {
    if (this.#retiredVersionsWarned.has(version)) return;
    this.#retiredVersionsWarned.add(version);
    console.warn(redactApiKeys(
      `api-keys: a key record uses pepper version ${version}, which is not configured; ` +
        "such keys verify as invalid",
    ));
  }
}
