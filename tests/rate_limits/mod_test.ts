import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as rateLimits from "../../rate_limits/mod.ts";

describe("./rate-limits", () => {
  it("exports the limiter, the in-memory store, the policy and credit compilers and the throttler pieces", () => {
    assert.deepEqual(Object.keys(rateLimits).sort(), [
      "MAX_CREDITS",
      "MAX_RATE_LIMIT_POLICIES",
      "MAX_SUBJECT_LENGTH",
      "apiKeyThrottlerTracker",
      "compileCreditChange",
      "compileCreditRefill",
      "compileCredits",
      "compileRateLimitPolicies",
      "createMemoryRateLimitStore",
      "createRateLimiter",
      "createThrottlerStorage",
      "sameCreditRefill",
      "settleCredits",
    ]);
  });
});
