import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { apiKeyThrottlerTracker, createThrottlerStorage } from "../../rate_limits/throttler.ts";
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";
import { createRateLimiter, type RateLimiter } from "../../rate_limits/limiter.ts";
import type { RateLimitStore } from "../../rate_limits/store.ts";
import { FakeRemoteStore } from "./_fake_store.ts";

const quiet = { logger: () => {} };
const over = (store: RateLimitStore) => createRateLimiter({ ...quiet, store });
const down: RateLimitStore = { checkBatch: () => Promise.reject(new Error("down")) };

/**
 * The counter subject of each of `keys`, each hit twice through a throttler of limit 1 (allowed,
 * then blocked: counted apart from the keys before it).
 */
async function subjectsOf(keys: readonly string[]): Promise<string[]> {
  const inner = createMemoryRateLimitStore();
  const subjects: string[] = [];
  const store: RateLimitStore = {
    checkBatch: (checks) => {
      for (const check of checks) subjects.push(check.counters[0].subject);
      return inner.checkBatch(checks);
    },
  };
  const storage = createThrottlerStorage(over(store));
  const hit = (key: string) => storage.increment(key, 60_000, 1, 0, "default");
  for (const key of keys) {
    const blocked = [(await hit(key)).isBlocked, (await hit(key)).isBlocked];
    assert.deepEqual(blocked, [false, true], JSON.stringify(key));
  }
  return keys.map((key, i) => {
    assert.equal(subjects[2 * i], subjects[2 * i + 1], JSON.stringify(key));
    return subjects[2 * i];
  });
}

describe("createThrottlerStorage", () => {
  it("follows throttler 6's increment contract: hits, expiry (a hit leaves 11 sub-buckets later), blocking", async () => {
    let now = 0;
    const storage = createThrottlerStorage(over(createMemoryRateLimitStore({ now: () => now })));
    const hit = () => storage.increment("tracker", 10_000, 2, 10_000, "default");
    assert.deepEqual(await hit(), {
      totalHits: 1,
      timeToExpire: 11,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    now = 4_000;
    assert.deepEqual(await hit(), {
      totalHits: 2,
      timeToExpire: 7,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    assert.deepEqual(await hit(), {
      totalHits: 3,
      timeToExpire: 7,
      isBlocked: true,
      timeToBlockExpire: 7,
    });
    now = 10_999;
    assert.equal((await hit()).isBlocked, true);
    now = 11_000;
    assert.deepEqual(await hit(), {
      totalHits: 2,
      timeToExpire: 4,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  });

  it("blocks for blockDuration when it is longer than ttl (until the block's unit leaves its window)", async () => {
    let now = 0;
    const storage = createThrottlerStorage(over(createMemoryRateLimitStore({ now: () => now })));
    const hit = () => storage.increment("t", 1_000, 1, 5_000, "Short-Burst");
    assert.equal((await hit()).isBlocked, false);
    assert.deepEqual(await hit(), {
      totalHits: 2,
      timeToExpire: 2,
      isBlocked: true,
      timeToBlockExpire: 6, // the block's unit leaves at 5,500 ms
    });
    now = 2_000;
    assert.deepEqual((await hit()).isBlocked, true);
    now = 5_000; // blocked: the block's units leave at 5,500 (this hit is refused, not counted)
    assert.deepEqual((await hit()).isBlocked, true);
    now = 6_100; // the block has left, and the hit at 5,000 too
    assert.deepEqual((await hit()).isBlocked, false);
  });

  it("a block a little longer than ttl: the hit that waits timeToBlockExpire passes (the hits' window has room by then too)", async () => {
    for (const blockDuration of [100_500, 101_000, 105_000, 109_000]) {
      for (let start = 10_000_000; start < 10_100_000; start += 1_000) {
        // The wait told by the refusal that starts the block, then by a hit during it.
        for (const during of [false, true]) {
          let now = start;
          const store = createMemoryRateLimitStore({ now: () => now });
          const storage = createThrottlerStorage(over(store));
          const hit = () => storage.increment("t", 100_000, 1, blockDuration, "default");
          assert.equal((await hit()).isBlocked, false);
          now += 1;
          let blocked = await hit();
          if (during) {
            now += 1;
            blocked = await hit();
          }
          assert.equal(blocked.isBlocked, true);
          now += blocked.timeToBlockExpire * 1000;
          const retried = await hit();
          const at = `${blockDuration} from ${start} (${during ? "during" : "start"})`;
          assert.equal(retried.isBlocked, false, `${at}: ${JSON.stringify(retried)}`);
        }
      }
    }
  });

  it("two throttler names never share a counter, however alike (case, other characters, past 58 characters)", async () => {
    const long = "w".repeat(70);
    for (const [a, b] of [["Burst", "burst"], ["per ip", "per_ip"], [`${long}1`, `${long}2`]]) {
      const storage = createThrottlerStorage(over(createMemoryRateLimitStore()));
      // One key for both: a generateKey that leaves the throttler's name out.
      for (const name of [a, b]) {
        for (let n = 1; n <= 3; n++) {
          const record = await storage.increment("same-key", 60_000, 3, 0, name);
          assert.deepEqual([record.totalHits, record.isBlocked], [n, false], `${name} hit ${n}`);
        }
      }
    }
  });

  it("a throttler named like another's block (`login.block`) never shares the block's counter", async () => {
    const storage = createThrottlerStorage(over(createMemoryRateLimitStore()));
    // One key for both (a generateKey answering the tracker); the block's window is the other's ttl.
    for (let n = 1; n <= 5; n++) {
      const other = await storage.increment("same-key", 60_000, 100, 0, "login.block");
      const login = await storage.increment("same-key", 10_000, 50, 60_000, "login");
      assert.deepEqual(
        [other.totalHits, other.isBlocked, login.totalHits, login.isBlocked],
        [n, false, n, false],
        `hit ${n}`,
      );
    }
  });

  it("counts under `throttler:` + the key, never on the counter of a limiter check of that key and policy (an API key's)", async () => {
    const limiter = over(createMemoryRateLimitStore());
    const storage = createThrottlerStorage(limiter);
    // ApiKeysThrottlerTracker's `key:<id>` as the key (generateKey: (ctx, tracker) => tracker),
    // throttler `default` of 60 s, as an API key's own policy `default` of 60 s.
    const keyPolicy = [{ name: "default", limit: 5, windowMs: 60_000 }];
    for (let n = 1; n <= 3; n++) {
      const record = await storage.increment("key:k1", 60_000, 5, 0, "default");
      assert.deepEqual([record.totalHits, record.isBlocked], [n, false], `throttler hit ${n}`);
    }
    const own = await limiter.check("key:k1", keyPolicy);
    assert.equal(own.policies[0].remaining, 4, "the key's check sees none of the throttler's hits");
    const next = await storage.increment("key:k1", 60_000, 5, 0, "default");
    assert.equal(next.totalHits, 4, "the throttler sees none of the key's units");
    assert.deepEqual(await subjectsOf(["key:k1", "ip:198.51.100.7"]), [
      "throttler:key:k1",
      "throttler:ip:198.51.100.7",
    ]);
  });

  it("a key that fits 512 characters only without the `throttler:` prefix counts under its SHA-256", async () => {
    const fits = "k".repeat(502);
    const [kept, hashed] = await subjectsOf([fits, `${fits}k`]);
    assert.equal(kept, `throttler:${fits}`);
    assert.match(hashed, /^throttler:#[0-9a-f]{64}$/);
  });

  it("keys past 512 characters count apart (their SHA-256), as keys that differ at their end", async () => {
    const storage = createThrottlerStorage(over(createMemoryRateLimitStore()));
    const common = "k".repeat(512);
    const hit = (key: string) => storage.increment(key, 60_000, 1, 120_000, "default");
    assert.equal((await hit(`${common}-attacker`)).isBlocked, false);
    assert.equal((await hit(`${common}-attacker`)).isBlocked, true);
    const victim = await hit(`${common}-victim`);
    assert.deepEqual([victim.totalHits, victim.isBlocked], [1, false]);
  });

  it("a key that cannot be a subject (a brace, a control character) counts under its SHA-256, each apart", async () => {
    const keys = ["{route}:1.2.3.4", "{route}:1.2.3.5", "a}b", "a\nb", "a\tb"];
    const subjects = await subjectsOf(keys);
    assert.equal(new Set(subjects).size, keys.length);
    for (const subject of subjects) assert.match(subject, /^throttler:#[0-9a-f]{64}$/);
  });

  it("a key with a lone surrogate counts under the SHA-256 of its JSON text, apart from the others and from U+FFFD", async () => {
    const [high, low, replaced] = await subjectsOf(["a\uD800", "a\uDC00", "a\uFFFD"]);
    assert.match(high, /^throttler:#j[0-9a-f]{64}$/);
    assert.match(low, /^throttler:#j[0-9a-f]{64}$/);
    assert.notEqual(high, low);
    assert.equal(replaced, "throttler:a\uFFFD");
  });

  it("subSecond: a blockDuration under 1,000 ms as well as a ttl", async () => {
    let now = 0;
    const throttlers = [{ name: "fast", ttl: 200, limit: 1, blockDuration: 500 }];
    const storage = createThrottlerStorage(
      over(createMemoryRateLimitStore({ now: () => now })),
      { throttlers, subSecond: true },
    );
    const hit = () => storage.increment("t", 200, 1, 500, "fast");
    assert.equal((await hit()).isBlocked, false);
    assert.equal((await hit()).isBlocked, true);
    now = 400;
    assert.equal((await hit()).isBlocked, true, "still blocked: the block is 500 ms");
    now = 2_000;
    assert.equal((await hit()).isBlocked, false);
  });

  it("hits during a block are refused and not counted: the first hit after it passes (as @nestjs/throttler's own storage)", async () => {
    let now = 0;
    const storage = createThrottlerStorage(over(createMemoryRateLimitStore({ now: () => now })));
    const hit = () => storage.increment("t", 10_000, 2, 60_000, "default");
    await hit();
    await hit();
    assert.equal((await hit()).isBlocked, true); // the block starts
    now = 61_000; // the hits' window is empty again; the block's units leave at 66,000
    for (let i = 0; i < 3; i++) assert.equal((await hit()).isBlocked, true);
    now = 66_000;
    assert.deepEqual(await hit(), {
      totalHits: 1,
      timeToExpire: 11,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  });

  it("on a remote store, a blocked tracker's hits reach it no more once its hit and its block's start were refused", async () => {
    const store = new FakeRemoteStore();
    const storage = createThrottlerStorage(over(store));
    const hit = () => storage.increment("t", 60_000, 1, 120_000, "default");
    assert.equal((await hit()).isBlocked, false);
    assert.equal((await hit()).isBlocked, true); // refused, and the block starts
    await hit(); // the hit and the block's start, each refused by the store
    const calls = store.calls;
    for (let i = 0; i < 5; i++) {
      const record = await hit();
      assert.equal(record.isBlocked, true);
      assert.ok(
        record.timeToBlockExpire > 60,
        `blocked until the block's unit leaves: ${record.timeToBlockExpire} s`,
      );
    }
    assert.equal(store.calls, calls);
  });

  it("serves throttler 5 (increment(key, ttlMs), its guard compares totalHits > limit): the window ends after ttl ms", async () => {
    let now = 0;
    const storage = createThrottlerStorage(
      over(createMemoryRateLimitStore({ now: () => now })),
      { throttlerMajor: 5 },
    );
    // @nestjs/throttler 5.x's guard: `const { totalHits, timeToExpire } =
    // await storage.increment(key, ttl)` (ttl in ms), then 429 when `totalHits > limit`.
    const limit = 2;
    const hit = async () => {
      const { totalHits, timeToExpire } = await storage.increment("tracker", 10_000);
      return { refused: totalHits > limit, totalHits, timeToExpire };
    };
    assert.deepEqual(await hit(), { refused: false, totalHits: 1, timeToExpire: 11 });
    assert.deepEqual(await hit(), { refused: false, totalHits: 2, timeToExpire: 11 });
    assert.deepEqual(await hit(), { refused: true, totalHits: 3, timeToExpire: 11 });
    now = 10_999;
    assert.equal((await hit()).refused, true);
    now = 11_000; // the hits at 0 have left (10 s and a sub-bucket, not 10,000 s), not the one at 10,999
    // timeToExpire is the longest a hit stays counted (their Retry-After: the retry is counted too).
    assert.deepEqual(await hit(), { refused: false, totalHits: 2, timeToExpire: 11 });
  });

  it("serves throttler 4 (increment(key, ttlSeconds), no limit): counts every hit for ttl seconds; a store is wrapped in a limiter", async () => {
    let now = 0;
    const storage = createThrottlerStorage(createMemoryRateLimitStore({ now: () => now }), {
      throttlerMajor: 4,
    });
    await storage.increment("t", 60);
    const record = await storage.increment("t", 60);
    assert.equal(record.totalHits, 2);
    assert.equal(record.timeToExpire, 66);
    now = 66_000;
    assert.equal((await storage.increment("t", 60)).totalHits, 1);
  });

  it("with throttlerMajor 4 or 5, a client retrying at exactly timeToExpire (their Retry-After) is served: it is the longest a counted hit stays", async () => {
    // Throttler 4 and 5 count every hit, refused ones too, and send timeToExpire as Retry-After.
    for (const [major, ttl] of [[4, 60], [5, 60_000], [5, 7_777]] as const) {
      for (const limit of [1, 5]) {
        let now = Date.UTC(2030, 0, 1);
        const storage = createThrottlerStorage(
          over(createMemoryRateLimitStore({ now: () => now })),
          { throttlerMajor: major },
        );
        const hit = async () => {
          const { totalHits, timeToExpire } = await storage.increment("tracker", ttl);
          return { ok: totalHits <= limit, retryAfter: timeToExpire };
        };
        for (let i = 0; i < limit; i++) assert.equal((await hit()).ok, true);
        now += (major === 4 ? ttl * 1000 : ttl) / 2; // a later sub-bucket than the served hits
        let answer = await hit();
        assert.equal(answer.ok, false);
        let retries = 0;
        while (!answer.ok && retries < 3) {
          now += answer.retryAfter * 1000;
          answer = await hit();
          retries++;
        }
        assert.deepEqual({ major, ttl, limit, ok: answer.ok, retries }, {
          major,
          ttl,
          limit,
          ok: true,
          retries: 1,
        });
      }
    }
  });

  it("with throttlerMajor 4 or 5, `throttlers` are checked at start-up in that major's ttl unit (4: s, 5: ms)", async () => {
    const four = createThrottlerStorage(over(createMemoryRateLimitStore()), {
      throttlerMajor: 4,
      throttlers: [{ name: "default", ttl: 60, limit: 10 }], // throttler 4's own: 60 s
    });
    assert.equal((await four.increment("t", 60)).totalHits, 1);
    const cases: [4 | 5, { name?: string; ttl: number; limit: number }, RegExp][] = [
      [5, { ttl: 60, limit: 10 }, /throttler "default": ttl 60 is under 1000 ms/],
      [4, { name: "short", ttl: 0.5, limit: 10 }, /throttler "short": ttl 500 is under 1000 ms/],
      [4, { name: "short", ttl: 60, limit: 0 }, /throttler "short": limit must be/],
      [5, { ttl: 60_000, limit: 0 }, /throttler "default": limit must be/],
    ];
    for (const [throttlerMajor, throttler, error] of cases) {
      assert.throws(
        () => createThrottlerStorage(over(down), { throttlerMajor, throttlers: [throttler] }),
        error,
      );
    }
    const seconds = /or throttlerMajor: 4, whose ttl is in seconds/;
    assert.throws(
      () => createThrottlerStorage(over(down), { throttlers: [{ ttl: 60, limit: 10 }] }),
      seconds,
    );
    assert.throws(
      () =>
        createThrottlerStorage(over(down), {
          throttlerMajor: 4,
          throttlers: [{ ttl: 0.5, limit: 10 }],
        }),
      (error: Error) => /subSecond: true/.test(error.message) && !seconds.test(error.message),
      "throttler 4 already counts in seconds",
    );
  });

  it("refuses increment(key, ttl) without throttlerMajor 4 or 5: 4 takes seconds, 5 ms, and the call cannot tell", async () => {
    for (const options of [{}, { throttlerMajor: 6 }] as const) {
      const storage = createThrottlerStorage(over(createMemoryRateLimitStore()), options);
      await assert.rejects(
        storage.increment("t", 60_000),
        (error: Error) => error instanceof TypeError && /throttlerMajor/.test(error.message),
      );
    }
    const open = createThrottlerStorage(over(down));
    await assert.rejects(open.increment("t", 60), TypeError, "not passed during an outage either");
  });

  it("refuses a throttlerMajor of 4 or 5 when throttler 6's five arguments arrive, and an unknown major at creation", async () => {
    for (const throttlerMajor of [4, 5] as const) {
      const storage = createThrottlerStorage(over(createMemoryRateLimitStore()), {
        throttlerMajor,
      });
      await assert.rejects(
        storage.increment("t", 60_000, 5, 0, "default"),
        (error: Error) =>
          error instanceof TypeError &&
          new RegExp(`throttlerMajor is ${throttlerMajor}`).test(error.message),
      );
    }
    const six = createThrottlerStorage(over(createMemoryRateLimitStore()), { throttlerMajor: 6 });
    assert.equal((await six.increment("t", 60_000, 5, 0, "default")).totalHits, 1);
    for (const throttlerMajor of [3, 7, "5", 5.5, null]) {
      assert.throws(
        () => createThrottlerStorage(over(down), { throttlerMajor } as never),
        (error: Error) =>
          error instanceof TypeError && /throttlerMajor must be 4, 5 or 6/.test(error.message),
      );
    }
    assert.throws(
      () => createThrottlerStorage(over(down), { throttlerMajor: "5" } as never),
      /throttlerMajor must be 4, 5 or 6 \(got "5"\)/,
      "a string is quoted: not the 5 it names",
    );
  });

  it("answers by the limiter's failure policy during an outage, never a 500: open passes, closed blocks", async () => {
    const open = createThrottlerStorage(over(down));
    const openLegacy = createThrottlerStorage(over(down), { throttlerMajor: 4 });
    assert.deepEqual(await open.increment("t", 60_000, 5, 0, "default"), {
      totalHits: 0,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    assert.equal((await openLegacy.increment("t", 60)).totalHits, 0, "throttler 4 passes too");
    const closed = createThrottlerStorage(
      createRateLimiter({ ...quiet, store: down, onStoreError: "closed" }),
    );
    assert.deepEqual(await closed.increment("t", 60_000, 5, 0, "default"), {
      totalHits: 6,
      timeToExpire: 1,
      isBlocked: true,
      timeToBlockExpire: 1,
    });
    const closedLegacy = createThrottlerStorage(
      createRateLimiter({ ...quiet, store: down, onStoreError: "closed" }),
      { throttlerMajor: 5 },
    );
    const legacy = await closedLegacy.increment("t", 60_000);
    assert.ok(
      legacy.totalHits > Number.MAX_SAFE_INTEGER - 1,
      "throttler 4 and 5 compare hits > limit",
    );
  });

  it("local: during an outage each instance blocks past its share, the block counter ignored (its start never sent: the wait is the share's window)", async () => {
    let calls = 0;
    const counting: RateLimitStore = {
      checkBatch: () => (calls++, Promise.reject(new Error("down"))),
    };
    const storage = createThrottlerStorage(
      createRateLimiter({ ...quiet, store: counting, onStoreError: "local", instances: 2 }),
    );
    const hits = [];
    for (let i = 0; i < 4; i++) hits.push(await storage.increment("t", 60_000, 4, 120_000, "d"));
    assert.deepEqual(hits.map((h) => [h.totalHits, h.isBlocked]), [
      [1, false],
      [2, false],
      [3, true],
      [3, true],
    ]);
    assert.equal(calls, 4, "one store call per hit: no block start sent to a store that failed");
    for (const h of hits.slice(2)) {
      assert.ok(h.timeToBlockExpire <= 66, `no block is kept: ${h.timeToBlockExpire} s`);
    }
  });

  it("compiles a throttler's policies once, not per hit", async () => {
    const limiter = over(createMemoryRateLimitStore());
    const seen: unknown[] = [];
    const spy: RateLimiter = {
      ...limiter,
      check: (
        subject,
        policies,
        options,
      ) => (seen.push(policies), limiter.check(subject, policies, options)),
    };
    const storage = createThrottlerStorage(spy);
    await storage.increment("a", 60_000, 5, 0, "default");
    await storage.increment("b", 60_000, 5, 0, "default");
    assert.equal(seen.length, 2);
    assert.equal(seen[0], seen[1]);
  });

  it("refuses a limit of 0, a bad ttl and a sub-second ttl at start-up (the throttlers option) and at the first hit", async () => {
    for (
      const [throttler, message] of [
        [{ name: "default", ttl: 60_000, limit: 0 }, /throttler "default": limit must be/],
        [{ ttl: 60_000, limit: 0 }, /throttler "default": limit must be/],
        [{ name: "short", ttl: 60, limit: 5 }, /throttler "short": ttl 60 is under 1000 ms/],
        [{ name: "x", ttl: -1, limit: 5 }, /throttler "x": ttl must be/],
      ] as const
    ) {
      assert.throws(
        () => createThrottlerStorage(over(down), { throttlers: [throttler] }),
        (error: Error) => error instanceof TypeError && message.test(error.message),
      );
    }
    assert.doesNotThrow(() =>
      createThrottlerStorage(over(down), {
        throttlers: [{ name: "short", ttl: 100, limit: 5 }, { ttl: () => 1, limit: () => 0 }],
        subSecond: true,
      })
    );
    const storage = createThrottlerStorage(over(createMemoryRateLimitStore()));
    await assert.rejects(
      storage.increment("t", 60_000, 0, 0, "default"),
      /throttler "default": limit must be/,
    );
    assert.throws(
      () => createThrottlerStorage(over(down), { throttler: [] } as never),
      /unknown option `throttler`/,
    );
    assert.throws(() => createThrottlerStorage({} as never), /a rate limiter or a store/);
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
