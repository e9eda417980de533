/**
 * The change feed: how instances that share one key store learn that a key
 * changed, so each can drop what it cached about it. `ApiKeyChangeFeed` is the
 * interface; `InMemoryApiKeyChangeFeed` serves services sharing one
 * `InMemoryApiKeyStorage`; `createPostgresFeed` (`./api-keys/postgres`) serves
 * a fleet on one PostgreSQL.
 *
 * Every change has a counter, one more than the change before it. A feed
 * delivers changes in counter order; when it cannot vouch that it delivered
 * every change up to some counter (a lost connection, a counter advance
 * without its record), it delivers a reset instead: drop everything.
 *
 * @module
 */
import { createDispatcher, type Dispatch } from "./_sinks.ts";

/**
 * What happened to a key: `created`, `revoked`, `rotated` (its `rotatedAt`
 * moved), `deleted` (the row is gone) or `updated` (anything else but
 * `lastUsedAt`, which no feed reports).
 */
export type ApiKeyChangeKind = "created" | "updated" | "revoked" | "rotated" | "deleted";

/** The kinds a change can have. */
export const CHANGE_KINDS: ReadonlySet<string> = new Set<ApiKeyChangeKind>([
  "created",
  "updated",
  "revoked",
  "rotated",
  "deleted",
]);

/** One change to the key with `prefix`: drop what is cached about that prefix. */
export interface ApiKeyChange {
  /** What happened. */
  readonly kind: ApiKeyChangeKind;
  /** Public prefix of the changed key. */
  readonly prefix: string;
  /** Position of the change: one more than the change before it. */
  readonly counter: number;
}

/**
 * Why a feed told its listeners to drop everything: `missed` (the counter
 * advanced past changes the feed could not read: a lost connection, a missing
 * record, the first sync after start), `truncated` (the key table was emptied),
 * `unnamed` (a change without a usable prefix).
 */
export type ApiKeyFeedResetReason = "missed" | "truncated" | "unnamed";

/**
 * Changes may have been missed: drop everything cached (and reload anything
 * derived from the key table, such as a set of known prefixes).
 */
export interface ApiKeyFeedReset {
  /** Marks a reset. */
  readonly kind: "reset";
  /** Always null: every prefix is concerned. */
  readonly prefix: null;
  /** Every change up to this counter is covered by the reset. */
  readonly counter: number;
  /** Why (for logs and metrics; every reset means the same to a consumer). */
  readonly reason: ApiKeyFeedResetReason;
}

/** What a listener receives: a change of one key, or a reset. */
export type ApiKeyChangeNotice = ApiKeyChange | ApiKeyFeedReset;

/**
 * Receives notices synchronously, in counter order, each frozen (every listener
 * reads the same one). A throw or a rejected promise is contained (logged
 * once, then silence) and never stops delivery.
 */
export type ApiKeyChangeListener = (notice: ApiKeyChangeNotice) => void | Promise<void>;

/**
 * Health of a feed, read on demand (`status()`); durations on the feed's
 * monotonic clock.
 */
export interface ApiKeyChangeFeedStatus {
  /** Whether the feed is in sync: connected, and its last check succeeded. */
  readonly healthy: boolean;
  /**
   * Upper bound on how old a change can be and still not be delivered: every
   * change committed more than `stalenessMs` ago has reached the listeners (as
   * itself or inside a reset). `Infinity` before the first sync and after
   * `close()`. A consumer serves cached verifications only while this is
   * within its bound.
   */
  readonly stalenessMs: number;
  /** How long the feed has been unhealthy, in ms; 0 while healthy. */
  readonly unhealthyForMs: number;
  /** Counter of the last change delivered, or null before any. */
  readonly counter: number | null;
  /** Resets delivered so far. */
  readonly resets: number;
  /** Reconnections after a lost connection (0 for the in-memory feed). */
  readonly reconnects: number;
  /** Why the feed is unhealthy (no secret: an error code or a fixed phrase), or null. */
  readonly error: string | null;
  /**
   * Whether the notice a database feed sends itself at each connection came
   * back (`false`: behind a pooler in transaction mode, say; changes then
   * arrive by polling alone), null until known; absent for feeds without
   * notices.
   */
  readonly noticesArrive?: boolean | null;
}

/**
 * The prefixes of every stored key, as of change `counter`: a consumer that
 * subscribed first applies the notices with a higher counter on top.
 */
export interface ApiKeyFeedSnapshot {
  /** Counter of the last change the snapshot includes. */
  readonly counter: number;
  /** Prefixes of every stored key (revoked and expired ones included). */
  readonly prefixes: readonly string[];
}

/**
 * A change feed. Consumer rules: subscribe before reading anything the feed
 * vouches for; on a change, drop what is cached about its prefix; on a reset,
 * drop everything; serve cached data only while `status().stalenessMs` is
 * within the consumer's bound.
 */
export interface ApiKeyChangeFeed {
  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: ApiKeyChangeListener): () => void;
  /** Current health. */
  status(): ApiKeyChangeFeedStatus;
  /**
   * Records a change made by this process. Only feeds that cannot observe
   * the store themselves have it (the in-memory feed); a service calls it
   * after each write it made. A database feed sees every write, whoever
   * made it, and omits it.
   */
  publish?(change: { kind: ApiKeyChangeKind; prefix: string }): void;
  /**
   * Prefixes of every stored key with the counter they are current at;
   * rejects when the feed cannot read them now. Feeds that cannot list the
   * store omit it.
   */
  snapshot?(): Promise<ApiKeyFeedSnapshot>;
  /** Stops the feed: no more notices, no timers or connections left. */
  close(): Promise<void>;
}

/**
 * The listeners of a feed: delivery in subscription order, each listener's
 * throw or rejection contained. Shared by the feeds of this library.
 */
export class ChangeListeners {
  readonly #dispatchers = new Map<symbol, Dispatch<ApiKeyChangeNotice>>();

  /** Adds `listener` (a `TypeError` if it is not a function); returns its remover. */
  add(listener: ApiKeyChangeListener): () => void {
    if (typeof listener !== "function") {
      throw new TypeError("a change feed listener must be a function");
    }
    const id = Symbol("listener");
    // Frozen: every listener reads the same notice, the service's cache among them.
    this.#dispatchers.set(id, createDispatcher(listener, undefined, "change feed listener", true)!);
    return () => {
      this.#dispatchers.delete(id);
    };
  }

  /** Delivers `notice` to every listener present when delivery starts. */
  deliver(notice: ApiKeyChangeNotice): void {
    for (const dispatch of [...this.#dispatchers.values()]) dispatch(notice);
  }

  /** Removes every listener. */
  clear(): void {
    this.#dispatchers.clear();
  }
}

/**
 * A change feed within one process, for several `ApiKeysService` instances
 * over one `InMemoryApiKeyStorage`. The in-memory storage has no triggers, so
 * changes reach this feed through `publish`, which each service calls after
 * its own writes; delivery is synchronous, so when one service's `revoke`
 * resolves, every other service's listener has run. Writes made to the
 * storage directly, bypassing every service, are not seen. Always healthy
 * (staleness 0) until `close()`.
 *
 * @example
 * ```ts
 * import { InMemoryApiKeyChangeFeed } from "./change_feed.ts";
 * const feed = new InMemoryApiKeyChangeFeed();
 * feed.subscribe((notice) => console.log(notice.kind, notice.prefix)); // revoked AbCdEfGhIjKl
 * feed.publish({ kind: "revoked", prefix: "AbCdEfGhIjKl" });
 * await feed.close();
 * ```
 */
export class InMemoryApiKeyChangeFeed implements ApiKeyChangeFeed {
  readonly #listeners = new ChangeListeners();
  readonly #monotonic: () => number;
  #counter = 0;
  #closedAt: number | undefined;

  /** Creates an open feed; `monotonicClock` (default `performance.now`) dates `close()`. */
  constructor(options: { monotonicClock?: () => number } = {}) {
    this.#monotonic = options.monotonicClock ?? (() => performance.now());
  }

  /** Adds a listener; after `close()`, adds nothing. */
  subscribe(listener: ApiKeyChangeListener): () => void {
    const remove = this.#listeners.add(listener);
    if (this.#closedAt === undefined) return remove;
    remove();
    return () => {};
  }

  /** Healthy with staleness 0 until closed; then unhealthy, staleness `Infinity`. */
  status(): ApiKeyChangeFeedStatus {
    const closed = this.#closedAt !== undefined;
    return {
      healthy: !closed,
      stalenessMs: closed ? Infinity : 0,
      unhealthyForMs: closed ? this.#monotonic() - this.#closedAt! : 0,
      counter: this.#counter === 0 ? null : this.#counter,
      resets: 0,
      reconnects: 0,
      error: closed ? "closed" : null,
    };
  }

  /**
   * Numbers the change and delivers it to every listener before returning
   * (nothing after `close()`). A `TypeError` for an unknown kind or a
   * non-string prefix.
   */
  publish(change: { kind: ApiKeyChangeKind; prefix: string }): void {
    if (!CHANGE_KINDS.has(change?.kind) || typeof change.prefix !== "string") {
      throw new TypeError("publish expects { kind, prefix } with a known kind");
    }
    if (this.#closedAt !== undefined) return;
    this.#counter++;
    this.#listeners.deliver({ kind: change.kind, prefix: change.prefix, counter: this.#counter });
  }

  /** Removes every listener; later publishes deliver nothing. */
  close(): Promise<void> {
    this.#closedAt ??= this.#monotonic();
    this.#listeners.clear();
    return Promise.resolve();
  }
}
