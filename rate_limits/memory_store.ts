/**
 * The in-memory store (one process): a sliding window of sub-buckets per
 * window counter (a row of typed arrays) and a balance per credit counter,
 * each bounded in number; idle window counters swept as checks run.
 * Constant work per check.
 *
 * @module
 */
import type { CounterResult, CreditCounter, RateLimitCounter, RateLimitStore } from "./store.ts";
import { assertCount, assertEpochMs, MAX_CREDITS } from "./_checks.ts";
import { assertKnownOptions, optionalFunction } from "./_options.ts";
import { answersWellFormed } from "./_well_formed.ts";
import { compileCreditChange } from "./credits.ts";
import { settleBalance } from "./_refill.ts";
import { Recency, type RecencyNode } from "./_recency.ts";
import { WindowRows } from "./_window_rows.ts";

/** The runtime's own `Date.now` (a fake timer installed before a store is made replaces it). */
const NATIVE_DATE_NOW = Date.now;

/** Options of `createMemoryRateLimitStore`. */
export interface MemoryRateLimitStoreOptions {
  /**
   * Most window counters, and most credit balances, kept (default 100,000 each).
   * Past it the least recently checked one is dropped, even when its window
   * still counts units (a dropped balance restarts from `initial`): size it
   * above the peak of active subjects × policies. A check never drops its own
   * counters (nor a change its balance): one naming more than `maxCounters`
   * keeps them all, past it, until a later check's sweep (the sweep's work per
   * check stays constant).
   */
  maxCounters?: number;
  /**
   * Clock in ms since the epoch (default `Date.now`), counted in whole ms (a
   * fraction floored); tests inject a fake one. A reading outside 0–9e14
   * (year 30,489; Infinity, NaN) is a `TypeError`.
   */
  now?: () => number;
}

/** The in-memory store, with `size` (counters kept) for monitoring. */
export interface MemoryRateLimitStore extends RateLimitStore {
  /** Window counters and credit balances kept. */
  readonly size: number;
  /** See `RateLimitStore.changeCredits`. */
  changeCredits: NonNullable<RateLimitStore["changeCredits"]>;
  /** See `RateLimitStore.anchorsCredits`: `{ anchor: true }` is taken. */
  readonly anchorsCredits: true;
  /** See `RateLimitStore.checkNow`. */
  checkNow: NonNullable<RateLimitStore["checkNow"]>;
  /** See `RateLimitStore.readCredits`. */
  readCredits: NonNullable<RateLimitStore["readCredits"]>;
}

/**
 * One subject's credit balances, a node of the order of use. Keyed by
 * the subject alone: a `Map` lookup of a string the caller keeps (a key id)
 * reuses its hash, where a key built per check would be hashed every time.
 */
interface Held<T> extends RecencyNode {
  readonly items: T[];
}

/** A credit balance: credits left, as of a time (ms) or the refill boundary it last took. */
interface Balance {
  readonly name: string;
  /** The `stamp` of the last check or change that used it. */
  stamp: number;
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
 * the store is in its process; `now` moves counting time only). On the
 * default clock (the runtime's own `Date.now`), `checkNow(counters, nowMs)`
 * counts at the caller's `nowMs` (a wall-clock time read for this check: the
 * API-key service's) and reads no clock; a `nowMs` that is not an integer in
 * 0–9e14 is a `TypeError`. With an injected `now`, or a `Date.now` replaced
 * (a fake timer) when the store was made, `nowMs` is ignored.
 * `readCredits` writes nothing (not even a touch) and answers a balance it
 * does not hold as it would start, on its clock (never `null`). A window counter's answer
 * also carries its `name`, `limit` and `windowMs` (a new object per check: the
 * limiter hands it on as the policy result). Work per check and memory
 * per counter are constant: at most `maxCounters` window counters (a row of
 * 18 numbers each, the room of dropped ones reused), and as many balances
 * (more only while the last check's or change's own are more: a check never
 * drops a counter it uses).
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
  const read = optionalFunction(options.now, "now", "createMemoryRateLimitStore") ?? Date.now;
  // Whole ms, as Redis and PostgreSQL count: a fractional clock (performance.now()) floored. A
  // reading that is no time (Infinity, NaN) is a store bug: a TypeError, never counted at.
  const clock = options.now === undefined && read === NATIVE_DATE_NOW ? read : () => {
    const t = read();
    return assertEpochMs(Number.isFinite(t) ? Math.floor(t) : t, "now()");
  };
  const balances = new Recency<Held<Balance>>();
  let balanceCount = 0;
  /** Moved by every check and change: the balances it uses carry it (see `sweepBalances`). */
  let stamp = 0;
  const windows = new WindowRows(maxCounters);
  const { rows, held, costs } = windows;

  /**
   * Drops the least recently used subjects' balances past `maxCounters` (after a check or a
   * change of `own` balances), never one that check or change used: its subjects are the newest
   * `own` at most, so past those only the balances it did not use (older `stamp`) go, as many
   * as the bound needs.
   */
  const sweepBalances = (own: number) => {
    while (balanceCount > maxCounters) {
      const oldest = balances.oldest!;
      if (balances.size > own) {
        balances.remove(oldest);
        balanceCount -= oldest.items.length;
        continue;
      }
      for (
        let held: Held<Balance> | undefined = oldest;
        held !== undefined && balanceCount > maxCounters;
      ) {
        const newer = held.newer as Held<Balance> | undefined;
        const { items } = held;
        let kept = 0;
        for (const balance of items) {
          if (balance.stamp === stamp || balanceCount <= maxCounters) items[kept++] = balance;
          else balanceCount--;
        }
        items.length = kept;
        if (kept === 0) balances.remove(held);
        held = newer;
      }
      return;
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
    if (write && counter.refill === undefined) {
      // No refill: nothing is ever due (`settleBalance` keeps credits and asOf); no object made.
      balance.amount = 0;
      balance.resetMs = -1;
      return balance;
    }
    const settled = settleBalance(balance.credits, balance.asOf, counter.refill, now);
    const target = write ? balance : { ...balance };
    target.credits = settled.credits;
    target.asOf = settled.asOf;
    target.amount = settled.amount;
    target.resetMs = settled.resetMs;
    return target;
  };

  /** `counter`'s balance as it starts at `now` (the store holds none), not settled. */
  const initialOf = (counter: CreditCounter, now: number): Balance => ({
    name: counter.name,
    stamp,
    credits: counter.initial,
    asOf: counter.initialAt ?? now,
    amount: 0,
    resetMs: -1,
  });

  /** `counter`'s balance at `now`, the refill due applied, with its refill amount and next boundary. */
  const balanceOf = (counter: CreditCounter, now: number): Balance => {
    const { items } = heldOf(balances, counter.subject);
    for (const balance of items) {
      if (balance.name === counter.name) {
        balance.stamp = stamp;
        return settle(counter, balance, now, true);
      }
    }
    const balance = initialOf(counter, now);
    items.push(balance);
    balanceCount++;
    return settle(counter, balance, now, true);
  };

  /** A check of `counters` at `now` (read once for it). */
  const checkAt = (counters: readonly RateLimitCounter[], now: number): CounterResult[] => {
    stamp++;
    const n = counters.length;
    let consume = true;
    // The subject last looked up: a check's policies share a subject, looked up once.
    let subject: string | undefined;
    let first = -1;
    let last = -1;
    let credits = 0;
    for (let i = 0; i < n; i++) {
      const counter = counters[i];
      // Read after `kind`: of a kind, counters come in fewer shapes.
      if (counter.kind === "credit") {
        const cost = counter.cost;
        const balance = balanceOf(counter, now);
        held[i] = balance;
        rows[i] = -1;
        costs[i] = cost;
        credits++;
        if (balance.credits < cost) consume = false;
      } else {
        const { name, limit, windowMs, cost } = counter;
        if (counter.subject !== subject) {
          subject = counter.subject;
          first = windows.firstRow.get(subject) ?? -1;
          last = -1;
        }
        first = windows.windowAt(i, subject, name, limit, windowMs, cost, first, last, now);
        last = rows[i];
        if (!windows.fits(i)) consume = false;
      }
    }
    const results = windows.answerAll(n, consume, now);
    sweepBalances(credits);
    return results;
  };

  // On the runtime's own clock, a caller's `nowMs` (read for this check) spares the store its read.
  const nowOf = clock === NATIVE_DATE_NOW
    ? (nowMs?: number) => nowMs === undefined ? clock() : assertEpochMs(nowMs, "nowMs")
    : () => clock();
  const checkNow = (counters: readonly RateLimitCounter[], nowMs?: number) =>
    checkAt(counters, nowOf(nowMs));
  // The limiter does not check its answers again.
  answersWellFormed(checkNow, (subject, policies, nowMs) => {
    const results = windows.checkPoliciesAt(subject, policies, nowOf(nowMs));
    sweepBalances(0);
    return results;
  });

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
      return windows.windowCount + balanceCount;
    },
    checkBatch: (checks) =>
      promised(() => ({
        results: checks.map(({ counters, deadline }) => {
          return Date.now() < deadline ? checkAt(counters, clock()) : null;
        }),
      })),
    checkNow,
    anchorsCredits: true,
    changeCredits: (counter, change, deadline) =>
      promised(() => {
        const valid = compileCreditChange(change);
        if (Date.now() >= deadline) return null;
        const now = clock();
        stamp++;
        const balance = balanceOf(counter, now);
        const before = balance.credits;
        if ("set" in valid) balance.credits = valid.set;
        else if ("add" in valid) {
          balance.credits = Math.min(MAX_CREDITS, Math.max(0, balance.credits + valid.add));
        }
        if ("anchor" in valid) balance.asOf = Math.max(balance.asOf, now);
        sweepBalances(1);
        return { allowed: true, remaining: balance.credits, resetMs: balance.resetMs, before };
      }),
    readCredits: (counters) =>
      promised(() => {
        const now = clock();
        return counters.map((counter) => {
          // One not held is answered as it starts, on this store's clock (kept nowhere).
          const held = balances.peek(counter.subject)?.items.find((b) => b.name === counter.name);
          const balance = settle(counter, held ?? initialOf(counter, now), now, false);
          return {
            allowed: balance.credits >= counter.cost,
            remaining: balance.credits,
            resetMs: balance.resetMs,
          };
        });
      }),
  };
}
