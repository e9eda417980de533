import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { WindowRows } from "../../rate_limits/_window_rows.ts";
import { compileRateLimitPolicies } from "../../rate_limits/policy.ts";

const T0 = 1_800_000_000_000;
const POLICIES = compileRateLimitPolicies([
  { name: "second", limit: 2, windowMs: 1_000 },
  { name: "minute", limit: 3, windowMs: 60_000 },
]);
const ONE = compileRateLimitPolicies([{ name: "api", limit: 2, windowMs: 1_000 }]);

describe("WindowRows", () => {
  it("counts a subject's policies together: all of them consumed, or none", () => {
    const rows = new WindowRows(100);
    const answers = [0, 1, 2].map(() =>
      rows.checkPoliciesAt("key_1", POLICIES, T0).map((a) => [a.allowed, a.remaining])
    );
    assert.deepEqual(answers, [
      [[true, 1], [true, 2]],
      [[true, 0], [true, 1]],
      [[false, 0], [true, 1]], // the minute kept its unit: the second refused the check
    ]);
    assert.equal(rows.windowCount, 2);
    const [second] = rows.checkPoliciesAt("key_1", POLICIES, T0 + 1_100);
    assert.deepEqual([second.allowed, second.remaining], [true, 1]);
  });

  it("keeps at most maxCounters rows, dropping the least recently checked", () => {
    const rows = new WindowRows(2);
    rows.checkPoliciesAt("a", ONE, T0);
    rows.checkPoliciesAt("b", ONE, T0);
    rows.checkPoliciesAt("a", ONE, T0); // a is now newer than b
    rows.checkPoliciesAt("c", ONE, T0); // b goes
    assert.equal(rows.windowCount, 2);
    assert.equal(rows.checkPoliciesAt("a", ONE, T0)[0].allowed, false); // kept: its third unit
    assert.equal(rows.checkPoliciesAt("b", ONE, T0)[0].remaining, 1); // dropped: starts again
  });

  it("sweeps a row nothing counts any more as later checks run", () => {
    const rows = new WindowRows(100);
    rows.checkPoliciesAt("idle", ONE, T0);
    rows.checkPoliciesAt("busy", ONE, T0 + 5_000);
    assert.equal(rows.windowCount, 1);
  });

  it("answers a held balance beside windows, consuming it only when every counter fits", () => {
    const rows = new WindowRows(100);
    const balance = { credits: 1, amount: 0, resetMs: -1 };
    const check = () => {
      rows.windowAt(0, "key_1", "api", 2, 1_000, 1, rows.firstRow.get("key_1") ?? -1, -1, T0);
      let consume = rows.fits(0);
      rows.rows[1] = -1;
      rows.held[1] = balance;
      rows.costs[1] = 1;
      if (balance.credits < 1) consume = false;
      return rows.answerAll(2, consume, T0).map((a) => [a.allowed, a.remaining]);
    };
    assert.deepEqual(check(), [[true, 1], [true, 0]]);
    assert.equal(balance.credits, 0);
    assert.deepEqual(check(), [[true, 1], [false, 0]]); // refused by the balance: the window kept
  });
});
