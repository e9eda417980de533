/**
 * Rotations that wait for the new key (`graceStarts: "first-use"`): the
 * rotation saves its wait before rotating (`saveRotationWait`), with the old
 * key's `expiresAt` at the upper bound; the new key's first successful verify
 * on an instance lowers it to min(that bound, first use + grace) with a
 * compare-and-set (`lowerExpiry`), off the request path. Whichever instance
 * lowers first wins; the others' compare-and-set finds the bound gone and
 * changes nothing. When the lowering fails (storage down), the old key keeps
 * working until the upper bound, never longer.
 *
 * @module
 */
import type { RotationWaitAccess } from "../storage/_access.ts";
import type { Settings } from "../_settings.ts";
import { warnOnce } from "../_sinks.ts";
import { callDetached } from "../../telemetry/_detached.ts";
import type { ApiKeyChangeKind } from "../change_feed.ts";

/** Most new keys whose first use one instance remembers having handled. */
const MAX_SEEN = 10_000;

/**
 * The waiting-rotation capability of the storage, or a `TypeError` saying
 * that a rotation with `graceStarts: "first-use"` needs it.
 */
export function requireRotationWaits(s: Settings): RotationWaitAccess {
  const waits = s.storage.rotationWaits;
  if (waits !== undefined) return waits;
  throw new TypeError(
    'api-keys: rotate with graceStarts "first-use" needs the storage capabilities ' +
      "saveRotationWait, findRotationWait and lowerExpiry (InMemoryApiKeyStorage has them; " +
      "PrismaApiKeyStorage with its rotationWaits option); see ApiKeyStorage",
  );
}

/**
 * Tells this instance, and through the change feed the fleet, that the key
 * of `prefix` changed: drops it from the verification cache and publishes it
 * to a feed that takes writes (the in-memory feed; PostgreSQL's triggers
 * publish the `lowerExpiry` update by themselves).
 */
function notifyChange(s: Settings, kind: ApiKeyChangeKind, prefix: string): void {
  s.cache?.invalidate(prefix);
  s.fleet?.wrote(kind, prefix);
}

/**
 * Watches the first successful verifies of keys for the waits of their
 * rotations (see the module documentation).
 */
export class FirstUseWatch {
  readonly #s: Settings;
  /** Keys already handled here, oldest first. */
  readonly #seen = new Set<string>();
  /** Lowerings running (`settled` waits for them). */
  readonly #pending = new Set<Promise<void>>();
  readonly #failed: (error: unknown) => void;

  /** A watch over `settings`. */
  constructor(settings: Settings) {
    this.#s = settings;
    this.#failed = warnOnce(
      "the first use of a waiting rotation (the old key keeps its bound)",
      settings.redact,
    );
  }

  /**
   * The key `keyId`, never used before, was just verified at `firstUseMs`
   * (the request's time): when it is the new key of a waiting rotation,
   * lowers the old key's expiry in the background (not awaited; `settled`
   * waits for it; failures contained and warned about once). Each key is
   * handled once per instance, but for one whose lowering failed.
   */
  seen(keyId: string, firstUseMs: number): void {
    const s = this.#s;
    const waits = s.storage.rotationWaits;
    if (waits === undefined || this.#seen.has(keyId)) return;
    if (this.#seen.size >= MAX_SEEN) this.#seen.delete(this.#seen.values().next().value!);
    this.#seen.add(keyId);
    const lowering = new Promise<void>((resolve) => resolve(this.#lower(waits, keyId, firstUseMs)))
      .then(undefined, (error) => {
        this.#seen.delete(keyId); // another first use here tries again
        callDetached(this.#failed, [error], () => {});
      })
      .finally(() => this.#pending.delete(lowering));
    this.#pending.add(lowering);
  }

  /**
   * Resolves once no lowering runs (each bounded by the storage deadline of its
   * calls): `ApiKeysService.close()` waits for it, so a process stopping right
   * after a first use does not lose it.
   */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending);
  }

  async #lower(waits: RotationWaitAccess, newKeyId: string, firstUseMs: number): Promise<void> {
    const s = this.#s;
    const wait = await waits.find(newKeyId);
    if (wait === null) return;
    const bound = wait.waitEndsAt.getTime();
    const next = Math.min(bound, firstUseMs + wait.gracePeriodMs);
    if (next === bound) return;
    const old = await s.storage.findById(wait.oldKeyId);
    // Only the rotation that saved the wait, while its bound stands.
    if (old === null || old.replacedByKeyId !== newKeyId || old.expiresAt?.getTime() !== bound) {
      return;
    }
    if (await waits.lowerExpiry(old.id, wait.waitEndsAt, new Date(next))) {
      notifyChange(s, "updated", old.prefix);
    }
  }
}
