/**
 * The in-memory store (one process): a sliding window of sub-buckets per
 * window counter (a row of typed arrays) and a balance per credit counter,
 * each bounded in number; idle window counters swept as checks run.
 * Constant work per check.
 *
 * @module
 */
import type { CounterResult, CreditCounter, RateLimitCounter, RateLimitStore } from "./store.ts";
import type { CompiledRateLimitPolicy } from "./policy.ts";
import { assertCount, assertEpochMs, MAX_CREDITS } from "./_checks.ts";
import { assertKnownOptions } from "./_options.ts";
import { answersWellFormed } from "./_well_formed.ts";
import { compileCreditChange } from "./credits.ts";
import { settleBalance } from "./_refill.ts";
import { Recency, type RecencyNode } from "./_recency.ts";
import { bucketStart, leavesAt, SUB_BUCKETS, subBucket } from "./_window.ts";

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
   * fraction floored); tests inject a fake one. A reading outside 0–8.64e15
   * (Infinity, NaN) is a `TypeError`.
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
 * Window counters live in typed arrays, a row each (no object per counter: a
 * check reads one row of 18 numbers, where a `Map` of objects chased five
 * pointers, so its cost grew with the number of counters held). Row `r` holds
 * in `data` from `r * STRIDE`: its window (ms), newest sub-bucket counted,
 * the ms that sub-bucket starts, the next one starts and it leaves (from then
 * on nothing is counted: kept, so a check inside its sub-bucket divides
 * nothing), the ms its oldest unit leaves (kept as units come and sub-buckets
 * leave: an allowed check walks nothing; meaningless with no units held),
 * units held, then its units per sub-bucket in a ring of `SLOTS` (for
 * `head - SUB_BUCKETS`…`head`, the newest at its `RING` link).
 */
const WINDOW_MS = 0;
const HEAD = 1;
const START = 2;
const NEXT_AT = 3;
const IDLE_AT = 4;
const FIRST_LEAVES = 5;
const TOTAL = 6;
const COUNTS = 7;
const SLOTS = SUB_BUCKETS + 1;
const STRIDE = COUNTS + SLOTS;

/**
 * Row `r`'s links, in `links` from `r * LINKS`: the rows next to it in the
 * order of use (older, newer), the next row of its subject or the next free
 * row (-1: none), and its newest sub-bucket's place in the ring. One array: a
 * check reads one cache line of links, not four.
 */
const OLDER = 0;
const NEWER = 1;
const NEXT = 2;
const RING = 3;
const LINKS = 4;

/**
 * One subject's credit balances, a node of the order of use. Keyed by
 * the subject alone: a `Map` lookup of a string the caller keeps (a key id)
 * reuses its hash, where a key built per check would be hashed every time.
 */
interface Held<T> extends RecencyNode {
  readonly items: T[];
}

/**
 * Moves row `r` (at `at` of `data`, its newest sub-bucket in the ring at its
 * `RING` link) to sub-bucket `q`, clearing the sub-buckets that left (at most
 * `SLOTS`). Ring places are kept as small integers (sub-bucket numbers are
 * past 2^31: a `%` of them would be a floating-point remainder per check).
 */
function advance(data: Float64Array, links: Int32Array, r: number, q: number): void {
  const at = r * STRIDE;
  const steps = q - data[at + HEAD];
  if (steps >= SLOTS) {
    data.fill(0, at + TOTAL, at + STRIDE);
    links[r * LINKS + RING] = 0;
  } else {
    let i = links[r * LINKS + RING];
    for (let k = 0; k < steps; k++) {
      if (++i === SLOTS) i = 0;
      data[at + TOTAL] -= data[at + COUNTS + i];
      data[at + COUNTS + i] = 0;
    }
    links[r * LINKS + RING] = i;
  }
  moveHead(data, at, q);
  if (data[at + TOTAL] > 0) data[at + FIRST_LEAVES] = leavesBy(data, links, r, 1);
}

/** Sets the newest sub-bucket of the row at `at` to `q`, with the moments it starts, ends and leaves at. */
function moveHead(data: Float64Array, at: number, q: number): void {
  const windowMs = data[at + WINDOW_MS];
  data[at + HEAD] = q;
  data[at + START] = bucketStart(q, windowMs);
  data[at + NEXT_AT] = bucketStart(q + 1, windowMs);
  data[at + IDLE_AT] = leavesAt(q, windowMs);
}

/** A window counter's answer, named as the limiter's policy result (the limiter hands it on). */
interface WindowAnswer extends CounterResult {
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
}

/**
 * The answer of row `r` (policy `name`, `limit` units, `cost` this check) at
 * moment `now` (after consuming, if it did). Allowed, it resets when its oldest
 * unit leaves (0: none held); refused, when the units it lacks have left
 * (`windowMs`: a cost above the limit never fits).
 */
function answer(
  data: Float64Array,
  links: Int32Array,
  r: number,
  name: string,
  limit: number,
  cost: number,
  now: number,
  consumed: boolean,
): WindowAnswer {
  const windowMs = data[r * STRIDE + WINDOW_MS];
  const total = data[r * STRIDE + TOTAL];
  const allowed = consumed || total + cost <= limit;
  // A clock that stepped back counts at the start of the newest sub-bucket.
  const start = data[r * STRIDE + START];
  const t = now < start ? start : now;
  const resetMs = allowed
    ? total === 0 ? 0 : data[r * STRIDE + FIRST_LEAVES] - t
    : cost <= limit
    ? leavesBy(data, links, r, total + cost - limit) - t
    : windowMs;
  return { name, limit, windowMs, remaining: limit - total, resetMs, allowed };
}

/**
 * The ms at which `units` (1 to the units held) of row `r` have left:
 * sub-buckets walked from the oldest counted, at most `SLOTS` of them.
 */
function leavesBy(data: Float64Array, links: Int32Array, r: number, units: number): number {
  const at = r * STRIDE;
  const windowMs = data[at + WINDOW_MS];
  const head = data[at + HEAD];
  const counts = at + COUNTS;
  const newest = links[r * LINKS + RING];
  // Every unit in the newest sub-bucket (a steady key's usual case, and a key
  // refused within the sub-bucket that filled it): no walk.
  if (data[counts + newest] === data[at + TOTAL]) return data[at + IDLE_AT];
  let i = newest === SUB_BUCKETS ? 0 : newest + 1;
  let left = 0;
  for (let q = head - SUB_BUCKETS; q <= head; q++) {
    left += data[counts + i];
    if (left >= units) return leavesAt(q, windowMs);
    if (++i === SLOTS) i = 0;
  }
  return data[at + IDLE_AT]; // not reached: the sub-buckets hold every unit
}

/** The bug of a subject's chain of window rows that does not end (or misses a row). */
function brokenChain(): TypeError {
  return new TypeError("the memory store's window rows of a subject form a broken chain");
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
 * 0–8.64e15 is a `TypeError`. With an injected `now`, or a `Date.now` replaced
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
  const read = options.now ?? Date.now;
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

  // Window counters: a row each (see `STRIDE`), rows found by subject (the
  // first of the subject's rows, the others chained by `NEXT`), in order of
  // use through `OLDER`/`NEWER` (-1: none); free rows chained by `NEXT`.
  let capacity = 0;
  let data = new Float64Array(0);
  let links = new Int32Array(0);
  const names: string[] = [];
  const subjects: string[] = [];
  const firstRow = new Map<string, number>();
  let oldestRow = -1;
  let newestRow = -1;
  let freeRow = -1;
  let windowCount = 0;
  /**
   * The newest moment a check read: idle rows are swept at it, and a new row
   * starts no earlier, so a row swept as idle is never needed again (by a
   * clock that then steps back: its sub-buckets stay in order).
   */
  let latest = -Infinity;

  /** Doubles the rows (rows held are at most `maxCounters` + one check's counters: memory stays bounded). */
  const grow = () => {
    const size = Math.max(64, capacity * 2);
    const copy = <A extends Float64Array | Int32Array>(from: A, to: A) => {
      to.set(from);
      return to;
    };
    data = copy(data, new Float64Array(size * STRIDE));
    links = copy(links, new Int32Array(size * LINKS));
    for (let r = capacity; r < size; r++) {
      links[r * LINKS + NEXT] = r + 1 < size ? r + 1 : freeRow;
      names.push("");
      subjects.push("");
    }
    freeRow = capacity;
    capacity = size;
  };

  /** Puts row `r` at the newest end of the order of use. */
  const append = (r: number) => {
    links[r * LINKS + OLDER] = newestRow;
    links[r * LINKS + NEWER] = -1;
    if (newestRow === -1) oldestRow = r;
    else links[newestRow * LINKS + NEWER] = r;
    newestRow = r;
  };

  /** Takes row `r` out of the order of use. */
  const unlink = (r: number) => {
    const o = links[r * LINKS + OLDER];
    const n = links[r * LINKS + NEWER];
    if (o === -1) oldestRow = n;
    else links[o * LINKS + NEWER] = n;
    if (n === -1) newestRow = o;
    else links[n * LINKS + OLDER] = o;
  };

  /** Drops row `r`: out of the order of use and its subject's chain, onto the free rows. */
  const remove = (r: number) => {
    unlink(r);
    const subject = subjects[r];
    const first = firstRow.get(subject) ?? -1;
    if (first !== r) {
      let p = first;
      for (let steps = 0; links[p * LINKS + NEXT] !== r; steps++) {
        if (p === -1 || steps > windowCount) throw brokenChain();
        p = links[p * LINKS + NEXT];
      }
      links[p * LINKS + NEXT] = links[r * LINKS + NEXT];
    } else if (links[r * LINKS + NEXT] === -1) firstRow.delete(subject);
    else firstRow.set(subject, links[r * LINKS + NEXT]);
    names[r] = subjects[r] = "";
    links[r * LINKS + NEXT] = freeRow;
    freeRow = r;
    windowCount--;
  };

  /**
   * After a check of `n` counters, `credits` of them balances: drops idle window counters
   * (nothing counted at `now`) from the least recently checked end, at most `n + 1` of them,
   * and any over the bounds but the check's own (the newest `n` rows: a check naming more
   * than `maxCounters` keeps them).
   */
  const sweep = (now: number, n: number, credits: number) => {
    const bound = Math.max(maxCounters, n);
    let idle = n + 1;
    while (
      oldestRow !== -1 &&
      (windowCount > bound || (idle-- > 0 && now >= data[oldestRow * STRIDE + IDLE_AT]))
    ) remove(oldestRow);
    sweepBalances(credits);
  };

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

  /**
   * The row of window `name` of `windowMs` for `subject`, moved to `now` (a
   * clock that stepped back leaves it where it is; `touch` moves it in the
   * order of use); `first`: the subject's first row (-1: none); `after`: the
   * row of this subject the check used before (-1: none), the search starting
   * after it (a check's windows are chained in the order it names them: found
   * at the first step), a new row put after it.
   */
  const windowOf = (
    subject: string,
    name: string,
    windowMs: number,
    first: number,
    after: number,
    now: number,
  ): number => {
    // The subject's rows as a ring (the last followed by the first), from the row after `after`.
    const next = after === -1 ? -1 : links[after * LINKS + NEXT];
    const start = next === -1 ? first : next;
    let r = start;
    if (r !== -1) {
      let steps = 0;
      do {
        if (names[r] === name && data[r * STRIDE + WINDOW_MS] === windowMs) {
          // Inside the newest sub-bucket by more than 1 ms (a fractional clock included): no division.
          const at = r * STRIDE;
          if (now < data[at + START] || now >= data[at + NEXT_AT] - 1) {
            const q = subBucket(now, windowMs);
            if (q > data[at + HEAD]) advance(data, links, r, q);
          }
          return r;
        }
        r = links[r * LINKS + NEXT];
        if (r === -1) r = first;
        // A walk past every row held: the chain is broken (a bug; the check fails closed).
        if (++steps > windowCount) throw brokenChain();
      } while (r !== start);
    }
    return addWindow(subject, name, windowMs, after, now);
  };

  /**
   * A new row for a window at `now` (at `latest` when the clock stepped back
   * from it), after row `after` of its subject's rows (-1: first of them).
   */
  const addWindow = (
    subject: string,
    name: string,
    windowMs: number,
    after: number,
    now: number,
  ): number => {
    if (freeRow === -1) grow();
    const r = freeRow;
    freeRow = links[r * LINKS + NEXT];
    names[r] = name;
    subjects[r] = subject;
    if (after === -1) {
      links[r * LINKS + NEXT] = firstRow.get(subject) ?? -1;
      firstRow.set(subject, r);
    } else {
      links[r * LINKS + NEXT] = links[after * LINKS + NEXT];
      links[after * LINKS + NEXT] = r;
    }
    append(r);
    windowCount++;
    const at = r * STRIDE;
    data[at + WINDOW_MS] = windowMs;
    moveHead(data, at, subBucket(now < latest ? latest : now, windowMs));
    data.fill(0, at + TOTAL, at + STRIDE);
    links[r * LINKS + RING] = 0;
    return r;
  };

  /**
   * During one check (reused: a check runs synchronously), each counter's
   * window row (-1: a balance) or balance, cost and limit: a counter's fields
   * are read once (counters come in several shapes, so each read is a
   * look-up).
   */
  const rows: number[] = [];
  const held: Balance[] = [];
  const costs: number[] = [];
  const limits: number[] = [];

  /**
   * Moves the window rows of a check (the first `n` of `rows`) to the newest
   * end of the order of use: as one run when they follow each other there (a
   * subject's policies checked again: two links changed, not a move per row),
   * else one by one.
   */
  const touch = (n: number) => {
    let a = -1;
    let b = -1;
    for (let i = 0; i < n; i++) {
      const r = rows[i];
      if (r === -1) continue;
      if (a === -1) a = r;
      else if (links[b * LINKS + NEWER] !== r) return touchEach(n);
      b = r;
    }
    if (b === -1 || b === newestRow) return;
    const older = links[a * LINKS + OLDER];
    const newer = links[b * LINKS + NEWER]; // not -1: `b` is not the newest
    if (older === -1) oldestRow = newer;
    else links[older * LINKS + NEWER] = newer;
    links[newer * LINKS + OLDER] = older;
    links[a * LINKS + OLDER] = newestRow;
    links[newestRow * LINKS + NEWER] = a;
    links[b * LINKS + NEWER] = -1;
    newestRow = b;
  };

  /** Moves the window rows of a check to the newest end one by one, in order. */
  const touchEach = (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = rows[i];
      if (r !== -1 && r !== newestRow) {
        unlink(r);
        append(r);
      }
    }
  };

  /**
   * Counter `i` of a check, window `name` of `windowMs` for `subject`, whose
   * first row is `first` (-1: none), after row `last` of it the check used
   * (-1: none): its row, limit and cost kept (`rows`…); the subject's first
   * row now (the new row, when one was added first).
   */
  const windowAt = (
    i: number,
    subject: string,
    name: string,
    limit: number,
    windowMs: number,
    cost: number,
    first: number,
    last: number,
    now: number,
  ): number => {
    const count = windowCount;
    const r = windowOf(subject, name, windowMs, first, last, now);
    rows[i] = r;
    limits[i] = limit;
    costs[i] = cost;
    return windowCount !== count && last === -1 ? r : first;
  };

  /** Whether window counter `i` of a check (kept by `windowAt`) fits its cost. */
  const fits = (i: number) => data[rows[i] * STRIDE + TOTAL] + costs[i] <= limits[i];

  const checkAt = (counters: readonly RateLimitCounter[], now: number): CounterResult[] => {
    stamp++;
    const n = counters.length;
    let consume = true;
    // The subject last looked up: a check's policies share a subject, looked up once.
    let subject: string | undefined;
    let first = -1;
    let last = -1;
    for (let i = 0; i < n; i++) {
      const counter = counters[i];
      // Read after `kind`: of a kind, counters come in fewer shapes.
      if (counter.kind === "credit") {
        const cost = counter.cost;
        const balance = balanceOf(counter, now);
        held[i] = balance;
        rows[i] = -1;
        costs[i] = cost;
        if (balance.credits < cost) consume = false;
      } else {
        const { name, limit, windowMs, cost } = counter;
        if (counter.subject !== subject) {
          subject = counter.subject;
          first = firstRow.get(subject) ?? -1;
          last = -1;
        }
        first = windowAt(i, subject, name, limit, windowMs, cost, first, last, now);
        last = rows[i];
        if (!fits(i)) consume = false;
      }
    }
    return answerAll(n, consume, now);
  };

  /**
   * `checkAt` of the window counters of the compiled `policies` for `subject`,
   * each counting its policy's cost, without a counter built (the limiter's
   * check of compiled policies without options): their fields read in one shape.
   */
  const checkPoliciesAt = (
    subject: string,
    policies: readonly CompiledRateLimitPolicy[],
    now: number,
  ): CounterResult[] => {
    const n = policies.length;
    let consume = true;
    let first = firstRow.get(subject) ?? -1;
    for (let i = 0; i < n; i++) {
      const { name, limit, windowMs, cost } = policies[i];
      first = windowAt(
        i,
        subject,
        name,
        limit,
        windowMs,
        cost,
        first,
        i === 0 ? -1 : rows[i - 1],
        now,
      );
      if (!fits(i)) consume = false;
    }
    return answerAll(n, consume, now);
  };

  /** The answers of a check's `n` counters kept (`rows`…), each consumed when `consume`. */
  const answerAll = (n: number, consume: boolean, now: number): CounterResult[] => {
    touch(n);
    const d = data; // no row is added past here: read once
    const l = links;
    const results: CounterResult[] = new Array(n);
    let credits = 0;
    for (let i = 0; i < n; i++) {
      const cost = costs[i];
      const consumed = consume && cost > 0;
      const r = rows[i];
      if (r === -1) {
        credits++;
        const balance = held[i];
        const { amount, resetMs } = balance;
        const allowed = balance.credits >= cost;
        results[i] = {
          allowed,
          remaining: balance.credits - (consumed ? cost : 0),
          resetMs: !allowed && cost > amount ? -1 : resetMs,
        };
        if (consumed) balance.credits -= cost;
        continue;
      }
      if (consumed) {
        const at = r * STRIDE;
        if (d[at + TOTAL] === 0) d[at + FIRST_LEAVES] = d[at + IDLE_AT]; // its first unit
        d[at + COUNTS + l[r * LINKS + RING]] += cost;
        d[at + TOTAL] += cost;
      }
      results[i] = answer(d, l, r, names[r], limits[i], cost, now, consumed);
    }
    if (now > latest) latest = now;
    sweep(latest, n, credits);
    return results;
  };

  // On the runtime's own clock, a caller's `nowMs` (read for this check) spares the store its read.
  const nowOf = clock === NATIVE_DATE_NOW
    ? (nowMs?: number) => nowMs === undefined ? clock() : assertEpochMs(nowMs, "nowMs")
    : () => clock();
  const checkNow = (counters: readonly RateLimitCounter[], nowMs?: number) =>
    checkAt(counters, nowOf(nowMs));
  answersWellFormed(checkNow, (subject, policies, nowMs) =>
    // the limiter does not check its answers again
    checkPoliciesAt(subject, policies, nowOf(nowMs)));

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
