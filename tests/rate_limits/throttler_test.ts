import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { apiKeyThrottlerTracker, createThrottlerStorage } from "../../rate_limits/throttler.ts";
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";

describe("createThrottlerStorage", () => {
  it("follows throttler 6's increment contract: hits, expiry, blocking", async () => {
    let now = 0;
    const storage = createThrottlerStorage(createMemoryRateLimitStore({ now: () => now }));
    const hit = () => storage.increment("tracker", 10_000, 2, 10_000, "default");
    assert.deepEqual(await hit(), {
      totalHits: 1,
      timeToExpire: 10,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    now = 4_000;
    assert.deepEqual(await hit(), {
      totalHits: 2,
      timeToExpire: 6,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    assert.deepEqual(await hit(), {
      totalHits: 3,
      timeToExpire: 6,
      isBlocked: true,
      timeToBlockExpire: 6,
    });
    now = 10_000;
    assert.deepEqual(await hit(), {
      totalHits: 2,
      timeToExpire: 4,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  });

  it("blocks for blockDuration when it is longer than ttl", async () => {
    let now = 0;
    const storage = createThrottlerStorage(createMemoryRateLimitStore({ now: () => now }));
    const hit = () => storage.increment("t", 1_000, 1, 5_000, "Short-Burst");
    assert.equal((await hit()).isBlocked, false);
    assert.deepEqual(await hit(), {
      totalHits: 2,
      timeToExpire: 1,
      isBlocked: true,
      timeToBlockExpire: 5,
    });
    now = 2_000;
    assert.deepEqual((await hit()).isBlocked, true);
    now = 5_000;
    assert.deepEqual((await hit()).isBlocked, false);
  });

  it("serves throttler 4 (ttl in seconds, no limit): counts every hit", async () => {
    const storage = createThrottlerStorage(createMemoryRateLimitStore({ now: () => 0 }));
    await storage.increment("t", 60);
    const record = await storage.increment("t", 60);
    assert.equal(record.totalHits, 2);
    assert.equal(record.timeToExpire, 60);
  });
});

describe("apiKeyThrottlerTracker", () => {
  it("tracks by key id, else by client IP", () => {
    assert.equal(apiKeyThrottlerTracker({ apiKey: { keyId: "k1" }, ip: "1.2.3.4" }), "key:k1");
    assert.equal(apiKeyThrottlerTracker({ ip: "1.2.3.4" }), "ip:1.2.3.4");
    assert.equal(apiKeyThrottlerTracker({ socket: { remoteAddress: "::1" } }), "ip:::1");
    assert.equal(apiKeyThrottlerTracker({}), "ip:unknown");
  });

  it("answers synchronously: throttler 4's getTracker(req) must return the string itself", () => {
    // Throttler 4 builds its key from `this.getTracker(req)` without awaiting it.
    const keyOf = (request: Record<string, unknown>) => `hits-${apiKeyThrottlerTracker(request)}`;
    assert.equal(keyOf({ apiKey: { keyId: "k1" } }), "hits-key:k1");
    assert.equal(keyOf({ ip: "1.2.3.4" }), "hits-ip:1.2.3.4");
  });
});
