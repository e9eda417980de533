/**
 * A scripted change feed for the service's side of the feed: the test sets its
 * staleness, delivers notices and answers (or fails) each snapshot by hand.
 */
import type {
  ApiKeyChangeFeed,
  ApiKeyChangeFeedStatus,
  ApiKeyChangeKind,
  ApiKeyChangeListener,
  ApiKeyFeedSnapshot,
} from "../../../api_keys/mod.ts";

/** A snapshot the service asked for, answered when the test says so. */
export interface SnapshotRequest {
  resolve(snapshot: ApiKeyFeedSnapshot): void;
  reject(error: unknown): void;
}

/** A change feed driven by the test (`snapshot` only when `withSnapshot`). */
export class ScriptedFeed implements ApiKeyChangeFeed {
  readonly listeners: ApiKeyChangeListener[] = [];
  /** What `status().stalenessMs` answers. */
  stalenessMs = 0;
  /** Snapshot requests not answered yet, oldest first. */
  readonly snapshots: SnapshotRequest[] = [];
  counter = 0;
  subscribeCalls = 0;
  snapshot?: () => Promise<ApiKeyFeedSnapshot>;

  constructor(withSnapshot = false) {
    if (withSnapshot) {
      this.snapshot = () =>
        new Promise<ApiKeyFeedSnapshot>((resolve, reject) => {
          this.snapshots.push({ resolve, reject });
        });
    }
  }

  subscribe(listener: ApiKeyChangeListener): () => void {
    this.subscribeCalls++;
    this.listeners.push(listener);
    return () => this.listeners.splice(this.listeners.indexOf(listener), 1);
  }

  status(): ApiKeyChangeFeedStatus {
    return {
      healthy: this.stalenessMs !== Infinity,
      stalenessMs: this.stalenessMs,
      unhealthyForMs: 0,
      counter: this.counter,
      resets: 0,
      reconnects: 0,
      error: null,
    };
  }

  /** Delivers a change with the next counter. */
  change(kind: ApiKeyChangeKind, prefix: string): void {
    this.counter++;
    for (const listener of this.listeners) listener({ kind, prefix, counter: this.counter });
  }

  /** Delivers a reset covering every change so far. */
  reset(): void {
    for (const listener of this.listeners) {
      listener({ kind: "reset", prefix: null, counter: this.counter, reason: "missed" });
    }
  }

  /** Answers the oldest snapshot request with `prefixes` at `counter` (default: the current one). */
  answer(prefixes: readonly string[], counter = this.counter): void {
    const request = this.snapshots.shift();
    if (request === undefined) throw new Error("no snapshot was asked for");
    request.resolve({ counter, prefixes });
  }

  close(): Promise<void> {
    this.listeners.length = 0;
    this.stalenessMs = Infinity;
    return Promise.resolve();
  }
}

/** Lets every pending promise callback run (a snapshot answer reaches the service). */
export function flush(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
