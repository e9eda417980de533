/**
 * The reference of the documented algorithm (a sliding log), written the naive
 * way, and the fast-check commands the model-based tests run against a store.
 */
import fc from "fast-check";
import type { CounterResult, WindowCounter } from "../../rate_limits/store.ts";

/** The documented algorithm, naively: filter, sum, search. */
export class ReferenceStore {
  readonly logs = new Map<string, { t: number; u: number }[]>();

  check(counters: readonly WindowCounter[], now: number): CounterResult[] {
    const logs = counters.map((c) => {
      const key = `${c.subject}|${c.name}`;
      const log = (this.logs.get(key) ?? []).filter((e) => e.t > now - c.windowMs);
      this.logs.set(key, log);
      return log;
    });
    const sum = (entries: { u: number }[]) => entries.reduce((a, e) => a + e.u, 0);
    const fits = counters.map((c, i) => sum(logs[i]) + c.cost <= c.limit);
    const consume = fits.every(Boolean);
    return counters.map((c, i) => {
      const log = logs[i];
      const total = sum(log);
      if (!fits[i]) {
        for (const d of log.map((e) => e.t + c.windowMs - now).sort((a, b) => a - b)) {
          const later = log.filter((e) => e.t + c.windowMs > now + d);
          if (sum(later) + c.cost <= c.limit) {
            return { allowed: false, remaining: c.limit - total, resetMs: d };
          }
        }
        return { allowed: false, remaining: c.limit - total, resetMs: c.windowMs };
      }
      if (consume && c.cost > 0) log.push({ t: now, u: c.cost });
      const consumed = consume && c.cost > 0 ? c.cost : 0;
      const oldest = log.length > 0 ? Math.min(...log.map((e) => e.t)) : undefined;
      return {
        allowed: true,
        remaining: c.limit - total - consumed,
        resetMs: oldest === undefined ? 0 : oldest + c.windowMs - now,
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

/** Asserts the guarantee on a record of accepted units: no window of `windowMs` holds more than `limit`. */
export function maxInWindow(accepted: { t: number; u: number }[], windowMs: number): number {
  let max = 0;
  for (const start of accepted) {
    const inside = accepted.filter((e) => e.t >= start.t && e.t < start.t + windowMs);
    max = Math.max(max, inside.reduce((a, e) => a + e.u, 0));
  }
  return max;
}
