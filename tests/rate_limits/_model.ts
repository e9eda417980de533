/**
 * The reference of the documented algorithms, written the naive way (the
 * window rule of docs/rate-limits.md "The algorithm: a sliding window of
 * sub-buckets", the refill calendar of "Credits"), and the fast-check
 * commands the model-based tests run against a store. Every store's tests
 * check it against these: the one reference of each rule. Moments are whole
 * ms: a fractional moment counts at its ms (floored), as every store counts.
 */
import fc from "fast-check";
import type {
  CounterResult,
  CreditChangeResult,
  CreditCounter,
  CreditRefill,
  RateLimitCounter,
  WindowCounter,
} from "../../rate_limits/store.ts";
import { SUB_BUCKETS } from "../../rate_limits/_window.ts";

/** The sub-bucket of moment `t` in a window of `windowMs`. */
const bucket = (t: number, windowMs: number) => Math.floor((t * SUB_BUCKETS) / windowMs);

/** The first ms at which the units accepted at `t` are no longer counted. */
const leaves = (t: number, windowMs: number) =>
  Math.ceil(((bucket(t, windowMs) + SUB_BUCKETS + 1) * windowMs) / SUB_BUCKETS);

/**
 * The documented window rule, naively: every accepted unit is kept with its
 * moment; a check at `now` counts those of the sub-buckets
 * `bucket(now) - SUB_BUCKETS` to `bucket(now)`. Counters are keyed by
 * subject, name and window. Moments must not go back.
 */
export class ReferenceStore {
  readonly logs = new Map<string, { t: number; u: number }[]>();

  /** Checks `counters`; consumes only when they all fit and `othersFit`. */
  check(counters: readonly WindowCounter[], at: number, othersFit = true): CounterResult[] {
    const now = Math.floor(at);
    const counted = (c: WindowCounter, at: number) =>
      (this.logs.get(`${c.subject}|${c.name}|${c.windowMs}`) ?? []).filter((e) =>
        bucket(e.t, c.windowMs) >= bucket(at, c.windowMs) - SUB_BUCKETS
      );
    const sum = (entries: { u: number }[]) => entries.reduce((a, e) => a + e.u, 0);
    const fits = counters.map((c) => sum(counted(c, now)) + c.cost <= c.limit);
    const consume = fits.every(Boolean) && othersFit;
    return counters.map((c, i) => {
      const total = sum(counted(c, now));
      if (!fits[i]) {
        const candidates = counted(c, now).map((e) => leaves(e.t, c.windowMs) - now);
        for (const d of candidates.sort((a, b) => a - b)) {
          if (sum(counted(c, now + d)) + c.cost <= c.limit) {
            return { allowed: false, remaining: c.limit - total, resetMs: d };
          }
        }
        return { allowed: false, remaining: c.limit - total, resetMs: c.windowMs };
      }
      const consumed = consume && c.cost > 0 ? c.cost : 0;
      if (consumed > 0) {
        const key = `${c.subject}|${c.name}|${c.windowMs}`;
        this.logs.set(key, [...this.logs.get(key) ?? [], { t: now, u: c.cost }]);
      }
      const leaving = counted(c, now).map((e) => leaves(e.t, c.windowMs) - now);
      return {
        allowed: true,
        remaining: c.limit - total - consumed,
        resetMs: leaving.length > 0 ? Math.min(...leaving) : 0,
      };
    });
  }
}

/** The policies the commands pick from (small limits, so denials happen). */
export const POLICIES = [
  { name: "a", limit: 5, windowMs: 1_000 },
  { name: "b", limit: 3, windowMs: 400 },
  { name: "c", limit: 8, windowMs: 2_500 },
] as const;

/** One check: after `advanceMs`, `subject` against a non-empty subset of POLICIES at `cost`. */
export interface CheckCommand {
  advanceMs: number;
  subject: string;
  picks: number[];
  cost: number;
}

/** Sequences of checks: costs 0–4 (0 and over-limit included), two subjects. */
export const commands: fc.Arbitrary<CheckCommand[]> = fc.array(
  fc.record({
    advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1_500 })),
    subject: fc.constantFrom("s1", "s2"),
    picks: fc.uniqueArray(fc.integer({ min: 0, max: POLICIES.length - 1 }), {
      minLength: 1,
      maxLength: POLICIES.length,
    }),
    cost: fc.integer({ min: 0, max: 4 }),
  }),
  { minLength: 1, maxLength: 60 },
);

/** The counters of a command. */
export function countersOf(command: CheckCommand, windowScale = 1): WindowCounter[] {
  return command.picks.map((i) => ({
    kind: "window" as const,
    subject: command.subject,
    name: POLICIES[i].name,
    limit: POLICIES[i].limit,
    windowMs: POLICIES[i].windowMs * windowScale,
    cost: command.cost,
  }));
}

/** Most units of `accepted` in any interval of `windowMs` (the guarantee: never above `limit`). */
export function maxInWindow(accepted: { t: number; u: number }[], windowMs: number): number {
  let max = 0;
  for (const start of accepted) {
    const inside = accepted.filter((e) => e.t >= start.t && e.t < start.t + windowMs);
    max = Math.max(max, inside.reduce((a, e) => a + e.u, 0));
  }
  return max;
}

/**
 * Units of `accepted` that a check at `at` may count: those accepted in the
 * last `windowMs × (1 + 1 / SUB_BUCKETS)` ms. The guarantee: a refused check
 * found these plus its cost above `limit` (it refuses early by at most the
 * oldest sub-bucket it counts).
 */
export function unitsWithinOneBucketMore(
  accepted: readonly { t: number; u: number }[],
  windowMs: number,
  at: number,
): number {
  return accepted.filter((e) => e.t * SUB_BUCKETS > (at - windowMs) * SUB_BUCKETS - windowMs)
    .reduce((a, e) => a + e.u, 0);
}

const DAY = 86_400_000;

/** The days of a UTC month (0-based, any integer), walked one by one from its first. */
function daysOfMonth(year: number, month: number): number[] {
  const first = new Date(Date.UTC(year, month, 1));
  const days = [];
  for (let t = first.getTime(); new Date(t).getUTCMonth() === first.getUTCMonth(); t += DAY) {
    days.push(t);
  }
  return days;
}

/** Every refill boundary of `refill` between `from` and `to` (ms), naively listed. */
export function boundaries(refill: CreditRefill, from: number, to: number): number[] {
  const out: number[] = [];
  if ("everyMs" in refill) {
    for (let t = Math.ceil(from / refill.everyMs) * refill.everyMs; t <= to; t += refill.everyMs) {
      out.push(t);
    }
    return out;
  }
  const start = new Date(from);
  for (let m = start.getUTCMonth() - 1, y = start.getUTCFullYear();; m++) {
    const days = daysOfMonth(y, m);
    if (days[0] > to) return out;
    const picks = refill.interval === "daily"
      ? days
      : [days[Math.min(refill.day ?? 1, days.length) - 1]];
    out.push(...picks.filter((t) => t >= from && t <= to));
  }
}

/** The documented credit rules, naively: a balance as of a time; each boundary since sets it. */
export class ReferenceCredits {
  readonly balances = new Map<string, { credits: number; asOf: number }>();

  /** The balance of `c` at `now` after the refills due, and ms to the next refill (-1: none). */
  settle(c: CreditCounter, at: number) {
    const now = Math.floor(at);
    const key = `${c.subject}|${c.name}`;
    const state = this.balances.get(key) ?? { credits: c.initial, asOf: c.initialAt ?? now };
    this.balances.set(key, state);
    if (c.refill === undefined) return { state, resetMs: -1, amount: 0 };
    const due = boundaries(c.refill, state.asOf + 1, now);
    if (due.length > 0) {
      state.credits = c.refill.amount;
      state.asOf = due[due.length - 1];
    }
    const next = boundaries(c.refill, now + 1, now + 32 * DAY)[0];
    return { state, resetMs: next - now, amount: c.refill.amount };
  }

  /** Sets or adds (clamped at 0), after the refill due. */
  change(
    c: CreditCounter,
    change: { set: number } | { add: number },
    now: number,
  ): CreditChangeResult {
    const { state, resetMs } = this.settle(c, now);
    const before = state.credits;
    state.credits = "set" in change ? change.set : Math.max(0, state.credits + change.add);
    return { allowed: true, remaining: state.credits, resetMs, before };
  }
}

/** Window and credit counters together, all or nothing: the two references side by side. */
export class ReferenceCombined {
  readonly windows = new ReferenceStore();
  readonly credits = new ReferenceCredits();

  check(counters: readonly RateLimitCounter[], now: number): CounterResult[] {
    const credits = counters.filter((c): c is CreditCounter => c.kind === "credit")
      .map((c) => ({ c, ...this.credits.settle(c, now) }));
    const creditsFit = credits.every(({ c, state }) => state.credits >= c.cost);
    const windowCounters = counters.filter((c): c is WindowCounter => c.kind === "window");
    const windows = this.windows.check(windowCounters, now, creditsFit);
    const consume = creditsFit && windows.every((r) => r.allowed);
    const creditResults = credits.map(({ c, state, resetMs, amount }) => {
      const allowed = state.credits >= c.cost;
      const result = {
        allowed,
        remaining: state.credits - (consume ? c.cost : 0),
        resetMs: !allowed && c.cost > amount ? -1 : resetMs,
      };
      if (consume) state.credits -= c.cost;
      return result;
    });
    return counters.map((c) =>
      c.kind === "credit"
        ? creditResults.shift()!
        : windows[windowCounters.indexOf(c as WindowCounter)]
    );
  }
}

/** Refill rules the credit commands pick from: none, everyMs, daily, monthly with 29–31 clamps. */
export const REFILLS: (CreditRefill | undefined)[] = [
  undefined,
  { amount: 6, everyMs: 3_600_000 },
  { amount: 4, interval: "daily" },
  { amount: 9, interval: "monthly" },
  { amount: 7, interval: "monthly", day: 29 },
  { amount: 8, interval: "monthly", day: 30 },
  { amount: 5, interval: "monthly", day: 31 },
];

/** One step: after `advanceMs`, a check (windows picked, a credit counter at `cost`) or a change. */
export interface CreditCommand {
  advanceMs: number;
  subject: string;
  refill: number;
  picks: number[];
  cost: number;
  /** The credit counter's cost when not `cost`: above some refill amounts (4–9), so no refill covers it. */
  creditCost?: number;
  change?: { set: number } | { add: number };
}

/** Sequences crossing hours, days and month ends (up to ~40 days a step). */
export const creditCommands: fc.Arbitrary<CreditCommand[]> = fc.array(
  fc.record({
    advanceMs: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 1, max: 1_500 }),
      fc.integer({ min: 1, max: 3 * DAY }),
      fc.integer({ min: 1, max: 40 * DAY }),
    ),
    subject: fc.constantFrom("s1", "s2"),
    refill: fc.integer({ min: 0, max: REFILLS.length - 1 }),
    picks: fc.uniqueArray(fc.integer({ min: 0, max: POLICIES.length - 1 }), {
      maxLength: POLICIES.length,
    }),
    cost: fc.integer({ min: 0, max: 4 }),
    // One check in 4 spends 5–12 credits: a refusal no refill covers answers `resetMs` -1.
    creditCost: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 3 },
      { arbitrary: fc.integer({ min: 5, max: 12 }), weight: 1 },
    ),
    // One step in 4 a change (`fc.option`'s `freq: 4` made 3 in 4 changes: few checks).
    change: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 3 },
      {
        arbitrary: fc.oneof(
          fc.record({ set: fc.integer({ min: 0, max: 20 }) }),
          fc.record({ add: fc.integer({ min: -10, max: 10 }) }),
        ),
        weight: 1,
      },
    ),
  }),
  { minLength: 1, maxLength: 60 },
);

/** The credit counter of a command (one balance per subject and refill rule). */
export function creditOf(command: CreditCommand, initialAt?: number): CreditCounter {
  const refill = REFILLS[command.refill];
  return {
    kind: "credit",
    subject: command.subject,
    name: `c${command.refill}`,
    cost: command.creditCost ?? command.cost,
    initial: 10,
    ...(initialAt === undefined ? {} : { initialAt }),
    ...(refill === undefined ? {} : { refill }),
  };
}
