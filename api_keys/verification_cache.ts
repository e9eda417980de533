/**
 * The verification cache of `ApiKeysService`: recently verified keys by
 * prefix, LRU-bounded, each entry valid for at most its TTL.
 *
 * It keeps the presented secret of each cached key in process memory so a hit
 * costs one constant-time string comparison instead of an HMAC.
 *
 * @module
 */
import type { ApiKeyContext } from "./types.ts";

/**
 * One cached verification.
 *
 * @example
 * ```ts
 * import type { VerificationCacheEntry } from "./verification_cache.ts";
 * declare const entry: VerificationCacheEntry;
 * entry.context.keyId;
 * ```
 */
export interface VerificationCacheEntry {
  /** Secret the key was verified with. */
  secret: string;
  /** Context returned on a hit. */
  context: ApiKeyContext;
  /** Record expiry (wall-clock ms), `Infinity` without expiry. */
  expiresAtMs: number;
  /** End of this entry's life (monotonic ms). */
  cachedUntil: number;
}

/**
 * Compares two strings in time that depends only on their lengths.
 *
 * @example
 * ```ts
 * import { constantTimeEqual } from "./verification_cache.ts";
 * constantTimeEqual("abc", "abc"); // true
 * ```
 */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * LRU map from prefix to entry (a `Map` keeps insertion order; a hit moves
 * the entry to the end, the oldest is evicted first).
 *
 * @example
 * ```ts
 * import { VerificationCache } from "./verification_cache.ts";
 * const cache = new VerificationCache(100);
 * cache.get("AbCdEfGhIjKl"); // undefined
 * ```
 */
export class VerificationCache {
  readonly #entries = new Map<string, VerificationCacheEntry>();
  readonly #maxEntries: number;

  /** Creates a cache holding at most `maxEntries` keys. */
  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  /** Number of entries. */
  get size(): number {
    return this.#entries.size;
  }

  /** The entry of `prefix`, marked most recently used. */
  get(prefix: string): VerificationCacheEntry | undefined {
    const entry = this.#entries.get(prefix);
    if (entry !== undefined) {
      this.#entries.delete(prefix);
      this.#entries.set(prefix, entry);
    }
    return entry;
  }

  /** Stores an entry, evicting the least recently used beyond the bound. */
  set(prefix: string, entry: VerificationCacheEntry): void {
    this.#entries.delete(prefix);
    this.#entries.set(prefix, entry);
    if (this.#entries.size > this.#maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
  }

  /** Drops the entry of `prefix`. */
  delete(prefix: string): void {
    this.#entries.delete(prefix);
  }
}
