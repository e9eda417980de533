/**
 * The in-memory store (one process): a sliding window of sub-buckets per
 * window counter and a balance per credit counter, each bounded in number;
 * idle window counters swept as checks run. Constant work per check.
 *
 * @module
 */
import type {
  CounterResult,
  CreditCounter,
  RateLimitCounter,
  RateLimitStore,
  WindowCounter,
} from "./store.ts";
import { assertCount, MAX_CREDITS } from "./_checks.ts";
import { assertKnownOptions } from "./_options.ts";
import { compileCreditChange } from "./credits.ts";
import { settleBalance } from "./_refill.ts";
import { Recency, type RecencyNode } from "./_recency.ts";
import { bucketStart, leavesAt, SUB_BUCKETS, subBucket } from "./_window.ts";

/** Options of `createMemoryRateLimitStore`. */
export interface MemoryRateLimitStoreOptions {
  /**
   * Most window counters, and most credit balances, kept (default 100,000 each).
   * Past it the least recently checked one is dropped, even when its window
   * still counts units (a dropped balance restarts from `initial`): size it
   * above the peak of active subjects × policies.
   */
  maxCounters?: number;
  /** Clock in ms (default `Date.now`); tests inject a fake one. */
  now?: () => number;
}

/** The in-memory store, with `size` (counters kept) for monitoring. */
export interface MemoryRateLimitStore extends RateLimitStore {
  /** Window counters and credit balances kept. */
  readonly size: number;
  /** See `RateLimitStore.changeCredits`. */
  changeCredits: NonNullable<RateLimitStore["changeCredits"]>;
  /** See `RateLimitStore.checkNow`. */
  checkNow: NonNullable<RateLimitStore["checkNow"]>;
  /** See `RateLimitStore.readCredits`. */
  readCredits: NonNullable<RateLimitStore["readCredits"]>;
}

/** One window counter: its units per sub-bucket, in a ring of `SUB_BUCKETS + 1` slots. */
interface Window {
  readonly name: string;
  readonly windowMs: number;
  /** Units per sub-bucket, at `q % SLOTS` for the sub-buckets `head - SUB_BUCKETS`…`head`. */
  readonly counts: number[];
  /** Newest sub-bucket counted. */
  head: number;
  /** When the newest sub-bucket leaves (`leavesAt(head)`): from then on nothing is counted. */
  idleAt: number;
  /** Units in the ring. */
  total: number;
}

/**
 * One subject's counters of one kind, a node of the order of use. Keyed by
 * the subject alone: a `Map` lookup of a string the caller keeps (a key id)
 * reuses its hash, where a key built per check would be hashed every time.
 */
interface Held<T> extends RecencyNode {
  readonly items: T[];
}

const SLOTS = SUB_BUCKETS + 1;

/** The ring slot of sub-bucket `q` (a negative `q` from a clock before 1970 included). */
function slot(q: number): number {
  const i = q % SLOTS;
  return i < 0 ? i + SLOTS : i;
}

/** Moves `window` to sub-bucket `q`, clearing the sub-buckets that left (at most `SLOTS`). */
function advance(window: Window, q: number): void {
  if (q - window.head >= SLOTS) {
    window.counts.fill(0);
    window.total = 0;
  } else {
    for (let h = window.head + 1; h <= q; h++) {
      const i = slot(h);
      window.total -= window.counts[i];
      window.counts[i] = 0;
    }
  }
  window.head = q;
  window.idleAt = leavesAt(q, window.windowMs);
}

/**
 * The answer of one counter at moment `at` of its sub-bucket `head` (after
 * consuming, if it did): sub-buckets walked from the oldest counted, at most
 * `SLOTS` of them.
 */
function answer(
  window: Window,
  counter: WindowCounter,
  at: number,
  consumed: boolean,
): CounterResult {
  const { limit, windowMs, cost } = counter;
  const { counts, head, total } = window;
  const oldest = head - SUB_BUCKETS;
  let i = slot(oldest);
  if (consumed || total + cost <= limit) {
    if (total === 0) return { allowed: true, remaining: limit, resetMs: 0 };
    // Every unit in the newest sub-bucket (a steady key's usual case): no walk.
    if (counts[slot(head)] === total) {
      return { allowed: true, remaining: limit - total, resetMs: leavesAt(head, windowMs) - at };
    }
    for (let q = oldest; q <= head; q++) {
      if (counts[i] > 0) {
        return { allowed: true, remaining: limit - total, resetMs: leavesAt(q, windowMs) - at };
      }
      if (++i === SLOTS) i = 0;
    }
    return { allowed: true, remaining: limit - total, resetMs: 0 };
  }
  if (cost <= limit) {
    let freed = 0;
    for (let q = oldest; q <= head; q++) {
      freed += counts[i];
      if (freed >= total + cost - limit) {
        return { allowed: false, remaining: limit - total, resetMs: leavesAt(q, windowMs) - at };
      }
      if (++i === SLOTS) i = 0;
    }
  }
  return { allowed: false, remaining: limit - total, resetMs: windowMs };
}

/** A credit balance: credits left, as of a time (ms) or the refill boundary it last took. */
interface Balance {
  readonly name: string;
  credits: number;
  asOf: number;
  /** Of the last settling (`balanceOf`): the refill amount (0 without) and ms to the next refill (-1 without). */
  amount: number;
  resetMs: number;
}

/**
 * Creates the in-memory store: exact within one process, lost on restart.
 * Windows follow the sub-bucket rule of docs/rate-limits.md (no interval of
 * `windowMs` admits more than `limit`). `checkBatch` runs each check through
 * `checkNow`; deadlines are compared with `Date.now()` (the caller's clock:
 * the store is in its process; `now` moves counting time only).
 * `readCredits` writes nothing (not even a touch). Work per check and memory
 * per counter are constant: at most `maxCounters` window counters of 11
 * sub-bucket counts each, and as many balances.
 *
 * @example
 * ```ts
 * import { createMemoryRateLimitStore } from "./memory_store.ts";
 * const store = createMemoryRateLimitStore({ maxCounters: 10_000 });
 * const [result] = store.checkNow([
 *   { kind: "window", subject: "key_1", name: "api", limit: 2, windowMs: 1_000, cost: 1 },
 * ]);
 * result.remaining; // 1
 * ```
 */
export function createMemoryRateLimitStore(
  options: MemoryRateLimitStoreOptions = {},
): MemoryRateLimitStore {
  assertKnownOptions(options, ["maxCounters", "now"], "createMemoryRateLimitStore");
  const maxCounters = assertCount(options.maxCounters ?? 100_000, 1, "maxCounters");
  const clock = options.now ?? Date.now;
  const windows = new Recency<Held<Window>>();
  const balances = new Recency<Held<Balance>>();
  let windowCount = 0;
  let balanceCount = 0;

  /** Whether nothing is counted any more in `held`'s windows at `now`. */
  const idle = (held: Held<Window>, now: number) => {
    for (const w of held.items) if (now < w.idleAt) return false;
    return true;
  };

  /**
   * Drops idle subjects (nothing counted at `now`) from the least recently
   * checked end, at most `n` of them, and any over the bounds.
   */
  const sweep = (now: number, n: number) => {
    for (let oldest = windows.oldest; oldest !== undefined; oldest = windows.oldest) {
      if (windowCount <= maxCounters && (n-- <= 0 || !idle(oldest, now))) break;
      windows.remove(oldest);
      windowCount -= oldest.items.length;
    }
    for (let oldest = balances.oldest; oldest !== undefined; oldest = balances.oldest) {
      if (balanceCount <= maxCounters) break;
      balances.remove(oldest);
      balanceCount -= oldest.items.length;
    }
  };

  /** The node of `subject` in `recency`, used now (created empty). */
  const heldOf = <T>(recency: Recency<Held<T>>, subject: string): Held<T> => {
    let held = recency.use(subject);
    if (held === undefined) {
      held = { key: subject, older: undefined, newer: undefined, items: [] };
      recency.add(held);
    }
    return held;
  };

  /** The refill of `counter` due on `balance` at `now`, applied (to a copy when `write` is false). */
  const settle = (counter: CreditCounter, balance: Balance, now: number, write: boolean) => {
    const settled = settleBalance(balance.credits, balance.asOf, counter.refill, now);
    const target = write ? balance : { ...balance };
    target.credits = settled.credits;
    target.asOf = settled.asOf;
    target.amount = settled.amount;
    target.resetMs = settled.resetMs;
    return target;
  };

  /** `counter`'s balance at `now`, the refill due applied, with its refill amount and next boundary. */
  const balanceOf = (counter: CreditCounter, now: number): Balance => {
    const { items } = heldOf(balances, counter.subject);
    for (const balance of items) {
      if (balance.name === counter.name) return settle(counter, balance, now, true);
    }
    const balance = {
      name: counter.name,
      credits: counter.initial,
      asOf: counter.initialAt ?? now,
      amount: 0,
      resetMs: -1,
    };
    items.push(balance);
    balanceCount++;
    return settle(counter, balance, now, true);
  };

  /** `counter`'s window, moved to `now` (a clock that stepped back leaves it where it is). */
  const windowOf = (counter: WindowCounter, now: number): Window => {
    const { name, windowMs } = counter;
    const q = subBucket(now, windowMs);
    const { items } = heldOf(windows, counter.subject);
    for (const window of items) {
      if (window.name === name && window.windowMs === windowMs) {
        if (q > window.head) advance(window, q);
        return window;
      }
    }
    const window = {
      name,
      windowMs,
      counts: new Array(SLOTS).fill(0),
      head: q,
      idleAt: leavesAt(q, windowMs),
      total: 0,
    };
    items.push(window);
    windowCount++;
    return window;
  };

  /** Each counter's window or balance during one check (reused: a check runs synchronously). */
  const held: (Window | Balance)[] = [];

  const checkAt = (counters: readonly RateLimitCounter[], now: number): CounterResult[] => {
    const n = counters.length;
    let consume = true;
    for (let i = 0; i < n; i++) {
      const counter = counters[i];
      if (counter.kind === "credit") {
        const balance = balanceOf(counter, now);
        held[i] = balance;
        if (balance.credits < counter.cost) consume = false;
      } else {
        const window = windowOf(counter, now);
        held[i] = window;
        if (window.total + counter.cost > counter.limit) consume = false;
      }
    }
    const results: CounterResult[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const counter = counters[i];
      const consumed = consume && counter.cost > 0;
      if (counter.kind === "credit") {
        const balance = held[i] as Balance;
        const { amount, resetMs } = balance;
        const allowed = balance.credits >= counter.cost;
        results[i] = {
          allowed,
          remaining: balance.credits - (consumed ? counter.cost : 0),
          resetMs: !allowed && counter.cost > amount ? -1 : resetMs,
        };
        if (consumed) balance.credits -= counter.cost;
        continue;
      }
      const window = held[i] as Window;
      if (consumed) {
        window.counts[slot(window.head)] += counter.cost;
        window.total += counter.cost;
      }
      // A clock that stepped back counts at the start of the newest sub-bucket.
      const at = Math.max(now, bucketStart(window.head, counter.windowMs));
      results[i] = answer(window, counter, at, consumed);
    }
    sweep(now, n + 1);
    return results;
  };

  /** Runs `fn` as a promise: its throw becomes a rejection. */
  const promised = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error);
    }
  };

  return {
    name: "memory",
    get size() {
      return windowCount + balanceCount;
    },
    checkBatch: (checks) =>
      promised(() => ({
        results: checks.map(({ counters, deadline }) => {
          return Date.now() < deadline ? checkAt(counters, clock()) : null;
        }),
      })),
    checkNow: (counters) => checkAt(counters, clock()),
    changeCredits: (counter, change, deadline) =>
      promised(() => {
        const valid = compileCreditChange(change);
        if (Date.now() >= deadline) return null;
        const balance = balanceOf(counter, clock());
        balance.credits = "set" in valid
          ? valid.set
          : Math.min(MAX_CREDITS, Math.max(0, balance.credits + valid.add));
        return { allowed: true, remaining: balance.credits, resetMs: balance.resetMs };
      }),
    readCredits: (counters) =>
      promised(() => {
        const now = clock();
        return counters.map((counter) => {
          const held = balances.peek(counter.subject)?.items.find((b) => b.name === counter.name);
          if (held === undefined) return null;
          const balance = settle(counter, held, now, false);
          return {
            allowed: balance.credits >= counter.cost,
            remaining: balance.credits,
            resetMs: balance.resetMs,
          };
        });
      }),
  };
}
