/**
 * The instants of `client/_instant.ts`: ISO 8601 read strictly, and the UTC
 * arithmetic shared with the HTTP-date reader.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isoInstantMs, utcMs } from "../../client/_instant.ts";

describe("utcMs", () => {
  it("builds a UTC instant from its parts; NaN for a part out of range", () => {
    assert.equal(utcMs(2031, 1, 1, 0, 0, 0), Date.UTC(2031, 0, 1));
    assert.equal(utcMs(2028, 2, 29, 23, 59, 59, 999), Date.UTC(2028, 1, 29, 23, 59, 59, 999));
    assert.equal(utcMs(50, 1, 1, 0, 0, 0), Date.parse("0050-01-01T00:00:00.000Z"));
    assert.equal(utcMs(2030, 6, 30, 23, 59, 60, 0, true), Date.UTC(2030, 6, 1));
    for (
      const parts of [
        [2031, 2, 29, 0, 0, 0],
        [2031, 4, 31, 0, 0, 0],
        [2031, 13, 1, 0, 0, 0],
        [2031, 0, 1, 0, 0, 0],
        [2031, 1, 0, 0, 0, 0],
        [2031, 1, 1, 24, 0, 0],
        [2031, 1, 1, 0, 60, 0],
        [2031, 1, 1, 0, 0, 60],
        [10000, 1, 1, 0, 0, 0],
        [-1, 1, 1, 0, 0, 0],
        [NaN, 1, 1, 0, 0, 0],
      ]
    ) {
      const [year, month, day, hour, minute, second] = parts;
      assert.ok(Number.isNaN(utcMs(year, month, day, hour, minute, second)), String(parts));
    }
  });
});

describe("isoInstantMs (the one parser of instant text)", () => {
  it("reads a date-time with its zone, a date alone only when allowed; NaN for anything else", () => {
    assert.equal(isoInstantMs("2031-01-01T02:00:00+02:00", false), Date.UTC(2031, 0, 1));
    assert.equal(isoInstantMs("2031-01-01T00:00Z", false), Date.UTC(2031, 0, 1));
    assert.equal(isoInstantMs("2031-01-01", true), Date.UTC(2031, 0, 1));
    assert.ok(Number.isNaN(isoInstantMs("2031-01-01", false)));
    // A database's microseconds (PostgreSQL's to_json) read to the millisecond; offsets either way.
    assert.equal(
      isoInstantMs("2031-01-01T00:00:00.123456+00:00", false),
      Date.UTC(2031, 0, 1, 0, 0, 0, 123),
    );
    assert.equal(isoInstantMs("2031-01-01T00:00:00.5Z", false), Date.UTC(2031, 0, 1, 0, 0, 0, 500));
    assert.equal(
      isoInstantMs("2030-12-31T20:30:00.000000001-03:30", false),
      Date.UTC(2031, 0, 1),
    );
    assert.equal(isoInstantMs("0050-01-01", true), Date.parse("0050-01-01T00:00:00.000Z"));
    for (
      const bad of [
        "5",
        "01/02/2031",
        "2031-02-30T00:00:00Z",
        "2031-02-29",
        "2031-06-01T00:00:00",
        "2031-06-01 00:00:00Z",
        "2031-06-01T24:00:00Z",
        "2031-06-01T00:00:00+25:00",
        "2031-13-01",
        "+002031-06-01T00:00:00Z",
        "2031-06-01T00:00:00.1234567890Z",
        "2031-06-01T00:00:00.Z",
        42,
        null,
      ]
    ) {
      assert.ok(Number.isNaN(isoInstantMs(bad, true)), String(bad));
    }
  });
});
