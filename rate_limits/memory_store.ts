/**
 * The in-memory store (one process): a sliding log per counter, bounded in
 * counters, idle counters swept as checks run.
 *
 * @module
 */
import type { CounterResult, RateLimitCounter, RateLimitStore } from "./store.ts";
import { assertCount } from "./policy.ts";

/** Options of `createMemoryRateLimitStore`. */
export interface MemoryRateLimitStoreOptions {
  /**
   * Most counters kept (default 100,000). Past it the least recently checked
   * counter is dropped, even when its window still counts units: size it above
   * the peak of active subjects × policies.
   */
  maxCounters?: number;
  /** Clock in ms (default `Date.now`); tests inject a fake one. */
  now?: () => number;
}

/** The in-memory store, with `size` (counters kept) for monitoring. */
export interface MemoryRateLimitStore extends RateLimitStore {
  /** Counters kept. */
  readonly size: number;
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
  counter: RateLimitCounter,
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

/**
 * Creates the in-memory store: exact within one process, lost on restart.
 * Memory: at most `maxCounters` counters, each holding at most
 * min(`limit`, `windowMs`) entries (units accepted in one ms share an entry).
 *
 * @example
 * ```ts
 * import { createMemoryRateLimitStore } from "./memory_store.ts";
 * const store = createMemoryRateLimitStore({ maxCounters: 10_000 });
 * const [result] = await store.check([
 *   { kind: "window", subject: "key_1", name: "api", limit: 2, windowMs: 1_000, cost: 1 },
 * ]);
 * result.remaining; // 1
 * ```
 */
export function createMemoryRateLimitStore(
  options: MemoryRateLimitStoreOptions = {},
): MemoryRateLimitStore {
  const maxCounters = assertCount(options.maxCounters ?? 100_000, 1, "maxCounters");
  const clock = options.now ?? Date.now;
  const logs = new Map<string, Log>();

  /** Drops idle counters from the least recently checked end, and any over the bound. */
  const sweep = (now: number) => {
    for (const [key, log] of logs) {
      const newest = log.times[log.times.length - 1];
      const idle = log.head === log.times.length || newest <= now - log.windowMs;
      if (!idle && logs.size <= maxCounters) break;
      logs.delete(key);
    }
  };

  const checkNow = (counters: readonly RateLimitCounter[]): CounterResult[] => {
    const now = clock();
    const entries = counters.map((counter) => {
      const key = `${counter.subject}\n${counter.name}`;
      let log = logs.get(key);
      if (log === undefined) {
        log = { times: [], units: [], head: 0, total: 0, windowMs: counter.windowMs };
      } else {
        logs.delete(key);
      }
      logs.set(key, log);
      log.windowMs = counter.windowMs;
      // A clock that stepped back counts from the newest entry, keeping the log ordered.
      const at = Math.max(now, log.times[log.times.length - 1] ?? now);
      prune(log, at);
      return { log, counter, at };
    });
    const consume = entries.every(({ log, counter }) => log.total + counter.cost <= counter.limit);
    const results = entries.map(({ log, counter, at }) => {
      const consumed = consume && counter.cost > 0;
      const result = answer(log, counter, at, consumed);
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
    return results;
  };

  return {
    name: "memory",
    get size() {
      return logs.size;
    },
    check: (counters) => {
      try {
        return Promise.resolve(checkNow(counters));
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}
