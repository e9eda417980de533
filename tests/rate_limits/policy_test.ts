import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { compileRateLimitPolicies } from "../../rate_limits/policy.ts";
import { assertCost, assertCount } from "../../rate_limits/_checks.ts";

describe("compileRateLimitPolicies", () => {
  it("fills the default cost, freezes, and returns a compiled list as is", () => {
    const compiled = compileRateLimitPolicies([{ name: "api", limit: 10, windowMs: 1_000 }]);
    assert.deepEqual(compiled, [{ name: "api", limit: 10, windowMs: 1_000, cost: 1 }]);
    assert.ok(Object.isFrozen(compiled) && Object.isFrozen(compiled[0]));
    assert.equal(compileRateLimitPolicies(compiled), compiled);
  });

  const bad: [string, unknown, RegExp][] = [
    ["an empty list", [], /list of 1-16/],
    [
      "17 policies",
      Array.from({ length: 17 }, (_, i) => ({ name: `p${i}`, limit: 1, windowMs: 1_000 })),
      /1-16/,
    ],
    ["a non-object", [null], /#0 must be an object/],
    [
      "a misspelt field",
      [{ name: "api", limit: 1, windowMs: 1_000, sharedby: "tenant" }],
      /^rate-limit policy "api": unknown field `sharedby` \(known: name, limit, windowMs, cost, subSecond\)$/,
    ],
    ["an uppercase name", [{ name: "Api", limit: 1, windowMs: 1_000 }], /#0: name/],
    ["a 65-character name", [{ name: "a".repeat(65), limit: 1, windowMs: 1_000 }], /#0: name/],
    ["a zero limit", [{ name: "api", limit: 0, windowMs: 1_000 }], /"api": limit/],
    ["a fractional window", [{ name: "api", limit: 1, windowMs: 1_000.5 }], /"api": windowMs/],
    [
      "a window above 10^14 ms",
      [{ name: "api", limit: 1, windowMs: 1e14 + 1 }],
      /"api": windowMs must be at most 100000000000000/,
    ],
    [
      "a window past PostgreSQL's timestamps (9e15 ms, a safe integer)",
      [{ name: "api", limit: 1, windowMs: 9e15 }],
      /"api": windowMs must be at most 100000000000000/,
    ],
    [
      "a sub-second window without subSecond (seconds meant as ms)",
      [{ name: "api", limit: 1, windowMs: 10 }],
      /"api": windowMs 10 is under 1000 ms \(seconds given as ms\?\); give subSecond: true to mean it/,
    ],
    [
      "a subSecond that is not a boolean",
      [{ name: "api", limit: 1, windowMs: 10, subSecond: "yes" }],
      /"api": subSecond must be a boolean/,
    ],
    [
      "a cost above 10^15",
      [{ name: "api", limit: 1, windowMs: 1_000, cost: 1e15 + 1 }],
      /"api": cost must be at most 1000000000000000/,
    ],
    [
      "one name with two windows",
      [{ name: "a", limit: 1, windowMs: 1_000 }, { name: "a", limit: 2, windowMs: 60_000 }],
      /"a" is listed twice, with windows of 1000 and 60000 ms: one name counts one window/,
    ],
    ["an unsafe limit", [{ name: "api", limit: 2 ** 53, windowMs: 1_000 }], /"api": limit/],
    ["a negative cost", [{ name: "api", limit: 1, windowMs: 1_000, cost: -1 }], /"api": cost/],
    [
      "a name twice",
      [{ name: "a", limit: 1, windowMs: 1_000 }, { name: "a", limit: 2, windowMs: 1_000 }],
      /"a" is listed twice/,
    ],
  ];
  for (const [what, input, message] of bad) {
    it(`refuses ${what} with a TypeError naming it`, () => {
      assert.throws(
        () => compileRateLimitPolicies(input as never),
        (error: Error) => error instanceof TypeError && message.test(error.message),
      );
    });
  }

  it("refuses a list with a hole (never a compiled list holding nothing there), naming its index", () => {
    const api = { name: "api", limit: 1, windowMs: 1_000 };
    for (const input of [[, api], [api, , api], new Array(3)]) {
      assert.throws(
        () => compileRateLimitPolicies(input as never),
        /^TypeError: rate-limit policy #\d+ is missing \(a hole in the list\)$/,
        String(input.length),
      );
    }
  });

  it("compiles a list once per identity (an inline array reused per call), and again when a field changed", () => {
    const input = [{ name: "api", limit: 10, windowMs: 60_000 }];
    const first = compileRateLimitPolicies(input);
    assert.equal(
      compileRateLimitPolicies(input),
      first,
      "the same list object: the same compiled list",
    );
    input[0].limit = 5;
    const changed = compileRateLimitPolicies(input);
    assert.notEqual(changed, first);
    assert.equal(changed[0].limit, 5);
    input[0].limit = -1;
    assert.throws(() => compileRateLimitPolicies(input), /limit must be a safe integer/);
    input[0].limit = 5;
    input.push({ name: "hour", limit: 100, windowMs: 3_600_000 });
    assert.equal(compileRateLimitPolicies(input).length, 2);
  });

  it("accepts a sub-second window with subSecond: true, and keeps the acknowledgement", () => {
    const [policy] = compileRateLimitPolicies([
      { name: "tick", limit: 5, windowMs: 100, subSecond: true },
    ]);
    assert.deepEqual(policy, { name: "tick", limit: 5, windowMs: 100, cost: 1, subSecond: true });
    assert.equal(compileRateLimitPolicies([{ ...policy }])[0].windowMs, 100);
  });

  it("accepts the longest window, 10^14 ms", () => {
    const [policy] = compileRateLimitPolicies([{ name: "api", limit: 1, windowMs: 1e14 }]);
    assert.equal(policy.windowMs, 1e14);
  });

  it("bounds a limit at 999,999,999,999,999: RateLimit-Policy's q and RateLimit's r are sf-Integers (RFC 9651: 15 digits at most)", () => {
    const [policy] = compileRateLimitPolicies([
      { name: "api", limit: 999_999_999_999_999, windowMs: 1_000 },
    ]);
    assert.equal(policy.limit, 999_999_999_999_999);
    for (const limit of [1e15, Number.MAX_SAFE_INTEGER]) {
      assert.throws(
        () => compileRateLimitPolicies([{ name: "api", limit, windowMs: 1_000 }]),
        { name: "TypeError", message: /"api": limit must be at most 999999999999999/ },
      );
    }
  });

  it("assertCost bounds a cost at 0-10^15 and names the field", () => {
    assert.equal(assertCost(1e15, "route cost"), 1e15);
    assert.throws(() => assertCost(1e15 + 1, "route cost"), /route cost must be at most/);
    assert.throws(() => assertCost(-1, "route cost"), /route cost must be a safe integer >= 0/);
  });

  it("assertCount accepts the bound and refuses below it", () => {
    assert.equal(assertCount(0, 0, "x"), 0);
    assert.throws(() => assertCount("1", 0, "x"), /x must be a safe integer >= 0/);
  });
});
