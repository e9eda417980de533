/**
 * The verification cache of `ApiKeysService`: recently verified keys by
 * prefix (and proven keys found revoked or expired), LRU-bounded, each entry
 * valid for at most its TTL.
 *
 * It keeps the presented secret of each cached key in process memory so a hit
 * costs one constant-time string comparison instead of an HMAC.
 *
 * @module
 */
import type { ApiKeyContext } from "../types.ts";

/** One cached verification. */
export interface VerificationCacheEntry {
  /** Secret the key was verified with. */
  secret: string;
  /** Legacy layout the key was presented in (absent: the current one); a hit needs the same. */
  layout?: string;
  /** Context returned on a hit. */
  context: ApiKeyContext;
  /** Record expiry (wall-clock ms, `acceptedUntilMs`), `Infinity` without expiry. */
  expiresAtMs: number;
  /** End of this entry's life (monotonic ms). */
  cachedUntil: number;
  /** A proven key's final refusal (revoked and expired never end): a hit answers it. */
  refused?: "revoked" | "expired";
}

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** An entry in the recency list. */
interface Slot {
  readonly prefix: string;
  entry: VerificationCacheEntry;
  older: Slot | undefined;
  newer: Slot | undefined;
}

/**
 * LRU map from prefix to entry: a `Map` finds the entry, a doubly linked list
 * keeps the recency order (a hit, once its secret matched, moves its entry to
 * the newest end; the oldest is evicted first). A hit never deletes and
 * re-inserts in the `Map`: V8's `Map` makes that cost grow with its size.
 *
 * Invalidation wins over fills in flight: the cache has a generation number
 * that every `invalidate` and `clear` moves. A verify reads `generation`
 * before its storage lookup and passes it to `set`, which stores nothing if
 * the generation has moved since (the record it read may predate a revoke or
 * rotate that has finished meanwhile).
 */
export class VerificationCache {
  readonly #slots = new Map<string, Slot>();
  #oldest: Slot | undefined;
  #newest: Slot | undefined;
  readonly #maxEntries: number;
  /** Life of an entry, in ms. */
  readonly ttlMs: number;
  #generation = 0;

  /** Creates a cache holding at most `maxEntries` keys, each for at most `ttlMs`. */
  constructor(maxEntries: number, ttlMs: number) {
    this.#maxEntries = maxEntries;
    this.ttlMs = ttlMs;
  }

  /** Number of entries. */
  get size(): number {
    return this.#slots.size;
  }

  /** Current generation; moves on every `invalidate` and `clear`. */
  get generation(): number {
    return this.#generation;
  }

  /** The entry of `prefix` (its place in the LRU order unchanged: see `touch`). */
  get(prefix: string): VerificationCacheEntry | undefined {
    return this.#slots.get(prefix)?.entry;
  }

  /** Marks the entry of `prefix` most recently used (after its secret matched). */
  touch(prefix: string): void {
    const slot = this.#slots.get(prefix);
    if (slot !== undefined && slot !== this.#newest) {
      this.#unlink(slot);
      this.#append(slot);
    }
  }

  /**
   * Stores an entry read at `generation` (evicting the least recently used
   * beyond the bound), unless the generation has moved since; whether it was stored.
   */
  set(prefix: string, entry: VerificationCacheEntry, generation: number): boolean {
    if (generation !== this.#generation) return false;
    const slot = this.#slots.get(prefix);
    if (slot !== undefined) {
      slot.entry = entry;
      this.touch(prefix);
      return true;
    }
    const added: Slot = { prefix, entry, older: undefined, newer: undefined };
    this.#slots.set(prefix, added);
    this.#append(added);
    if (this.#slots.size > this.#maxEntries) this.#remove(this.#oldest!);
    return true;
  }

  /** Drops the entry of `prefix` and moves the generation, so no fill in flight lands. */
  invalidate(prefix: string): void {
    this.#generation++;
    const slot = this.#slots.get(prefix);
    if (slot !== undefined) this.#remove(slot);
  }

  /** Drops every entry and moves the generation (a change feed's reset: anything may have changed). */
  clear(): void {
    this.#generation++;
    this.#slots.clear();
    this.#oldest = this.#newest = undefined;
  }

  #remove(slot: Slot): void {
    this.#unlink(slot);
    this.#slots.delete(slot.prefix);
  }

  #unlink(slot: Slot): void {
    if (slot.older === undefined) this.#oldest = slot.newer;
    else slot.older.newer = slot.newer;
    if (slot.newer === undefined) this.#newest = slot.older;
    else slot.newer.older = slot.older;
    slot.older = slot.newer = undefined;
  }

  #append(slot: Slot): void {
    slot.older = this.#newest;
    if (this.#newest === undefined) this.#oldest = slot;
    else this.#newest.newer = slot;
    this.#newest = slot;
  }
}
