import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { bucketStart, leavesAt, SUB_BUCKETS, subBucket } from "../../rate_limits/_window.ts";

describe("the window rule's arithmetic", () => {
  it("a moment lies in its sub-bucket: bucketStart(q) <= t < bucketStart(q + 1), for any window", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_102_444_800_000 }), // up to 2100
        fc.integer({ min: 1, max: 366 * 86_400_000 }),
        (t, windowMs) => {
          const q = subBucket(t, windowMs);
          assert.ok(bucketStart(q, windowMs) <= t && t < bucketStart(q + 1, windowMs));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("a unit leaves SUB_BUCKETS + 1 sub-buckets later: after windowMs, before windowMs × (1 + 2 / SUB_BUCKETS)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_102_444_800_000 }),
        fc.integer({ min: 1, max: 366 * 86_400_000 }),
        (t, windowMs) => {
          const leaves = leavesAt(subBucket(t, windowMs), windowMs);
          assert.ok(leaves - t >= windowMs, `${leaves - t}`);
          assert.ok((leaves - t) * SUB_BUCKETS <= windowMs * (SUB_BUCKETS + 1) + SUB_BUCKETS);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("counts tenths of a window", () => {
    assert.equal(SUB_BUCKETS, 10);
    assert.equal(subBucket(1_099, 1_000), 10);
    assert.equal(leavesAt(10, 1_000), 2_100);
    assert.equal(bucketStart(1, 7), 1); // ceil(0.7)
  });
});
