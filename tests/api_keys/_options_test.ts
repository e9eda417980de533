import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  auditOptions,
  checkPersistInterval,
  feedOptions,
  usageOptions,
} from "../../api_keys/_options.ts";

const KEY = "k".repeat(32);
const FEED = { subscribe: () => () => {}, status: () => ({ connected: true, lagMs: 0 }) };

describe("the checks of the options whose code loads later", () => {
  it("auditOptions fills the defaults and names a bad option", () => {
    assert.deepEqual(auditOptions({ checkpointKey: KEY }, "audit"), {
      checkpointKey: KEY,
      checkpointEvery: 1_000,
      checkpointIntervalMs: 900_000,
      refusedVerifications: false,
    });
    assert.throws(() => auditOptions({ checkpointKey: "short" }, "audit"), {
      name: "TypeError",
      message: "audit.checkpointKey must be a string of at least 32 bytes",
    });
    assert.throws(() => auditOptions({ checkpointKey: KEY, extra: 1 }, "audit"), {
      name: "TypeError",
      message: "audit: unknown option `extra` (known: checkpointKey, checkpointEvery, " +
        "checkpointIntervalMs, refusedVerifications)",
    });
  });

  it("usageOptions: off, defaults, bounds, the storage capability and the audit's need", () => {
    assert.equal(usageOptions(false, true, "usage", false), undefined);
    assert.equal(usageOptions(true, true, "usage", false)?.maxPendingKeys, 100_000);
    assert.throws(() => usageOptions({ flushIntervalMs: 99 }, true, "usage", false), {
      message: "usage.flushIntervalMs must be a whole number from 100 to 3600000",
    });
    assert.throws(() => usageOptions(true, false, "usage", false), /recordUsage and readUsage/);
    assert.throws(() => usageOptions(undefined, true, "usage", true), /refusedVerifications/);
  });

  it("feedOptions: the feed's shape, the lookups' bound, the options that need a feed", () => {
    assert.equal(feedOptions(undefined, undefined, undefined, "O."), undefined);
    assert.equal(feedOptions(FEED, undefined, undefined, "O.")?.perSecond, 10);
    assert.throws(
      () => feedOptions({}, undefined, undefined, "O."),
      /O\.feed must be a change feed/,
    );
    assert.throws(() => feedOptions(FEED, undefined, { perSecond: 10_001 }, "O."), TypeError);
    assert.throws(() => feedOptions(undefined, 1_000, undefined, "O."), {
      message: "O.maxStalenessMs needs a feed",
    });
  });

  it("checkPersistInterval: only with a limiter, 100 to 3600000 ms", () => {
    checkPersistInterval(undefined, false, "O.");
    checkPersistInterval(100, true, "O.");
    assert.throws(() => checkPersistInterval(1_000, false, "O."), {
      message: "O.persistIntervalMs needs a limiter",
    });
    assert.throws(() => checkPersistInterval(99.5, true, "O."), TypeError);
  });
});
