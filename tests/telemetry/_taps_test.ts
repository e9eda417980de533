/** The taps registry: one taps object per owner, none for anything else. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { registerTaps, tapsOf } from "../../telemetry/_taps.ts";
import { createRateLimiter } from "../../rate_limits/limiter.ts";

describe("taps", () => {
  it("answers the taps registered for an owner, and undefined for any other value", () => {
    const owner = {};
    const taps = {};
    registerTaps(owner, taps);
    assert.equal(tapsOf(owner), taps);
    for (const other of [{}, null, undefined, "owner", 1]) assert.equal(tapsOf(other), undefined);
  });

  it("a limiter registers its taps at creation, all unset", () => {
    const taps = tapsOf<Record<string, unknown>>(createRateLimiter({ logger: () => {} }));
    assert.deepEqual(taps, {});
  });
});
