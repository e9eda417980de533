/**
 * The in-memory store (one process): a sliding log per window counter and a
 * balance per credit counter, each bounded in number; idle window counters
 * swept as checks run.
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

/** One counter's log: accepted units by time, oldest first, from `head`. */
interface Log {
  times: number[];
  units: number[];
  head: number;
  total: number;
  windowMs: number;
}

/** Drops the entries that left the window ending at `now`. */
function prune(log: Log, now: number): void {
  while (log.head < log.times.length && log.times[log.head] <= now - log.windowMs) {
    log.total -= log.units[log.head++];
  }
  if (log.head > 32 && log.head * 2 > log.times.length) {
    log.times = log.times.slice(log.head);
    log.units = log.units.slice(log.head);
    log.head = 0;
  }
}

/** The answer of one counter whose log is pruned to `now`. */
function answer(
  log: Log,
  counter: WindowCounter,
  now: number,
  consumed: boolean,
): CounterResult {
  const { limit, windowMs, cost } = counter;
  const { times, units, head, total } = log;
  if (total + cost <= limit) {
    const empty = head === times.length;
    return {
      allowed: true,
      remaining: limit - total - (consumed ? cost : 0),
      resetMs: empty ? (consumed ? windowMs : 0) : times[head] + windowMs - now,
    };
  }
  let freed = 0;
  for (let i = head; i < times.length && cost <= limit; i++) {
    freed += units[i];
    if (freed >= total + cost - limit) {
      return { allowed: false, remaining: limit - total, resetMs: times[i] + windowMs - now };
    }
  }
  return { allowed: false, remaining: limit - total, resetMs: windowMs };
}

/** A credit balance: credits left, as of a time (ms) or the refill boundary it last took. */
interface Balance {
  credits: number;
  asOf: number;
}

/**
 * Creates the in-memory store: exact within one process, lost on restart.
 * `checkBatch` runs each check through `checkNow`; deadlines are compared
 * with `Date.now()` (the caller's clock: the store is in its process; `now`
 * moves counting time only). `readCredits` writes nothing (not even a touch).
 * Memory: at most `maxCounters` counters, each holding at most
 * min(`limit`, `windowMs`) entries (units accepted in one ms share an entry).
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
  const logs = new Map<string, Log>();
  const balances = new Map<string, Balance>();

  /** Drops idle counters from the least recently checked end, and any over the bound. */
  const sweep = (now: number) => {
    for (const [key, log] of logs) {
      const newest = log.times[log.times.length - 1];
      const idle = log.head === log.times.length || newest <= now - log.windowMs;
      if (!idle && logs.size <= maxCounters) break;
      logs.delete(key);
    }
  };

  /** Moves `key` to the most recently used end of `map` and returns its value, creating it. */
  const touch = <V>(map: Map<string, V>, key: string, create: () => V): V => {
    const value = map.get(key) ?? create();
    map.delete(key);
    map.set(key, value);
    return value;
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
    const balance = touch(balances, `${counter.subject}\n${counter.name}`, () => ({
      credits: counter.initial,
      asOf: counter.initialAt ?? now,
    }));
    return settle(counter, balance, now, true);
  };

  const windowOf = (counter: WindowCounter, now: number) => {
    const log = touch(logs, `${counter.subject}\n${counter.name}`, () => ({
      times: [],
      units: [],
      head: 0,
      total: 0,
      windowMs: counter.windowMs,
    }));
    log.windowMs = counter.windowMs;
    // A clock that stepped back counts from the newest entry, keeping the log ordered.
    const at = Math.max(now, log.times[log.times.length - 1] ?? now);
    prune(log, at);
    return { log, at };
  };

  const checkAt = (counters: readonly RateLimitCounter[], now: number): CounterResult[] => {
    const entries = counters.map((counter) =>
      counter.kind === "credit"
        ? { counter, credit: balanceOf(counter, now) }
        : { counter, window: windowOf(counter, now) }
    );
    const consume = entries.every(({ counter, credit, window }) =>
      credit
        ? credit.balance.credits >= counter.cost
        : window!.log.total + counter.cost <= (counter as WindowCounter).limit
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
      const { log, at } = window!;
      const result = answer(log, counter as WindowCounter, at, consumed);
      if (consumed) {
        const last = log.times.length - 1;
        if (last >= log.head && log.times[last] === at) log.units[last] += counter.cost;
        else {
          log.times.push(at);
          log.units.push(counter.cost);
        }
        log.total += counter.cost;
      }
      return result;
    });
    sweep(now);
    while (balances.size > maxCounters) balances.delete(balances.keys().next().value!);
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
      return logs.size + balances.size;
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
          const held = balances.get(`${counter.subject}\n${counter.name}`);
          if (held === undefined) return null;
          const { balance, resetMs } = settle(counter, held, now, false);
          return { allowed: balance.credits >= counter.cost, remaining: balance.credits, resetMs };
        });
      }),
  };
}
