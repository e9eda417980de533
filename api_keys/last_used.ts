/**
 * Best-effort `lastUsedAt` writes, debounced per key in memory.
 *
 * @module
 */
import type { ApiKeyStorage } from "./storage.ts";

const MAX_DEBOUNCE_ENTRIES = 100_000;

/**
 * Writes `lastUsedAt` at most once per key every `debounceMs` (0: every time);
 * a failing write never delays or fails a verification.
 */
export class LastUsedTracker {
  readonly #storage: ApiKeyStorage;
  readonly #debounceMs: number;
  readonly #clock: () => Date;
  readonly #monotonic: () => number;
  readonly #lastTouched = new Map<string, number>();

  /** Tracks writes to `storage`, debounced by `debounceMs` on the `monotonic` clock. */
  constructor(
    storage: ApiKeyStorage,
    debounceMs: number,
    clock: () => Date,
    monotonic: () => number,
  ) {
    this.#storage = storage;
    this.#debounceMs = debounceMs;
    this.#clock = clock;
    this.#monotonic = monotonic;
  }

  /** Records a use of `keyId`, unless one was recorded within the debounce window. */
  touch(keyId: string): void {
    const now = this.#monotonic();
    if (this.#debounceMs > 0) {
      const last = this.#lastTouched.get(keyId);
      if (last !== undefined && now - last < this.#debounceMs) return;
      if (last === undefined && this.#lastTouched.size >= MAX_DEBOUNCE_ENTRIES) {
        this.#lastTouched.delete(this.#lastTouched.keys().next().value!);
      }
      this.#lastTouched.set(keyId, now);
    }
    try {
      this.#storage.touchLastUsed(keyId, this.#clock()).then(undefined, () => {});
    } catch {
      // best effort: a failing lastUsedAt write never fails a verification
    }
  }
}
