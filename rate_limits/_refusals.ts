/**
 * The refusals a limiter of a remote store remembers: a check the store
 * refused on a window counter is refused again, without the store, until that
 * counter can have room. Nothing but time takes units out of a window (no
 * store operation lowers a count), so until the counter's `resetMs` has passed
 * since the check started, the store would refuse the same check too: the
 * memory never admits what the store would refuse, and refuses nothing the
 * store would admit. A flood of an exhausted key then costs its process a
 * look-up, and its store nothing (docs/rate-limits.md, "Refusals remembered").
 *
 * A refusal on credits alone is not remembered (a balance can be topped up at
 * any time), nor a check whose inputs may change between calls (it is keyed by
 * its subject and the identity of its frozen check: the same compiled policies,
 * or the same frozen options, as the API-key service passes per key).
 *
 * @module
 */
import type { CounterResult } from "./store.ts";

/** Most subjects remembered by default. */
export const DEFAULT_REFUSALS = 10_000;
/** Most checks remembered per subject (e.g. a throttler's hit and its block's start). */
const CHECKS_PER_SUBJECT = 4;

/** What a check answered (the limiter's `RateLimitResult`): what a refusal reads of it. */
export interface Answer {
  readonly allowed: boolean;
  readonly unavailable: boolean;
  readonly outcome: string;
  readonly policies: readonly CounterResult[];
  readonly credits?: CounterResult;
  readonly balances?: readonly CounterResult[];
}

interface Refusal {
  /** The check refused (its compiled policies or its kept options' check). */
  readonly check: object;
  /** When the store's refusal arrived (`performance.now()` ms): its resets count down from it. */
  readonly answeredAt: number;
  /** Until when it is refused (`performance.now()` ms). */
  readonly until: number;
  /** Copies of what the store answered (the caller's answer may be changed by its caller). */
  readonly policies: readonly CounterResult[];
  readonly balances: readonly CounterResult[] | undefined;
}

/** `r` `elapsed` ms later (a copy): its `resetMs` counted down (a balance's `-1`, no refill, kept). */
const aged = (r: CounterResult, elapsed: number): CounterResult => ({
  ...r,
  resetMs: r.resetMs < 0 ? r.resetMs : Math.max(0, r.resetMs - elapsed),
});

/**
 * The refusals of one limiter, by subject (its newest `CHECKS_PER_SUBJECT`
 * checks), at most `max` subjects: the oldest is forgotten first.
 *
 * @example
 * ```ts
 * import { Refusals } from "./_refusals.ts";
 * const refusals = new Refusals(100);
 * const policies = [{ name: "api", limit: 1, windowMs: 60_000 }];
 * const result = {
 *   allowed: false,
 *   unavailable: false,
 *   outcome: "store",
 *   policies: [{ name: "api", limit: 1, windowMs: 60_000, allowed: false, remaining: 0, resetMs: 59_000 }],
 * };
 * const now = performance.now();
 * refusals.remember("key_1", policies, now, result, now);
 * refusals.recall("key_1", policies)?.allowed; // false, without the store
 * ```
 */
export class Refusals {
  readonly #max: number;
  readonly #bySubject = new Map<string, Refusal[]>();

  /** Remembers at most `max` subjects (≥ 1). */
  constructor(max: number) {
    this.#max = max;
  }

  /** Subjects remembered. */
  get size(): number {
    return this.#bySubject.size;
  }

  /**
   * The answer to `check` of `subject` when it is remembered refused (a new
   * refusal by the store, its `resetMs` counted down to now), else `undefined`.
   */
  recall(subject: string, check: object): Answer | undefined {
    if (this.#bySubject.size === 0) return undefined;
    const list = this.#bySubject.get(subject);
    if (list === undefined) return undefined;
    const at = list.findIndex((r) => r.check === check);
    if (at < 0) return undefined;
    const refusal = list[at];
    const now = performance.now();
    if (now >= refusal.until) {
      list.splice(at, 1);
      if (list.length === 0) this.#bySubject.delete(subject);
      return undefined;
    }
    const elapsed = now - refusal.answeredAt;
    const policies = refusal.policies.map((p) => aged(p, elapsed));
    const answer = { allowed: false, unavailable: false, outcome: "store", policies };
    if (refusal.balances === undefined) return answer;
    const balances = refusal.balances.map((b) => aged(b, elapsed));
    return { ...answer, credits: balances[0], balances };
  }

  /**
   * Remembers `result` of `check` of `subject`, started at `start` and
   * answered at `answeredAt` (`performance.now()` ms), when the store refused
   * it on a window counter: until the soonest moment one of those counters can
   * have room, counted from `start` (the store decided at or after it); its
   * resets answered counted down from `answeredAt` (it decided at or before it:
   * a `Retry-After` made of them is never early).
   */
  remember(
    subject: string,
    check: object,
    start: number,
    result: Answer,
    answeredAt: number,
  ): void {
    if (result.allowed || result.outcome !== "store") return;
    let soonest = Infinity;
    for (const p of result.policies) {
      if (!p.allowed && p.resetMs < soonest) soonest = p.resetMs;
    }
    if (!(soonest > 0 && soonest < Infinity)) return; // refused on credits alone
    const map = this.#bySubject;
    const list = (map.get(subject) ?? []).filter((r) => r.check !== check);
    map.delete(subject);
    if (map.size >= this.#max) map.delete(map.keys().next().value!);
    const copy = (r: CounterResult) => ({ ...r });
    list.push({
      check,
      answeredAt,
      until: start + soonest,
      policies: result.policies.map(copy),
      balances: result.balances?.map(copy),
    });
    if (list.length > CHECKS_PER_SUBJECT) list.shift();
    map.set(subject, list);
  }
}
