import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseRateLimitHeaders, parseRetryAfter } from "../../safe_response/rate_limit.ts";

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
