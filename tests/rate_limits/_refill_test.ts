import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { creditPeriod, refillParams, settleBalance } from "../../rate_limits/_refill.ts";
import { boundaries, REFILLS } from "./_model.ts";

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
  it("applies the refill due since asOf (a SET to its amount), and says the last boundary and ms to the next", () => {
    const refill = { amount: 9, everyMs: 1_000 };
    assert.deepEqual(settleBalance(3, 0, refill, 500), {
      credits: 3,
      asOf: 0,
      amount: 9,
      start: 0,
      resetMs: 500,
    });
    assert.deepEqual(settleBalance(3, 0, refill, 2_500), {
      credits: 9,
      asOf: 2_000,
      amount: 9,
      start: 2_000,
      resetMs: 500,
    });
    assert.deepEqual(settleBalance(3, 0, undefined, 2_500), {
      credits: 3,
      asOf: 0,
      amount: 0,
      start: 0,
      resetMs: -1,
    });
  });
});
