/**
 * How `ApiKeysService` follows a change feed (option `feed`): each notice but
 * `created` drops what the verification cache holds about its prefix, a reset
 * drops it all; cached verifications are served only while the feed's
 * staleness is within `maxStalenessMs`; and, when the feed can list the stored
 * prefixes (`snapshot`), a set of every stored prefix lets a verify reject an
 * unknown prefix without a storage lookup, beyond a small budget of lookups
 * per second (`unknownPrefixLookups`) that lets a key created elsewhere in
 * before its `created` notice arrives.
 *
 * The set is exact: the snapshot's prefixes, then every change with a higher
 * counter (`created` adds, `deleted` removes; a revoked, rotated or expired
 * key keeps its prefix). A reset discards it until a new snapshot. A prefix
 * this service writes is added at once (a prefix wrongly present costs one
 * lookup; one wrongly absent would refuse a valid key).
 *
 * @module
 */
import type {
  ApiKeyChange,
  ApiKeyChangeFeed,
  ApiKeyChangeKind,
  ApiKeyChangeNotice,
} from "../change_feed.ts";
import type { VerificationCache } from "./_cache.ts";
import { type Redact, warnOnce } from "../_sinks.ts";
import { callDetached } from "../../telemetry/_detached.ts";
import { feedOptions } from "../_options.ts";
import { isThenable } from "../ip_allowlist.ts";

/** Default bound on the feed's staleness while cached data is trusted, in ms. */
export const DEFAULT_MAX_STALENESS_MS = 2_000;

/** Wait before asking again for a subscription or a snapshot that failed, in ms. */
const RETRY_MS = 1_000;

/** A snapshot being read, with what happened meanwhile. */
interface PendingSnapshot {
  /** Changes delivered while it was read (applied on top when newer). */
  readonly changes: ApiKeyChange[];
  /** Prefixes this service wrote meanwhile. */
  readonly written: string[];
  /** Counter of the last reset delivered meanwhile. */
  resetCounter: number | undefined;
}

/**
 * The service's side of a change feed: invalidation, the staleness rule, the
 * set of stored prefixes. It subscribes on first use (a verify or a write),
 * never at construction, so validating options subscribes nothing; it stays
 * subscribed until the feed is closed (it then trusts its cache no longer
 * than `maxStalenessMs` after the last reading). Never throws into a verify:
 * a feed whose `status()` throws counts as stale, a failed snapshot is asked
 * again a second later, and so is a failed subscription (thrown or
 * rejected), meanwhile counted as stale.
 */
export class FeedFollower {
  readonly #feed: ApiKeyChangeFeed;
  readonly #cache: VerificationCache | undefined;
  readonly #maxStalenessMs: number;
  readonly #monotonic: () => number;
  readonly #lookupsPerSecond: number;
  /** Lookups left for prefixes the set lacks (at most one second's worth), as of `#refilledAt`. */
  #lookups: number;
  #refilledAt: number;
  readonly #statusFailed: (error: unknown) => void;
  readonly #publishFailed: (error: unknown) => void;
  readonly #subscribeFailed: (error: unknown) => void;
  /** "no": not yet, or failed (tried again from `#subscribeAt`); "pending": an async one unsettled. */
  #subscription: "no" | "pending" | "yes" = "no";
  /** Monotonic time before which a failed subscription is not tried again. */
  #subscribeAt = -Infinity;
  /** Every stored prefix as of `#membersCounter` (undefined: not loaded). */
  #members: Set<string> | undefined;
  #membersCounter = 0;
  #pending: PendingSnapshot | undefined;
  /** Monotonic time before which a failed snapshot is not asked again. */
  #retryAt = -Infinity;
  /** Monotonic time until which the last status reading vouches for cached data. */
  #freshUntil = -Infinity;

  /**
   * Follows `feed` for `cache` (when on); `maxStalenessMs` is the staleness
   * bound, `lookupsPerSecond` the budget of lookups for prefixes the set lacks.
   */
  constructor(
    feed: ApiKeyChangeFeed,
    cache: VerificationCache | undefined,
    maxStalenessMs: number,
    lookupsPerSecond: number,
    monotonic: () => number,
    redact?: Redact,
  ) {
    this.#statusFailed = warnOnce("feed.status", redact);
    this.#publishFailed = warnOnce("feed.publish", redact);
    this.#subscribeFailed = warnOnce("feed.subscribe", redact);
    this.#feed = feed;
    this.#cache = cache;
    this.#maxStalenessMs = maxStalenessMs;
    this.#monotonic = monotonic;
    this.#lookupsPerSecond = lookupsPerSecond;
    this.#lookups = lookupsPerSecond;
    this.#refilledAt = monotonic();
  }

  /**
   * Whether cached verifications and the prefix set may be trusted at `now`
   * (the service's monotonic time): the feed's `stalenessMs` is within the
   * bound (a throw, `NaN` or `Infinity` is not). A reading of `s` at `t`
   * says every change committed before `t - s` was delivered, which stays
   * true, so it vouches until `t + maxStalenessMs - s` without another
   * `status()` call. Subscribes first (not subscribed: stale), and starts
   * loading the prefix set when due.
   */
  fresh(now: number): boolean {
    if (!this.#start()) return false;
    if (now >= this.#freshUntil) {
      let stalenessMs: unknown;
      try {
        stalenessMs = this.#feed.status().stalenessMs;
      } catch (error) {
        this.#statusFailed(error);
        return false;
      }
      if (!(typeof stalenessMs === "number" && stalenessMs <= this.#maxStalenessMs)) return false;
      this.#freshUntil = now + this.#maxStalenessMs - Math.max(0, stalenessMs);
    }
    if (this.#members === undefined && this.#pending === undefined) this.#loadMembers();
    return true;
  }

  /**
   * Whether `prefix` may be refused without a lookup: the set is loaded (ask
   * `fresh` first), lacks it, and the lookup budget is spent.
   */
  absent(prefix: string): boolean {
    if (this.#members === undefined || this.#members.has(prefix)) return false;
    const now = this.#monotonic();
    const rate = this.#lookupsPerSecond;
    this.#lookups = Math.min(rate, this.#lookups + (now - this.#refilledAt) * rate / 1_000);
    this.#refilledAt = now;
    if (this.#lookups < 1) return true;
    this.#lookups--;
    return false;
  }

  /** Records a write of this service: published to the feed (when it takes them), applied here. */
  wrote(kind: ApiKeyChangeKind, prefix: string): void {
    this.#start();
    if (kind === "created") {
      this.#members?.add(prefix);
      this.#pending?.written.push(prefix);
    }
    const feed = this.#feed;
    if (feed.publish !== undefined) {
      callDetached(feed.publish.bind(feed), [{ kind, prefix }], this.#publishFailed);
    }
  }

  /** Subscribes unless done (or failed within the last second); whether subscribed. */
  #start(): boolean {
    if (this.#subscription === "no" && this.#monotonic() >= this.#subscribeAt) {
      this.#subscription = "pending";
      const failed = (error: unknown) => {
        this.#subscription = "no";
        this.#subscribeAt = this.#monotonic() + RETRY_MS;
        this.#subscribeFailed(error);
      };
      const subscribed = () => {
        this.#subscription = "yes";
        // Filled while no notice was heard (after a failed subscription): vouched for by nothing.
        this.#cache?.clear();
      };
      try {
        const result: unknown = this.#feed.subscribe((notice) => this.#onNotice(notice));
        if (isThenable(result)) result.then(subscribed, failed);
        else subscribed();
      } catch (error) {
        failed(error);
      }
    }
    return this.#subscription === "yes";
  }

  #onNotice(notice: ApiKeyChangeNotice): void {
    if (notice.kind === "reset") {
      this.#cache?.clear();
      this.#members = undefined;
      if (this.#pending !== undefined) this.#pending.resetCounter = notice.counter;
      else this.#retryAt = -Infinity;
      return;
    }
    // A created prefix had no row before (a changed prefix arrives as deleted, then created), so
    // no entry can be stale; this keeps the entry a verify filled before the notice arrived.
    if (notice.kind !== "created") this.#cache?.invalidate(notice.prefix);
    this.#pending?.changes.push(notice);
    if (this.#members !== undefined) this.#apply(this.#members, notice);
  }

  /** Applies a change newer than the set to it. */
  #apply(members: Set<string>, change: ApiKeyChange): void {
    if (change.counter <= this.#membersCounter) return;
    this.#membersCounter = change.counter;
    if (change.kind === "created") members.add(change.prefix);
    else if (change.kind === "deleted") members.delete(change.prefix);
  }

  /** Reads a snapshot (when the feed has them and none failed within the last second). */
  #loadMembers(): void {
    const feed = this.#feed;
    if (feed.snapshot === undefined || this.#monotonic() < this.#retryAt) return;
    const pending: PendingSnapshot = { changes: [], written: [], resetCounter: undefined };
    this.#pending = pending;
    let read: Promise<{ counter: unknown; prefixes: unknown }>;
    try {
      read = Promise.resolve(feed.snapshot());
    } catch (error) {
      read = Promise.reject(error);
    }
    read.then(({ counter, prefixes }) => {
      this.#pending = undefined;
      if (
        !Number.isSafeInteger(counter) || !Array.isArray(prefixes) ||
        !prefixes.every((prefix) => typeof prefix === "string")
      ) {
        throw new TypeError("malformed snapshot");
      }
      // A reset after the snapshot's counter: changes it does not hold may be lost.
      if (pending.resetCounter !== undefined && pending.resetCounter > (counter as number)) {
        return this.#loadMembers();
      }
      const members = new Set(prefixes as string[]);
      this.#membersCounter = counter as number;
      for (const change of pending.changes) this.#apply(members, change);
      for (const prefix of pending.written) members.add(prefix);
      this.#members = members;
    }).catch(() => {
      if (this.#pending === pending) this.#pending = undefined;
      this.#retryAt = this.#monotonic() + RETRY_MS;
    });
  }
}

/**
 * The follower the options ask for: none without `feed`. Throws the
 * `TypeError` of `feedOptions` for a bad option (`maxStalenessMs` is
 * already validated as a duration).
 */
export function compileFeed(
  feed: unknown,
  maxStalenessMs: number | undefined,
  unknownPrefixLookups: unknown,
  cache: VerificationCache | undefined,
  monotonic: () => number,
  label: string,
  redact?: Redact,
): FeedFollower | undefined {
  const checked = feedOptions(feed, maxStalenessMs, unknownPrefixLookups, label);
  if (checked === undefined) return undefined;
  return new FeedFollower(
    checked.feed,
    cache,
    maxStalenessMs ?? DEFAULT_MAX_STALENESS_MS,
    checked.perSecond,
    monotonic,
    redact,
  );
}
