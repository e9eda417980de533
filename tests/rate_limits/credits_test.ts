import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  assertCreditChange,
  compileCreditRefill,
  compileCredits,
  creditPeriod,
  MAX_CREDITS,
  refillParams,
  settleBalance,
} from "../../rate_limits/credits.ts";
import { boundaries, REFILLS } from "./_model.ts";

describe("compileCredits", () => {
  it("accepts a balance with each refill form, frozen", () => {
    const credits = compileCredits({
      remaining: 0,
      refill: { amount: 5, interval: "monthly", day: 31 },
    });
    assert.deepEqual(credits, {
      remaining: 0,
      refill: { amount: 5, interval: "monthly", day: 31 },
    });
    assert.ok(Object.isFrozen(credits) && Object.isFrozen(credits.refill));
    assert.deepEqual(compileCredits({ remaining: 3, refill: { amount: 1, everyMs: 500 } }).refill, {
      amount: 1,
      everyMs: 500,
    });
    assert.deepEqual(compileCredits({ remaining: MAX_CREDITS }), { remaining: MAX_CREDITS });
  });

  it("throws a TypeError naming the field", () => {
    const bad: [unknown, RegExp][] = [
      [null, /^credits must/],
      [{ remaining: -1 }, /credits\.remaining/],
      [{ remaining: 1.5 }, /credits\.remaining/],
      [{ remaining: MAX_CREDITS + 1 }, /credits\.remaining/],
      [{ remaining: 1, refill: 3 }, /credits\.refill must/],
      [{ remaining: 1, refill: { amount: 0, interval: "daily" } }, /credits\.refill\.amount/],
      [{ remaining: 1, refill: { amount: 1, interval: "weekly" } }, /credits\.refill\.interval/],
      [
        { remaining: 1, refill: { amount: 1, interval: "daily", day: 2 } },
        /credits\.refill\.day is only/,
      ],
      [
        { remaining: 1, refill: { amount: 1, interval: "monthly", day: 32 } },
        /credits\.refill\.day/,
      ],
      [{ remaining: 1, refill: { amount: 1, everyMs: 0 } }, /credits\.refill\.everyMs/],
      [
        { remaining: 1, refill: { amount: 1, everyMs: 367 * 86_400_000 } },
        /everyMs must be at most/,
      ],
      [{ remaining: 1, refill: { amount: 1, everyMs: 5, interval: "daily" } }, /not both/],
    ];
    for (const [input, message] of bad) {
      assert.throws(
        () => compileCredits(input as never),
        (e) => e instanceof TypeError && message.test(e.message),
        JSON.stringify(input),
      );
    }
    assert.equal(compileCreditRefill(undefined), undefined);
  });
});

describe("assertCreditChange", () => {
  it("takes { set } or { add } within MAX_CREDITS, nothing else", () => {
    assert.deepEqual(assertCreditChange({ add: -3 }), { add: -3 });
    assert.deepEqual(assertCreditChange({ set: 0 }), { set: 0 });
    for (
      const bad of [
        {},
        { set: 1, add: 1 },
        { set: -1 },
        { add: 0.5 },
        { add: MAX_CREDITS + 1 },
        null,
      ]
    ) {
      assert.throws(() => assertCreditChange(bad as never), TypeError, JSON.stringify(bad));
    }
  });
});

describe("creditPeriod", () => {
  it("agrees with the naive list of boundaries (UTC days, month ends clamped, everyMs)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1999, 0, 1), max: Date.UTC(2101, 0, 1) }),
        fc.constantFrom(...REFILLS.filter((r) => r !== undefined)),
        (at, refill) => {
          const [start, next] = creditPeriod(
            at,
            ...refillParams(refill).slice(1) as [number, number],
          );
          const around = boundaries(refill, at - 32 * 86_400_000, at + 32 * 86_400_000);
          assert.equal(start, around.filter((t) => t <= at).at(-1));
          assert.equal(next, around.find((t) => t > at));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("is [0, -1] without a refill", () => {
    assert.deepEqual(creditPeriod(123, 0, 0), [0, -1]);
  });
});

describe("settleBalance", () => {
  it("applies the refill due since asOf (a SET to its amount), and says ms to the next", () => {
    const refill = { amount: 9, everyMs: 1_000 };
    assert.deepEqual(settleBalance(3, 0, refill, 500), {
      credits: 3,
      asOf: 0,
      amount: 9,
      resetMs: 500,
    });
    assert.deepEqual(settleBalance(3, 0, refill, 2_500), {
      credits: 9,
      asOf: 2_000,
      amount: 9,
      resetMs: 500,
    });
    assert.deepEqual(settleBalance(3, 0, undefined, 2_500), {
      credits: 3,
      asOf: 0,
      amount: 0,
      resetMs: -1,
    });
  });
});
