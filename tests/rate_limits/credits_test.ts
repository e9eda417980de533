import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  compileCreditChange,
  compileCreditRefill,
  compileCredits,
  MAX_CREDITS,
  settleCredits,
} from "../../rate_limits/credits.ts";

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

  it("refuses an unknown field of credits or of the refill rule, naming it (a misspelt refill never refills)", () => {
    assert.throws(
      () => compileCredits({ remaining: 3, refil: { amount: 3, interval: "daily" } } as never),
      /^TypeError: credits: unknown field `refil` \(known: remaining, refill\)/,
    );
    assert.throws(
      () =>
        compileCredits(
          { remaining: 3, refill: { amount: 3, interval: "monthly", dy: 5 } } as never,
        ),
      /^TypeError: credits\.refill: unknown field `dy` \(known: amount, everyMs, interval, day\)/,
    );
    assert.throws(
      () => compileCreditRefill({ amount: 3, everyMs: 1_000, every: 5 }, "plan.refill"),
      /^TypeError: plan\.refill: unknown field `every`/,
    );
  });
});

describe("compileCreditChange", () => {
  it("takes { set } or { add } within MAX_CREDITS, { anchor: true } or { set, anchor: true }, nothing else", () => {
    assert.deepEqual(compileCreditChange({ add: -3 }), { add: -3 });
    assert.deepEqual(compileCreditChange({ set: 0 }), { set: 0 });
    assert.deepEqual(compileCreditChange({ anchor: true }), { anchor: true });
    assert.deepEqual(compileCreditChange({ set: 5, anchor: true }), { set: 5, anchor: true });
    for (
      const bad of [
        {},
        { set: 1, add: 1 },
        { add: 1, anchor: true },
        { set: 1, anchor: false },
        { set: -1, anchor: true },
        { anchor: 1 },
        { set: -1 },
        { add: 0.5 },
        { add: MAX_CREDITS + 1 },
        null,
      ]
    ) {
      assert.throws(() => compileCreditChange(bad as never), TypeError, JSON.stringify(bad));
    }
  });
});

describe("settleCredits", () => {
  const day = 86_400_000;
  const daily = { remaining: 3, refill: { amount: 100, interval: "daily" as const } };

  it("applies the refill due since the balance was written, and names the last and the next one", () => {
    const asOf = Date.UTC(2026, 0, 1, 9);
    assert.deepEqual(settleCredits(daily, asOf, Date.UTC(2026, 0, 1, 20)), {
      remaining: 3,
      lastRefillAt: Date.UTC(2026, 0, 1),
      nextRefillAt: Date.UTC(2026, 0, 2),
    });
    assert.deepEqual(settleCredits(daily, asOf, Date.UTC(2026, 0, 2, 12)), {
      remaining: 100,
      lastRefillAt: Date.UTC(2026, 0, 2),
      nextRefillAt: Date.UTC(2026, 0, 3),
    });
  });

  it("keeps a balance without a refill as it is, with no last or next refill", () => {
    assert.deepEqual(settleCredits({ remaining: 7 }, 0, 40 * day), {
      remaining: 7,
      lastRefillAt: null,
      nextRefillAt: null,
    });
  });

  it("refills on the monthly day, clamped to the month's length", () => {
    const monthly = { remaining: 0, refill: { amount: 5, interval: "monthly" as const, day: 31 } };
    const settled = settleCredits(monthly, Date.UTC(2026, 1, 1), Date.UTC(2026, 1, 28, 1));
    assert.deepEqual(settled, {
      remaining: 5,
      lastRefillAt: Date.UTC(2026, 1, 28),
      nextRefillAt: Date.UTC(2026, 2, 31),
    });
  });
});
