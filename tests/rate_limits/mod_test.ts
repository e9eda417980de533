import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as rateLimits from "../../rate_limits/mod.ts";

describe("./rate-limits", () => {
  it("exports the limiter, the in-memory store, the policy compiler and the throttler pieces", () => {
    assert.deepEqual(Object.keys(rateLimits).sort(), [
      "MAX_RATE_LIMIT_POLICIES",
      "MAX_SUBJECT_LENGTH",
      "apiKeyThrottlerTracker",
      "compileRateLimitPolicies",
      "createMemoryRateLimitStore",
      "createRateLimiter",
      "createThrottlerStorage",
    ]);
  });
});
