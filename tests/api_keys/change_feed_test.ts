/**
 * The change-feed interface's in-memory implementation. The bounded reader
 * of the PostgreSQL trigger's notices: tests/api_keys/postgres/_notice_test.ts.
 */
import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ApiKeyChangeFeed,
  type ApiKeyChangeNotice,
  InMemoryApiKeyChangeFeed,
} from "../../api_keys/change_feed.ts";

const PREFIX_A = "AbCdEfGhIjKl";
const PREFIX_B = "MnOpQrStUvWx";

/** A consumer with a prefix-keyed cache kept coherent by `feed`. */
function cachingConsumer(feed: ApiKeyChangeFeed) {
  const cache = new Map<string, string>([[PREFIX_A, "a"], [PREFIX_B, "b"]]);
  const notices: ApiKeyChangeNotice[] = [];
  const unsubscribe = feed.subscribe((notice) => {
    notices.push(notice);
    if (notice.kind === "reset") cache.clear();
    else cache.delete(notice.prefix);
  });
  return { cache, notices, unsubscribe };
}

describe("InMemoryApiKeyChangeFeed", () => {
  let warnings: unknown[][];
  const originalWarn = console.warn;
  beforeEach(() => {
    warnings = [];
    console.warn = (...args: unknown[]) => warnings.push(args);
  });
  afterEach(() => {
    console.warn = originalWarn;
  });

  it("delivers each published change to every consumer before publish returns", () => {
    const feed = new InMemoryApiKeyChangeFeed();
    const a = cachingConsumer(feed);
    const b = cachingConsumer(feed);
    feed.publish({ kind: "revoked", prefix: PREFIX_A });
    assert.equal(a.cache.has(PREFIX_A), false);
    assert.equal(b.cache.has(PREFIX_A), false);
    assert.equal(b.cache.get(PREFIX_B), "b");
    feed.publish({ kind: "rotated", prefix: PREFIX_B });
    assert.deepEqual(b.notices, [
      { kind: "revoked", prefix: PREFIX_A, counter: 1 },
      { kind: "rotated", prefix: PREFIX_B, counter: 2 },
    ]);
    assert.deepEqual(a.notices, b.notices);
  });

  it("stops delivering to an unsubscribed listener", () => {
    const feed = new InMemoryApiKeyChangeFeed();
    const a = cachingConsumer(feed);
    a.unsubscribe();
    feed.publish({ kind: "created", prefix: PREFIX_A });
    assert.deepEqual(a.notices, []);
  });

  it("contains a throwing or rejecting listener: the others still receive, publish does not throw", async () => {
    const feed = new InMemoryApiKeyChangeFeed();
    feed.subscribe(() => {
      throw new Error(`boom ${PREFIX_A}`);
    });
    feed.subscribe(() => Promise.reject(new Error("async boom")));
    const b = cachingConsumer(feed);
    feed.publish({ kind: "revoked", prefix: PREFIX_A });
    feed.publish({ kind: "revoked", prefix: PREFIX_B });
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(b.notices.length, 2);
    assert.ok(warnings.length >= 1 && warnings.length <= 2, "one warning per failing listener");
    for (const args of warnings) assert.doesNotMatch(String(args[0]), /boom|AbCdEf/);
  });

  it("hands every listener a frozen notice: one editing it cannot change what a later one (a cache) reads", () => {
    const feed = new InMemoryApiKeyChangeFeed();
    let frozen: boolean | undefined;
    feed.subscribe((notice) => {
      frozen = Object.isFrozen(notice);
      (notice as { prefix: string }).prefix = String(notice.prefix).toLowerCase(); // throws once frozen
    });
    const cache = cachingConsumer(feed);
    feed.publish({ kind: "revoked", prefix: PREFIX_A });
    assert.equal(frozen, true);
    assert.deepEqual(cache.notices, [{ kind: "revoked", prefix: PREFIX_A, counter: 1 }]);
    assert.equal(cache.cache.has(PREFIX_A), false, "the revoked key leaves the cache");
    assert.equal(warnings.length, 1, "the editing listener's throw, contained");
  });

  it("is healthy with staleness 0 until closed, then unhealthy with staleness Infinity", async () => {
    let now = 1_000;
    const feed = new InMemoryApiKeyChangeFeed({ monotonicClock: () => now });
    assert.deepEqual(feed.status(), {
      healthy: true,
      stalenessMs: 0,
      unhealthyForMs: 0,
      counter: null,
      resets: 0,
      reconnects: 0,
      error: null,
    });
    const a = cachingConsumer(feed);
    feed.publish({ kind: "created", prefix: PREFIX_A });
    assert.equal(feed.status().counter, 1);
    await feed.close();
    now += 250;
    const status = feed.status();
    assert.equal(status.healthy, false);
    assert.equal(status.stalenessMs, Infinity);
    assert.equal(status.unhealthyForMs, 250);
    assert.equal(status.error, "closed");
    feed.publish({ kind: "revoked", prefix: PREFIX_B });
    const late = cachingConsumer(feed);
    feed.publish({ kind: "revoked", prefix: PREFIX_B });
    assert.equal(a.notices.length, 1);
    assert.equal(late.notices.length, 0);
    assert.equal(feed.status().counter, 1);
  });

  it("rejects a listener that is not a function and a change of unknown kind", () => {
    const feed = new InMemoryApiKeyChangeFeed();
    assert.throws(() => feed.subscribe("nope" as never), TypeError);
    assert.throws(() => feed.publish({ kind: "used" as never, prefix: PREFIX_A }), TypeError);
    assert.throws(() => feed.publish({ kind: "revoked", prefix: 1 as never }), TypeError);
    assert.equal(feed.status().counter, null);
  });
});
