/**
 * Best-effort `lastUsedAt` writes, debounced per key in memory.
 *
 * @module
 */
import { callDetached, warnOnce } from "./sinks.ts";
import type { ApiKeyStorage } from "./storage.ts";

const MAX_DEBOUNCE_ENTRIES = 100_000;

/**
 * Writes `lastUsedAt` at most once per key every `debounceMs` (0: every time);
 * a failing write (thrown or rejected) never delays or fails a verification
 * and is warned about once.
 */
export class LastUsedTracker {
  readonly #storage: ApiKeyStorage;
  readonly #debounceMs: number;
  readonly #clock: () => Date;
  readonly #monotonic: () => number;
  readonly #lastTouched = new Map<string, number>();
  readonly #writeFailed = warnOnce("touchLastUsed");

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
    const storage = this.#storage;
    callDetached(() => storage.touchLastUsed(keyId, this.#clock()), [], this.#writeFailed);
  }
}
