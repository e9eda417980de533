import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertCount, compileRateLimitPolicies } from "../../rate_limits/policy.ts";

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
      Array.from({ length: 17 }, (_, i) => ({ name: `p${i}`, limit: 1, windowMs: 1 })),
      /1-16/,
    ],
    ["a non-object", [null], /#0 must be an object/],
    ["an uppercase name", [{ name: "Api", limit: 1, windowMs: 1 }], /#0: name/],
    ["a 65-character name", [{ name: "a".repeat(65), limit: 1, windowMs: 1 }], /#0: name/],
    ["a zero limit", [{ name: "api", limit: 0, windowMs: 1 }], /"api": limit/],
    ["a fractional window", [{ name: "api", limit: 1, windowMs: 1.5 }], /"api": windowMs/],
    ["an unsafe limit", [{ name: "api", limit: 2 ** 53, windowMs: 1 }], /"api": limit/],
    ["a negative cost", [{ name: "api", limit: 1, windowMs: 1, cost: -1 }], /"api": cost/],
    [
      "a name twice",
      [{ name: "a", limit: 1, windowMs: 1 }, { name: "a", limit: 2, windowMs: 1 }],
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

  it("assertCount accepts the bound and refuses below it", () => {
    assert.equal(assertCount(0, 0, "x"), 0);
    assert.throws(() => assertCount("1", 0, "x"), /x must be a safe integer >= 0/);
  });
});
