import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  deprecationHeaderValue,
  deprecationLinkHeaderValue,
  isSafeRequestId,
  parseRateLimitHeaders,
  parseRetryAfter,
  resolveDeprecation,
  resolveRequestId,
  sunsetHeaderValue,
} from "../../safe_response/mod.ts";

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
});

describe("rate-limit headers", () => {
  const reader = (headers: Record<string, unknown>) => (name: string) => headers[name];

  it("mirrors prefix headers, with a custom prefix and list values", () => {
    assert.deepEqual(
      parseRateLimitHeaders(
        reader({
          "X-RateLimit-Limit": "10",
          "X-RateLimit-Remaining": 4,
          "X-RateLimit-Reset": "30",
        }),
      ),
      { limit: 10, remaining: 4, reset: 30 },
    );
    assert.deepEqual(
      parseRateLimitHeaders(
        reader({ "RateLimit-Limit": ["5"], "RateLimit-Remaining": "0", "RateLimit-Reset": "1" }),
        "RateLimit",
      ),
      { limit: 5, remaining: 0, reset: 1 },
    );
    assert.equal(parseRateLimitHeaders(reader({})), undefined);
    assert.equal(parseRateLimitHeaders(reader({ "X-RateLimit-Limit": "ten" })), undefined);
  });

  it("fills retryAfter from Retry-After, seconds or HTTP-date", () => {
    assert.deepEqual(parseRateLimitHeaders(reader({ "Retry-After": "12" })), {
      limit: 0,
      remaining: 0,
      reset: 12,
      retryAfter: 12,
    });
    assert.equal(parseRetryAfter("Thu, 01 Jan 1970 00:00:30 GMT", 0), 30);
    assert.equal(parseRetryAfter("Thu, 01 Jan 1970 00:00:30 GMT", 60_000), 0);
    assert.equal(parseRetryAfter("soon"), undefined);
  });
});

describe("request ids", () => {
  it("reuses only 1 to 128 visible ASCII characters", () => {
    assert.equal(isSafeRequestId("a"), true);
    assert.equal(isSafeRequestId("~".repeat(128)), true);
    assert.equal(isSafeRequestId("a".repeat(129)), false);
    assert.equal(isSafeRequestId(""), false);
    assert.equal(isSafeRequestId("a b"), false);
    assert.equal(isSafeRequestId("é"), false);
    assert.equal(isSafeRequestId(["a"]), false);
    assert.equal(resolveRequestId("keep-me", () => "new"), "keep-me");
    assert.equal(resolveRequestId("bad\r\nid", () => "new"), "new");
    assert.match(resolveRequestId(undefined), /^[0-9a-f-]{36}$/);
  });
});
