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
import { assertCount } from "./policy.ts";
import { assertKnownOptions } from "./_options.ts";
import { assertCreditChange, MAX_CREDITS, settleBalance } from "./credits.ts";
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
interface Window extends RecencyNode {
  /** Units per sub-bucket, at `q % SLOTS` for the sub-buckets `head - SUB_BUCKETS`…`head`. */
  readonly counts: number[];
  /** Newest sub-bucket counted. */
  head: number;
  /** Units in the ring. */
  total: number;
  readonly windowMs: number;
}

const SLOTS = SUB_BUCKETS + 1;

/** The ring slot of sub-bucket `q` (a negative `q` from a clock before 1970 included). */
const slot = (q: number) => ((q % SLOTS) + SLOTS) % SLOTS;

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
}

/** The answer of one counter at moment `at` of its sub-bucket `head` (after consuming, if it did). */
function answer(
  window: Window,
  counter: WindowCounter,
  at: number,
  consumed: boolean,
): CounterResult {
  const { limit, windowMs, cost } = counter;
  const { counts, head, total } = window;
  if (consumed || total + cost <= limit) {
    for (let q = head - SUB_BUCKETS; q <= head; q++) {
      if (counts[slot(q)] > 0) {
        return { allowed: true, remaining: limit - total, resetMs: leavesAt(q, windowMs) - at };
      }
    }
    return { allowed: true, remaining: limit - total, resetMs: 0 };
  }
  if (cost <= limit) {
    let freed = 0;
    for (let q = head - SUB_BUCKETS; q <= head; q++) {
      freed += counts[slot(q)];
      if (freed >= total + cost - limit) {
        return { allowed: false, remaining: limit - total, resetMs: leavesAt(q, windowMs) - at };
      }
    }
  }
  return { allowed: false, remaining: limit - total, resetMs: windowMs };
}

/** A credit balance: credits left, as of a time (ms) or the refill boundary it last took. */
interface Balance extends RecencyNode {
  credits: number;
  asOf: number;
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
  const windows = new Recency<Window>();
  const balances = new Recency<Balance>();

  /**
   * Drops idle window counters (nothing counted at `now`) from the least
   * recently checked end, at most `n` of them, and any over the bound.
   */
  const sweep = (now: number, n: number) => {
    for (let oldest = windows.oldest; oldest !== undefined; oldest = windows.oldest) {
      if (windows.size > maxCounters) windows.remove(oldest);
      else if (n-- > 0 && now >= leavesAt(oldest.head, oldest.windowMs)) windows.remove(oldest);
      else break;
    }
    while (balances.size > maxCounters) balances.remove(balances.oldest!);
  };

  /** The refill of `counter` due on `balance` at `now` (applied to a copy when `write` is false). */
  const settle = (counter: CreditCounter, balance: Balance, now: number, write: boolean) => {
    const settled = settleBalance(balance.credits, balance.asOf, counter.refill, now);
    const target = write ? balance : { ...balance };
    target.credits = settled.credits;
    target.asOf = settled.asOf;
    return { balance: target, amount: settled.amount, resetMs: settled.resetMs };
  };

  /** `counter`'s balance at `now`, the refill due applied, with its refill amount and next boundary. */
  const balanceOf = (counter: CreditCounter, now: number) => {
    const key = `${counter.subject}\n${counter.name}`;
    let balance = balances.use(key);
    if (balance === undefined) {
      balance = {
        key,
        older: undefined,
        newer: undefined,
        credits: counter.initial,
        asOf: counter.initialAt ?? now,
      };
      balances.add(balance);
    }
    return settle(counter, balance, now, true);
  };

  /**
   * `counter`'s window moved to `now` and the moment it counts at: a clock
   * that stepped back counts from the start of the newest sub-bucket.
   */
  const windowOf = (counter: WindowCounter, now: number): { window: Window; at: number } => {
    const { windowMs } = counter;
    const key = `${counter.subject}\n${counter.name}\n${windowMs}`;
    const q = subBucket(now, windowMs);
    let window = windows.use(key);
    if (window === undefined) {
      window = {
        key,
        older: undefined,
        newer: undefined,
        counts: new Array(SLOTS).fill(0),
        head: q,
        total: 0,
        windowMs,
      };
      windows.add(window);
    }
    if (q >= window.head) {
      advance(window, q);
      return { window, at: now };
    }
    return { window, at: bucketStart(window.head, windowMs) };
  };

  const checkAt = (counters: readonly RateLimitCounter[], now: number): CounterResult[] => {
    const entries = counters.map((counter) =>
      counter.kind === "credit"
        ? { counter, credit: balanceOf(counter, now), window: undefined }
        : { counter, credit: undefined, window: windowOf(counter, now) }
    );
    const consume = entries.every(({ counter, credit, window }) =>
      credit
        ? credit.balance.credits >= counter.cost
        : window!.window.total + counter.cost <= (counter as WindowCounter).limit
    );
    const results = entries.map(({ counter, credit, window }): CounterResult => {
      const consumed = consume && counter.cost > 0;
      if (credit) {
        const { balance, amount, resetMs } = credit;
        const allowed = balance.credits >= counter.cost;
        const result = {
          allowed,
          remaining: balance.credits - (consumed ? counter.cost : 0),
          resetMs: !allowed && counter.cost > amount ? -1 : resetMs,
        };
        if (consumed) balance.credits -= counter.cost;
        return result;
      }
      const { window: w, at } = window!;
      if (consumed) {
        w.counts[slot(w.head)] += counter.cost;
        w.total += counter.cost;
      }
      return answer(w, counter as WindowCounter, at, consumed);
    });
    sweep(now, counters.length + 1);
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
      return windows.size + balances.size;
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
        const valid = assertCreditChange(change);
        if (Date.now() >= deadline) return null;
        const { balance, resetMs } = balanceOf(counter, clock());
        balance.credits = "set" in valid
          ? valid.set
          : Math.min(MAX_CREDITS, Math.max(0, balance.credits + valid.add));
        return { allowed: true, remaining: balance.credits, resetMs };
      }),
    readCredits: (counters) =>
      promised(() => {
        const now = clock();
        return counters.map((counter) => {
          const held = balances.peek(`${counter.subject}\n${counter.name}`);
          if (held === undefined) return null;
          const { balance, resetMs } = settle(counter, held, now, false);
          return { allowed: balance.credits >= counter.cost, remaining: balance.credits, resetMs };
        });
      }),
  };
}
