/**
 * Credit specs: the one validator every entry point uses (the limiter's
 * `credits`, the API-key service's `create`/`rotate`, a credit change). The
 * refill calendar is `_refill.ts`.
 *
 * @module
 */
import { assertBounded, assertCredits, MAX_CREDITS } from "./_checks.ts";
import { assertKnownFields } from "../telemetry/_known_fields.ts";
import type { CreditChange, CreditRefill } from "./store.ts";
import { refillParams, settleBalance } from "./_refill.ts";

export { MAX_CREDITS };

/** Longest `everyMs` (366 days). */
const MAX_EVERY_MS = 366 * 86_400_000;

/** The fields of a refill rule, of either form: any other is refused (a misspelt `day` silently 1). */
const REFILL_FIELDS: readonly string[] = Object.keys(
  { amount: true, everyMs: true, interval: true, day: true } satisfies Record<
    CreditRefill extends infer R ? R extends unknown ? keyof R : never : never,
    true
  >,
);

/** The fields of credits: any other is refused (a misspelt `refill` never refills). */
const CREDITS_FIELDS: readonly string[] = Object.keys(
  { remaining: true, refill: true } satisfies Record<keyof Credits, true>,
);

/** Credits as a key stores them: the balance and its refill rule. */
export interface Credits {
  /** Balance (0–`MAX_CREDITS`). */
  readonly remaining: number;
  /** Refill rule. */
  readonly refill?: CreditRefill;
}

/**
 * Validates and freezes a refill rule; `undefined` stays `undefined`. Throws a
 * `TypeError` naming the field (`label` prefixes it), an unknown one too.
 *
 * @example
 * ```ts
 * import { compileCreditRefill } from "./credits.ts";
 * compileCreditRefill({ amount: 100, interval: "monthly", day: 31 });
 * ```
 */
export function compileCreditRefill(
  refill: unknown,
  label = "credits.refill",
): CreditRefill | undefined {
  if (refill === undefined) return undefined;
  if (typeof refill !== "object" || refill === null) {
    throw new TypeError(`${label} must be an object`);
  }
  const r = refill as Record<string, unknown>;
  assertKnownFields(r, REFILL_FIELDS, label);
  const amount = assertBounded(r.amount, 1, MAX_CREDITS, `${label}.amount`);
  if (r.everyMs !== undefined) {
    if (r.interval !== undefined || r.day !== undefined) {
      throw new TypeError(`${label} takes everyMs or interval, not both`);
    }
    return Object.freeze({
      amount,
      everyMs: assertBounded(r.everyMs, 1, MAX_EVERY_MS, `${label}.everyMs`),
    });
  }
  if (r.interval !== "daily" && r.interval !== "monthly") {
    throw new TypeError(`${label}.interval must be "daily" or "monthly" (or give everyMs)`);
  }
  if (r.day === undefined) return Object.freeze({ amount, interval: r.interval });
  if (r.interval !== "monthly") throw new TypeError(`${label}.day is only for interval "monthly"`);
  return Object.freeze({
    amount,
    interval: r.interval,
    day: assertBounded(r.day, 1, 31, `${label}.day`),
  });
}

/**
 * Validates and freezes credits (`remaining` 0–`MAX_CREDITS`, a valid refill,
 * no other field); call it where keys are created or rotated. Throws a
 * `TypeError` naming the field.
 *
 * @example
 * ```ts
 * import { compileCredits } from "./credits.ts";
 * const credits = compileCredits({ remaining: 20, refill: { amount: 20, everyMs: 3_600_000 } });
 * ```
 */
export function compileCredits(input: Credits): Credits {
  if (typeof input !== "object" || input === null) {
    throw new TypeError("credits must be an object");
  }
  assertKnownFields(input, CREDITS_FIELDS, "credits");
  const remaining = assertCredits(input.remaining, "credits.remaining");
  const refill = compileCreditRefill(input.refill);
  return Object.freeze(refill === undefined ? { remaining } : { remaining, refill });
}

/**
 * Validates a credit change: `{ set: n }` (0–`MAX_CREDITS`), `{ add: n }`
 * (−`MAX_CREDITS`–`MAX_CREDITS`), `{ anchor: true }` or `{ set: n, anchor:
 * true }`; returns a copy with only those fields. Throws a `TypeError` naming
 * the field.
 *
 * @example
 * ```ts
 * import { compileCreditChange } from "./credits.ts";
 * compileCreditChange({ add: -5 }); // { add: -5 }
 * ```
 */
export function compileCreditChange(change: CreditChange): CreditChange {
  const c = change as Record<string, unknown>;
  const given = typeof c !== "object" || c === null
    ? 0
    : Number("set" in c) + Number("add" in c) + Number("anchor" in c && !("set" in c));
  if (given !== 1) {
    throw new TypeError(
      "a credit change is { set: n }, { add: n }, { anchor: true } or { set: n, anchor: true }",
    );
  }
  if ("anchor" in c && c.anchor !== true) throw new TypeError("anchor must be true");
  if ("set" in c) {
    const set = assertCredits(c.set, "set");
    return "anchor" in c ? { set, anchor: true } : { set };
  }
  if ("anchor" in c) return { anchor: true };
  return { add: assertBounded(c.add, -MAX_CREDITS, MAX_CREDITS, "add") };
}

/**
 * A stored balance seen later: `credits` as written at `asOf` (ms since the
 * epoch) with the refill due by `now` applied (a refill sets the balance to
 * its `amount`); `lastRefillAt` (the last refill boundary at or before `now`)
 * and `nextRefillAt` in ms, `null` without a refill. What a store answers for
 * a balance it no longer holds.
 *
 * @example
 * ```ts
 * import { settleCredits } from "./credits.ts";
 * const daily = { remaining: 3, refill: { amount: 100, interval: "daily" as const } };
 * settleCredits(daily, Date.UTC(2026, 0, 1, 9), Date.UTC(2026, 0, 2, 12)).remaining; // 100
 * ```
 */
export function settleCredits(
  credits: Credits,
  asOf: number,
  now: number,
): { remaining: number; lastRefillAt: number | null; nextRefillAt: number | null } {
  const settled = settleBalance(credits.remaining, asOf, credits.refill, now);
  const refills = settled.resetMs >= 0;
  return {
    remaining: settled.credits,
    lastRefillAt: refills ? settled.start : null,
    nextRefillAt: refills ? now + settled.resetMs : null,
  };
}

/**
 * Whether two refill rules refill by the same amount at the same moments,
 * however written (monthly with `day: 1` or without; `daily` or `everyMs` of a
 * day); `undefined` is no refill.
 *
 * @example
 * ```ts
 * import { sameCreditRefill } from "./credits.ts";
 * sameCreditRefill({ amount: 5, interval: "daily" }, { amount: 5, everyMs: 86_400_000 }); // true
 * ```
 */
export function sameCreditRefill(
  a: CreditRefill | undefined,
  b: CreditRefill | undefined,
): boolean {
  const [x, y] = [refillParams(a), refillParams(b)];
  return x[0] === y[0] && x[1] === y[1] && x[2] === y[2];
}
