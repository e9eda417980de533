/**
 * The in-memory store's window counters (`./memory_store.ts`): rows of typed
 * arrays, found by subject, in order of use, idle ones swept as checks run. A
 * class, one per store: its methods are called directly with every store a
 * process makes (closures made per store are not), so a check costs the same
 * beside other stores.
 *
 * @module
 */
import type { CompiledRateLimitPolicy } from "./policy.ts";
import type { CounterResult } from "./store.ts";
import { bucketStart, leavesAt, SUB_BUCKETS, subBucket } from "./_window.ts";

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

/** A credit balance's part in a check's answer (kept by the store, settled for the check). */
export interface HeldBalance {
  credits: number;
  /** The refill amount (0 without) and ms to the next refill (-1 without). */
  readonly amount: number;
  readonly resetMs: number;
}

/**
 * The window counters of one store, at most `maxCounters` of them past a
 * check's own. During a check, `rows`, `held`, `costs` and `limits` hold each
 * of its counters' row (-1: a balance), balance, cost and limit.
 */
export class WindowRows {
  constructor(private readonly maxCounters: number) {}

  // Window counters: a row each (see `STRIDE`), rows found by subject (the
  // first of the subject's rows, the others chained by `NEXT`), in order of
  // use through `OLDER`/`NEWER` (-1: none); free rows chained by `NEXT`.
  private capacity = 0;
  private data = new Float64Array(0);
  private links = new Int32Array(0);
  private readonly names: string[] = [];
  private readonly subjects: string[] = [];
  readonly firstRow = new Map<string, number>();
  private oldestRow = -1;
  private newestRow = -1;
  private freeRow = -1;
  /** Window counters held (set by the rows' own methods only). */
  windowCount = 0;
  /**
   * The newest moment a check read: idle rows are swept at it, and a new row
   * starts no earlier, so a row swept as idle is never needed again (by a
   * clock that then steps back: its sub-buckets stay in order).
   */
  private latest = -Infinity;

  /** Doubles the rows (rows held are at most `maxCounters` + one check's counters: memory stays bounded). */
  private grow() {
    const size = Math.max(64, this.capacity * 2);
    const copy = <A extends Float64Array | Int32Array>(from: A, to: A) => {
      to.set(from);
      return to;
    };
    this.data = copy(this.data, new Float64Array(size * STRIDE));
    this.links = copy(this.links, new Int32Array(size * LINKS));
    for (let r = this.capacity; r < size; r++) {
      this.links[r * LINKS + NEXT] = r + 1 < size ? r + 1 : this.freeRow;
      this.names.push("");
      this.subjects.push("");
    }
    this.freeRow = this.capacity;
    this.capacity = size;
  }

  /** Puts row `r` at the newest end of the order of use. */
  private append(r: number) {
    this.links[r * LINKS + OLDER] = this.newestRow;
    this.links[r * LINKS + NEWER] = -1;
    if (this.newestRow === -1) this.oldestRow = r;
    else this.links[this.newestRow * LINKS + NEWER] = r;
    this.newestRow = r;
  }

  /** Takes row `r` out of the order of use. */
  private unlink(r: number) {
    const o = this.links[r * LINKS + OLDER];
    const n = this.links[r * LINKS + NEWER];
    if (o === -1) this.oldestRow = n;
    else this.links[o * LINKS + NEWER] = n;
    if (n === -1) this.newestRow = o;
    else this.links[n * LINKS + OLDER] = o;
  }

  /** Drops row `r`: out of the order of use and its subject's chain, onto the free rows. */
  private remove(r: number) {
    this.unlink(r);
    const subject = this.subjects[r];
    const first = this.firstRow.get(subject) ?? -1;
    if (first !== r) {
      let p = first;
      for (let steps = 0; this.links[p * LINKS + NEXT] !== r; steps++) {
        if (p === -1 || steps > this.windowCount) throw brokenChain();
        p = this.links[p * LINKS + NEXT];
      }
      this.links[p * LINKS + NEXT] = this.links[r * LINKS + NEXT];
    } else if (this.links[r * LINKS + NEXT] === -1) this.firstRow.delete(subject);
    else this.firstRow.set(subject, this.links[r * LINKS + NEXT]);
    this.names[r] = this.subjects[r] = "";
    this.links[r * LINKS + NEXT] = this.freeRow;
    this.freeRow = r;
    this.windowCount--;
  }

  /**
   * After a check of `n` counters, `credits` of them balances: drops idle window counters
   * (nothing counted at `now`) from the least recently checked end, at most `n + 1` of them,
   * and any over the bounds but the check's own (the newest `n` rows: a check naming more
   * than `maxCounters` keeps them).
   */
  private sweep(now: number, n: number): void {
    const bound = Math.max(this.maxCounters, n);
    let idle = n + 1;
    while (
      this.oldestRow !== -1 &&
      (this.windowCount > bound ||
        (idle-- > 0 && now >= this.data[this.oldestRow * STRIDE + IDLE_AT]))
    ) this.remove(this.oldestRow);
  }

  /**
   * The row of window `name` of `windowMs` for `subject`, moved to `now` (a
   * clock that stepped back leaves it where it is; `touch` moves it in the
   * order of use); `first`: the subject's first row (-1: none); `after`: the
   * row of this subject the check used before (-1: none), the search starting
   * after it (a check's windows are chained in the order it names them: found
   * at the first step), a new row put after it.
   */
  private windowOf(
    subject: string,
    name: string,
    windowMs: number,
    first: number,
    after: number,
    now: number,
  ): number {
    // The subject's rows as a ring (the last followed by the first), from the row after `after`.
    const next = after === -1 ? -1 : this.links[after * LINKS + NEXT];
    const start = next === -1 ? first : next;
    let r = start;
    if (r !== -1) {
      let steps = 0;
      do {
        if (this.names[r] === name && this.data[r * STRIDE + WINDOW_MS] === windowMs) {
          // Inside the newest sub-bucket by more than 1 ms (a fractional clock included): no division.
          const at = r * STRIDE;
          if (now < this.data[at + START] || now >= this.data[at + NEXT_AT] - 1) {
            const q = subBucket(now, windowMs);
            if (q > this.data[at + HEAD]) advance(this.data, this.links, r, q);
          }
          return r;
        }
        r = this.links[r * LINKS + NEXT];
        if (r === -1) r = first;
        // A walk past every row held: the chain is broken (a bug; the check fails closed).
        if (++steps > this.windowCount) throw brokenChain();
      } while (r !== start);
    }
    return this.addWindow(subject, name, windowMs, after, now);
  }

  /**
   * A new row for a window at `now` (at `latest` when the clock stepped back
   * from it), after row `after` of its subject's rows (-1: first of them).
   */
  private addWindow(
    subject: string,
    name: string,
    windowMs: number,
    after: number,
    now: number,
  ): number {
    if (this.freeRow === -1) this.grow();
    const r = this.freeRow;
    this.freeRow = this.links[r * LINKS + NEXT];
    this.names[r] = name;
    this.subjects[r] = subject;
    if (after === -1) {
      this.links[r * LINKS + NEXT] = this.firstRow.get(subject) ?? -1;
      this.firstRow.set(subject, r);
    } else {
      this.links[r * LINKS + NEXT] = this.links[after * LINKS + NEXT];
      this.links[after * LINKS + NEXT] = r;
    }
    this.append(r);
    this.windowCount++;
    const at = r * STRIDE;
    this.data[at + WINDOW_MS] = windowMs;
    moveHead(this.data, at, subBucket(now < this.latest ? this.latest : now, windowMs));
    this.data.fill(0, at + TOTAL, at + STRIDE);
    this.links[r * LINKS + RING] = 0;
    return r;
  }

  /**
   * During one check (reused: a check runs synchronously), each counter's
   * window row (-1: a balance) or balance, cost and limit: a counter's fields
   * are read once (counters come in several shapes, so each read is a
   * look-up).
   */
  readonly rows: number[] = [];
  readonly held: HeldBalance[] = [];
  readonly costs: number[] = [];
  private readonly limits: number[] = [];

  /**
   * Moves the window rows of a check (the first `n` of `rows`) to the newest
   * end of the order of use: as one run when they follow each other there (a
   * subject's policies checked again: two links changed, not a move per row),
   * else one by one.
   */
  private touch(n: number) {
    let a = -1;
    let b = -1;
    for (let i = 0; i < n; i++) {
      const r = this.rows[i];
      if (r === -1) continue;
      if (a === -1) a = r;
      else if (this.links[b * LINKS + NEWER] !== r) return this.touchEach(n);
      b = r;
    }
    if (b === -1 || b === this.newestRow) return;
    const older = this.links[a * LINKS + OLDER];
    const newer = this.links[b * LINKS + NEWER]; // not -1: `b` is not the newest
    if (older === -1) this.oldestRow = newer;
    else this.links[older * LINKS + NEWER] = newer;
    this.links[newer * LINKS + OLDER] = older;
    this.links[a * LINKS + OLDER] = this.newestRow;
    this.links[this.newestRow * LINKS + NEWER] = a;
    this.links[b * LINKS + NEWER] = -1;
    this.newestRow = b;
  }

  /** Moves the window rows of a check to the newest end one by one, in order. */
  private touchEach(n: number) {
    for (let i = 0; i < n; i++) {
      const r = this.rows[i];
      if (r !== -1 && r !== this.newestRow) {
        this.unlink(r);
        this.append(r);
      }
    }
  }

  /**
   * Counter `i` of a check, window `name` of `windowMs` for `subject`, whose
   * first row is `first` (-1: none), after row `last` of it the check used
   * (-1: none): its row, limit and cost kept (`rows`…); the subject's first
   * row now (the new row, when one was added first).
   */
  windowAt(
    i: number,
    subject: string,
    name: string,
    limit: number,
    windowMs: number,
    cost: number,
    first: number,
    last: number,
    now: number,
  ): number {
    const count = this.windowCount;
    const r = this.windowOf(subject, name, windowMs, first, last, now);
    this.rows[i] = r;
    this.limits[i] = limit;
    this.costs[i] = cost;
    return this.windowCount !== count && last === -1 ? r : first;
  }

  /** Whether window counter `i` of a check (kept by `windowAt`) fits its cost. */
  fits(i: number): boolean {
    return this.data[this.rows[i] * STRIDE + TOTAL] + this.costs[i] <= this.limits[i];
  }

  /**
   * `checkAt` of the window counters of the compiled `policies` for `subject`,
   * each counting its policy's cost, without a counter built (the limiter's
   * check of compiled policies without options): their fields read in one shape.
   */
  checkPoliciesAt(
    subject: string,
    policies: readonly CompiledRateLimitPolicy[],
    now: number,
  ): CounterResult[] {
    const n = policies.length;
    let consume = true;
    let first = this.firstRow.get(subject) ?? -1;
    for (let i = 0; i < n; i++) {
      const { name, limit, windowMs, cost } = policies[i];
      first = this.windowAt(
        i,
        subject,
        name,
        limit,
        windowMs,
        cost,
        first,
        i === 0 ? -1 : this.rows[i - 1],
        now,
      );
      if (!this.fits(i)) consume = false;
    }
    return this.answerAll(n, consume, now);
  }

  /** The answers of a check's `n` counters kept (`rows`…), each consumed when `consume`. */
  answerAll(n: number, consume: boolean, now: number): CounterResult[] {
    this.touch(n);
    const d = this.data; // no row is added past here: read once
    const l = this.links;
    const results: CounterResult[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const cost = this.costs[i];
      const consumed = consume && cost > 0;
      const r = this.rows[i];
      if (r === -1) {
        const balance = this.held[i];
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
      results[i] = answer(d, l, r, this.names[r], this.limits[i], cost, now, consumed);
    }
    if (now > this.latest) this.latest = now;
    // Idle at the check's own clock: a counter used after the clock stepped back holds units
    // that leave on that clock, behind `latest`.
    this.sweep(now, n);
    return results;
  }
}
