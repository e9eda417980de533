import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  RATE_LIMIT_FIELD,
  RATE_LIMIT_POLICY_FIELD,
} from "../../../api_keys/metering/_rate_limit_fields.ts";
import { rateLimitHeaders } from "../../../api_keys/metering/_limits.ts";

describe("rate-limit field names", () => {
  it("name the fields rateLimitHeaders writes", () => {
    const results = [
      { name: "burst", limit: 1, windowMs: 60_000, remaining: 0, resetMs: 1_000, allowed: true },
    ];
    const names = rateLimitHeaders({ rateLimitResults: results }, false).map(([name]) => name);
    assert.deepEqual(names, [RATE_LIMIT_POLICY_FIELD, RATE_LIMIT_FIELD]);
  });
});
