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

  it("reads the three HTTP-date forms of RFC 9110 (IMF-fixdate, rfc850, asctime)", () => {
    const now = Date.UTC(2026, 11, 1); // Tue, 01 Dec 2026 00:00:00 GMT
    const day = 86_400;
    assert.equal(parseRetryAfter("Wed, 02 Dec 2026 00:00:00 GMT", now), day);
    assert.equal(parseRetryAfter(" Wed, 02 Dec 2026 00:00:00 GMT ", now), day);
    assert.equal(parseRetryAfter("Tue, 01 Dec 2026 00:01:01 GMT", now), 61);
    assert.equal(parseRetryAfter("Thu, 31 Dec 2026 23:59:59 GMT", now), 31 * day - 1);
    assert.equal(parseRetryAfter("Thu, 01 Jan 2099 00:00:00 GMT", now), 2_274_825_600);
    assert.equal(parseRetryAfter("Mon, 30 Nov 2026 00:00:00 GMT", now), 0);
    assert.equal(parseRetryAfter("Wednesday, 02-Dec-26 00:00:00 GMT", now), day);
    assert.equal(parseRetryAfter("Wed Dec  2 00:00:00 2026", now), day);
    assert.equal(parseRetryAfter("Wed Dec 02 00:00:00 2026", now), day);
    assert.equal(parseRetryAfter("Tue, 29 Feb 2028 00:00:00 GMT", now), 455 * day);
    assert.equal(parseRetryAfter("Tue, 01 Dec 2026 23:59:60 GMT", now), day); // a leap second
    assert.equal(parseRetryAfter("Mon, 01 Jan 0001 00:00:00 GMT", now), 0);
    // rfc850's two-digit year: more than 50 years ahead is the past century.
    const in2076 = (Date.UTC(2076, 0, 1) - now) / 1000;
    assert.equal(parseRetryAfter("Wednesday, 01-Jan-76 00:00:00 GMT", now), in2076);
    assert.equal(parseRetryAfter("Friday, 01-Jan-99 00:00:00 GMT", now), 0);
  });

  it("reads rfc850's two-digit year as RFC 9110 says: an instant more than 50 years ahead is a century back", () => {
    const now = Date.UTC(2025, 5, 1, 12); // Sun, 01 Jun 2025 12:00:00 GMT
    const fifty = (Date.UTC(2075, 5, 1, 12) - now) / 1000;
    // Exactly 50 years ahead is still ahead; a second more, or a later day of 2075, is 1975.
    assert.equal(parseRetryAfter("Saturday, 01-Jun-75 12:00:00 GMT", now), fifty);
    assert.equal(parseRetryAfter("Saturday, 01-Jun-75 12:00:01 GMT", now), 0);
    assert.equal(parseRetryAfter("Monday, 01-Dec-75 00:00:00 GMT", now), 0);
    assert.equal(parseRetryAfter("Saturday, 01-Jun-75 11:59:59 GMT", now), fifty - 1);
    assert.equal(
      parseRetryAfter("Tuesday, 01-Jan-75 00:00:00 GMT", now),
      (Date.UTC(2075, 0, 1) - now) / 1000,
    );
    // 76 is 1976 (2076 is more than 50 years ahead); 25 is this year, 24 last year.
    assert.equal(parseRetryAfter("Thursday, 01-Jan-76 00:00:00 GMT", now), 0);
    assert.equal(parseRetryAfter("Sunday, 01-Jun-25 12:01:00 GMT", now), 60);
    assert.equal(parseRetryAfter("Saturday, 01-Jun-24 12:00:00 GMT", now), 0);
    // Late in the year the window moves with the instant: Dec 2025 reads 01-Dec-75 as 2075.
    const december = Date.UTC(2025, 11, 1);
    assert.equal(
      parseRetryAfter("Sunday, 01-Dec-75 00:00:00 GMT", december),
      (Date.UTC(2075, 11, 1) - december) / 1000,
    );
    assert.equal(parseRetryAfter("Sunday, 01-Dec-75 00:00:01 GMT", december), 0);
  });

  it("reads no other date text: words, ISO 8601, other layouts, out-of-range fields", () => {
    const now = Date.UTC(2026, 11, 1);
    for (
      const value of [
        "x 99999",
        "a 1",
        "tomorrow 3",
        "5 minutes",
        "Dec 25 2026",
        "2026-12-02T00:00:00Z",
        "Wed, 02 Dec 2026 00:00:00 UTC",
        "Wed, 02 Dec 2026 00:00:00 gmt",
        "wed, 02 Dec 2026 00:00:00 GMT",
        "Wed, 02 dec 2026 00:00:00 GMT",
        "Wed, 2 Dec 2026 00:00:00 GMT",
        "Wed, 02 Dec 26 00:00:00 GMT",
        "Wed,  02 Dec 2026 00:00:00 GMT",
        "Wed, 02 Dec 2026 0:00:00 GMT",
        "Wed, 02 Dec 2026 24:00:00 GMT",
        "Wed, 02 Dec 2026 00:60:00 GMT",
        "Wed, 02 Dec 2026 00:00:61 GMT",
        "Wed, 31 Nov 2026 00:00:00 GMT",
        "Sat, 29 Feb 2025 00:00:00 GMT",
        "Wed, 00 Dec 2026 00:00:00 GMT",
        "Wed, 02 Dec 2026 00:00:00 GMT+1",
        "Wed, 02 Dec +026 00:00:00 GMT",
        "Wed, 02 Dec 2026 00:00:00",
        "Wedn, 02 Dec 2026 00:00:00 GMT",
        "Wed 02 Dec 2026 00:00:00 GMT",
        "Wednesday, 02-Dec-2026 00:00:00 GMT",
        "Wed, 02-Dec-26 00:00:00 GMT",
        "Wed Dec 2 00:00:00 2026",
        "Wed Dec  2 00:00:00 2026 GMT",
      ]
    ) {
      assert.equal(parseRetryAfter(value, now), undefined, value);
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
