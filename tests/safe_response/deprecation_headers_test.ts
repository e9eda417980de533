import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  deprecationHeaderValue,
  deprecationLinkHeaderValue,
  resolveDeprecation,
  sunsetHeaderValue,
} from "../../safe_response/deprecation_headers.ts";

describe("deprecation headers", () => {
  it("formats RFC 9745 dates, RFC 8594 HTTP-dates and the Link value", () => {
    assert.equal(deprecationHeaderValue(new Date("2026-01-01T00:00:00.999Z")), "@1767225600");
    assert.equal(deprecationHeaderValue(), "@0");
    assert.equal(
      sunsetHeaderValue(new Date("2027-01-01T00:00:00Z")),
      "Fri, 01 Jan 2027 00:00:00 GMT",
    );
    assert.equal(
      deprecationLinkHeaderValue("https://x.example/d"),
      '<https://x.example/d>; rel="deprecation"',
    );
  });

  it("resolves a plan once, validating every field", () => {
    const plan = resolveDeprecation({ since: new Date("2026-01-01T00:00:00Z"), message: "Use v2" });
    assert.deepEqual(plan.headers, [["Deprecation", "@1767225600"]]);
    assert.deepEqual(plan.meta, {
      deprecated: true,
      since: "2026-01-01T00:00:00.000Z",
      message: "Use v2",
    });
    assert.throws(() => resolveDeprecation({ since: "yesterday-ish" }), TypeError);
    assert.throws(() => resolveDeprecation({ link: "https://x.example/a b" }), TypeError);
    assert.throws(() => resolveDeprecation({ message: 3 as unknown as string }), TypeError);
  });

  it("refuses an unknown option, naming it and the known ones (a misspelt sunset sends no Sunset)", () => {
    assert.throws(
      () => resolveDeprecation({ sunsett: "2027-01-01" } as never),
      /^TypeError: Deprecated: unknown option `sunsett` \(known: since, sunset, message, link, sunsetLink\)$/,
    );
    assert.throws(
      () => resolveDeprecation("2027-01-01" as never),
      /^TypeError: Deprecated: options must be an object$/,
    );
  });

  it("refuses a date whose year is not four digits (no HTTP-date nor plain ISO 8601 for it)", () => {
    for (const date of ["+010000-01-01T00:00:00Z", "-000001-01-01T00:00:00Z"]) {
      assert.throws(() => resolveDeprecation({ sunset: date }), /`sunset` must be a valid date/);
      assert.throws(() => resolveDeprecation({ since: date }), /`since` must be a valid date/);
    }
    assert.equal(
      resolveDeprecation({ sunset: "9999-12-31T23:59:59Z" }).headers[1]?.[1],
      "Fri, 31 Dec 9999 23:59:59 GMT",
    );
  });
});

describe("Deprecated: dates, links and meta as sent", () => {
  it("accepts a Date, an ISO 8601 date or date-time with offset, or an IMF-fixdate", () => {
    for (
      const sunset of ["2027-01-01", "2027-01-01T02:00:00+02:00", "Fri, 01 Jan 2027 00:00:00 GMT"]
    ) {
      assert.equal(resolveDeprecation({ sunset }).meta.sunset, "2027-01-01T00:00:00.000Z", sunset);
    }
    for (const typo of ["1", "Jan 2", "2027-01-01T00:00:00", "2027-13-01", "tomorrow"]) {
      assert.throws(() => resolveDeprecation({ sunset: typo }), /`sunset`/, typo);
      assert.throws(() => resolveDeprecation({ since: typo }), /`since`/, typo);
    }
  });

  it("refuses a sunset before the Deprecation date sent (@0 without since)", () => {
    assert.throws(() => resolveDeprecation({ sunset: "1969-12-31T00:00:00Z" }), RangeError);
  });

  it("refuses a link with userinfo, naming the option", () => {
    assert.throws(() => resolveDeprecation({ link: "https://user:pw@d.example/m" }), /`link`/);
    assert.throws(() => resolveDeprecation({ sunsetLink: "//u@d.example/s" }), /`sunsetLink`/);
    assert.doesNotThrow(() => resolveDeprecation({ link: "https://d.example/a@b" }));
  });

  it("puts sunsetLink in meta and whole seconds in both header and meta", () => {
    const plan = resolveDeprecation({
      since: "2026-01-01T00:00:00.900Z",
      sunset: new Date("2027-01-01T00:00:00.500Z"),
      sunsetLink: "https://example.com/sunset",
    });
    assert.deepEqual(plan.meta, {
      deprecated: true,
      since: "2026-01-01T00:00:00.000Z",
      sunset: "2027-01-01T00:00:00.000Z",
      sunsetLink: "https://example.com/sunset",
    });
  });
});

describe("Deprecated({ sunsetLink })", () => {
  it('sends Link: <sunsetLink>; rel="sunset" (RFC 8594), after the deprecation link', () => {
    const plan = resolveDeprecation({
      sunset: "2027-01-01T00:00:00Z",
      link: "https://example.com/v2",
      sunsetLink: "https://example.com/sunset-policy",
    });
    assert.deepEqual(plan.headers, [
      ["Deprecation", "@0"],
      ["Sunset", "Fri, 01 Jan 2027 00:00:00 GMT"],
      ["Link", '<https://example.com/v2>; rel="deprecation"'],
      ["Link", '<https://example.com/sunset-policy>; rel="sunset"'],
    ]);
    assert.throws(() => resolveDeprecation({ sunsetLink: "a>b" }), /`sunsetLink`/);
    assert.throws(() => resolveDeprecation({ sunsetLink: 3 as unknown as string }), /`sunsetLink`/);
  });
});
