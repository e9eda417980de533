import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { headerCount, parseRetryAfter } from "../../client/_retry_after.ts";

describe("client/_retry_after.ts", () => {
  it("reads delay-seconds and an HTTP-date's seconds from now (0 when past)", () => {
    assert.equal(parseRetryAfter("120"), 120);
    assert.equal(parseRetryAfter(["7", "9"]), 7);
    assert.equal(parseRetryAfter(30), 30);
    assert.equal(parseRetryAfter("Thu, 01 Jan 1970 00:00:30 GMT", 0), 30);
    assert.equal(parseRetryAfter("Thu, 01 Jan 1970 00:00:30 GMT", 60_000), 0);
  });

  it("takes no value without a letter for a date (a legacy date parser reads '12.5' or '-5' as one)", () => {
    for (const value of ["12.5", "-5", "1.5e3", "Jan", " "]) {
      assert.equal(parseRetryAfter(value, 0), undefined, value);
    }
  });

  it("is bounded: long values, unsafe counts and other types are absent", () => {
    for (
      const value of [
        "9".repeat(17),
        `${"0".repeat(100)}1`,
        `Thu, 01 Jan 2099 00:00:30 GMT${" ".repeat(64)}`,
        -1,
        1.5,
        NaN,
        null,
        {},
      ]
    ) {
      assert.equal(parseRetryAfter(value), undefined, String(value).slice(0, 20));
    }
    assert.equal(headerCount(" 42 "), 42);
    assert.equal(headerCount(2 ** 53), undefined);
  });
});
