import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  createMemoryRateLimitStore,
  type MemoryRateLimitStore,
} from "../../rate_limits/memory_store.ts";
import type { CounterResult, RateLimitCounter } from "../../rate_limits/store.ts";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { MAX_EPOCH_MS } from "../../rate_limits/_checks.ts";
import {
  commands,
  countersOf,
  creditCommands,
  creditOf,
  maxInWindow,
  POLICIES,
  ReferenceCombined,
  ReferenceStore,
  unitsWithinOneBucketMore,
} from "./_model.ts";
import { anchorContract } from "./_anchor_contract.ts";
import { beforeContract } from "./_before_contract.ts";

const counter = (subject: string, cost = 1, limit = 2, windowMs = 1_000) => ({
  kind: "window" as const,
  subject,
  name: "api",
  limit,
  windowMs,
  cost,
});

/**
 * `store.checkNow(counters)` as plain counter results, each answer checked to
 * be a new object and, for a window counter, to name it (`name`, `limit`,
 * `windowMs`: the limiter hands these answers on as policy results).
 */
function checkNow(
  store: MemoryRateLimitStore,
  counters: readonly RateLimitCounter[],
): CounterResult[] {
  const answers = store.checkNow(counters);
  return answers.map((answer, i) => {
    const c = counters[i];
    assert.ok(!Object.isFrozen(answer) && answers.indexOf(answer) === i);
    const { allowed, remaining, resetMs, ...named } = answer as CounterResult & object;
    assert.deepEqual(
      named,
      c.kind === "window" ? { name: c.name, limit: c.limit, windowMs: c.windowMs } : {},
    );
    return { allowed, remaining, resetMs };
  });
}

describe("createMemoryRateLimitStore", () => {
  it("refuses unknown options naming them", () => {
    assert.throws(
      () => createMemoryRateLimitStore({ maxCounter: 5 } as never),
      /createMemoryRateLimitStore: unknown option `maxCounter`/,
    );
  });

  it("refuses a now that is not a function, naming it (else every check fails at run time)", () => {
    for (const now of [Date.now(), "Date.now", null]) {
      assert.throws(
        () => createMemoryRateLimitStore({ now } as never),
        /^TypeError: createMemoryRateLimitStore: now must be a function$/,
        String(now),
      );
    }
  });

  it("counts exactly up to the latest reading it takes (9e14: 10 × t stays a safe integer); a later one fails closed", async () => {
    const policy = [{ name: "a", limit: 1, windowMs: 1001 }];
    let t = MAX_EPOCH_MS - 5_000;
    const limiter = createRateLimiter({
      store: createMemoryRateLimitStore({ now: () => t }),
      logger: () => {},
    });
    assert.equal((await limiter.check("s", policy)).allowed, true);
    t += 1000; // within the same 1,001 ms window
    assert.equal((await limiter.check("s", policy)).allowed, false);
    // A clock far past it (year 272,000, once 10 × t is inexact: a sub-bucket 1 ms off) is refused.
    t = 8_600_000_331_851_428;
    await assert.rejects(limiter.check("s", policy), TypeError);
  });

  it("answers as the reference sub-bucket window on a fake clock (cost, cost 0, all or nothing), never admits more than limit in any window, refuses early by at most one sub-bucket", () => {
    fc.assert(
      fc.property(commands, (script) => {
        let now = 1_000_000;
        const store = createMemoryRateLimitStore({ now: () => now });
        const reference = new ReferenceStore();
        const accepted = new Map<string, { t: number; u: number }[]>();
        for (const command of script) {
          now += command.advanceMs;
          const counters = countersOf(command);
          const before = reference.check(counters, now);
          const actual = checkNow(store, counters);
          assert.deepEqual(actual, before);
          if (before.every((r) => r.allowed) && command.cost > 0) {
            for (const c of counters) {
              const key = `${c.subject}|${c.name}`;
              accepted.set(key, [...accepted.get(key) ?? [], { t: now, u: c.cost }]);
            }
          }
          actual.forEach((r, i) => {
            const c = counters[i];
            const log = accepted.get(`${c.subject}|${c.name}`) ?? [];
            if (!r.allowed) {
              assert.ok(unitsWithinOneBucketMore(log, c.windowMs, now) + c.cost > c.limit);
            }
          });
        }
        for (const [key, log] of accepted) {
          const policy = POLICIES.find((p) => key.endsWith(`|${p.name}`))!;
          assert.ok(maxInWindow(log, policy.windowMs) <= policy.limit, key);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("counts a window in sub-buckets: a unit leaves when its sub-bucket is 11 sub-buckets old, and a refusal says when", () => {
    let now = 10_050; // sub-bucket 100 of a 1,000 ms window
    const store = createMemoryRateLimitStore({ now: () => now });
    assert.deepEqual(checkNow(store, [counter("a")]), [
      { allowed: true, remaining: 1, resetMs: 1_050 }, // leaves at 11,100 (sub-bucket 111)
    ]);
    now = 10_950;
    assert.deepEqual(checkNow(store, [counter("a")]), [
      { allowed: true, remaining: 0, resetMs: 150 },
    ]);
    now = 11_099;
    assert.deepEqual(checkNow(store, [counter("a")]), [
      { allowed: false, remaining: 0, resetMs: 1 },
    ]);
    now = 11_100;
    assert.deepEqual(checkNow(store, [counter("a")]), [
      { allowed: true, remaining: 0, resetMs: 900 },
    ]);
  });

  it("keys a counter by subject, name and window: one name with two windows counts apart", () => {
    const store = createMemoryRateLimitStore({ now: () => 0 });
    checkNow(store, [counter("a", 2, 2, 1_000)]);
    assert.equal(checkNow(store, [counter("a", 2, 2, 60_000)])[0].allowed, true);
    assert.equal(checkNow(store, [counter("a", 1, 2, 1_000)])[0].allowed, false);
  });

  it("holds a constant state per counter whatever the limit: 1,000,000 units in 10,000 distinct ms", () => {
    let now = 0;
    const store = createMemoryRateLimitStore({ now: () => now });
    const big = { ...counter("a", 100, 1e12, 60_000) };
    for (; now < 10_000; now++) checkNow(store, [big]);
    assert.deepEqual(checkNow(store, [{ ...big, cost: 0 }]), [
      { allowed: true, remaining: 1e12 - 1_000_000, resetMs: 56_000 },
    ]);
    assert.equal(store.size, 1);
  });

  it("holds one entry per (subject, policy) and per balance: as many after 10,000 units (limit 10 or 10^9) as after 1, among 10 or 10,000 other subjects", () => {
    let now = 0;
    const store = createMemoryRateLimitStore({ now: () => now });
    const counters = (subject: string, limit: number): RateLimitCounter[] => [
      counter(subject, 1, limit, 3_600_000),
      { kind: "credit", subject, name: "c", cost: 1, initial: 1e12 },
    ];
    const others = (from: number, to: number) => {
      for (let i = from; i < to; i++) checkNow(store, counters(`other${i}`, 1e9));
    };
    others(0, 10);
    for (const limit of [10, 1e9]) {
      const subject = `s${limit}`;
      const before = store.size;
      checkNow(store, counters(subject, limit));
      const afterOne = store.size;
      // 10,000 units, a check every 100 ms: 1,000 s, three of the window's sub-buckets.
      for (let i = 0; i < 9_999; i++, now += 100) checkNow(store, counters(subject, limit));
      assert.equal(afterOne - before, 2, "a window counter and a balance");
      assert.equal(store.size, afterOne, `limit ${limit}: as many entries after 10,000 units`);
    }
    const amongTen = store.size;
    others(10, 10_000);
    assert.equal(store.size, amongTen + 2 * 9_990);
    for (let i = 0; i < 10_000; i++, now += 100) checkNow(store, counters("s1000000000", 1e9));
    assert.equal(store.size, amongTen + 2 * 9_990, "among 10,000 other subjects");
  });

  it("keeps at most maxCounters counters, dropping idle ones first", () => {
    let now = 0;
    const store = createMemoryRateLimitStore({ maxCounters: 3, now: () => now });
    for (const subject of ["a", "b", "c", "d", "e"]) checkNow(store, [counter(subject)]);
    assert.equal(store.size, 3);
    now += 1_100; // every window idle
    checkNow(store, [counter("f")]);
    assert.equal(store.size, 1);
  });

  it("sweeps at most (counters checked + 1) idle counters per check: the work of a check does not grow with the idle ones", () => {
    let now = 0;
    const store = createMemoryRateLimitStore({ now: () => now });
    for (let i = 0; i < 50; i++) checkNow(store, [counter(`s${i}`)]);
    now = 5_000;
    checkNow(store, [counter("new")]);
    assert.equal(store.size, 49);
    checkNow(store, [counter("new"), { ...counter("new"), name: "other" }]);
    assert.equal(store.size, 50 - 3);
    for (let i = 0; i < 100; i++) checkNow(store, [counter("new")]);
    assert.equal(store.size, 2, "every idle counter dropped as checks ran");
  });

  it("answers as the reference with sub-buckets of a fractional length (moments 1 ms either side of their edges, where a check inside its sub-bucket divides nothing)", () => {
    fc.assert(
      fc.property(commands, (script) => {
        let now = 1_000_000;
        const store = createMemoryRateLimitStore({ now: () => now });
        const reference = new ReferenceStore();
        for (const command of script) {
          now += command.advanceMs;
          // Windows of 1,003, 403 and 2,503 ms: sub-buckets start between two ms.
          const counters = countersOf(command).map((c) => ({ ...c, windowMs: c.windowMs + 3 }));
          assert.deepEqual(checkNow(store, counters), reference.check(counters, now));
        }
      }),
      { numRuns: 300 },
    );
    // Sub-buckets of 100.3 ms: sub-bucket 11 starts at 1,104 (1,103.3 rounded up).
    let now = 0;
    const store = createMemoryRateLimitStore({ now: () => now });
    const odd = counter("a", 1, 2, 1_003);
    checkNow(store, [odd]);
    now = 100;
    checkNow(store, [odd]);
    now = 1_103; // the first sub-bucket still counted
    assert.deepEqual(checkNow(store, [odd]), [{ allowed: false, remaining: 0, resetMs: 1 }]);
    now = 1_104; // its units left, in the first ms of the next sub-bucket
    assert.deepEqual(checkNow(store, [odd]), [{ allowed: true, remaining: 1, resetMs: 1_103 }]);
  });

  it("drops an idle window of a subject whose other windows still count, and reuses dropped counters' room from zero", () => {
    let now = 0;
    const store = createMemoryRateLimitStore({ maxCounters: 3, now: () => now });
    const minute = { ...counter("a"), name: "minute", windowMs: 60_000 };
    const second = { ...counter("a"), name: "second" };
    const third = { ...counter("a"), name: "third", windowMs: 5_000 };
    checkNow(store, [second, minute, third]);
    checkNow(store, [second, minute, third]);
    assert.equal(store.size, 3);
    now = 2_000; // "second" idle, the others still count
    checkNow(store, [{ ...minute, cost: 0 }]);
    assert.equal(store.size, 2, "the idle window of a went, its others stayed");
    assert.deepEqual(checkNow(store, [{ ...third, cost: 0 }, { ...minute, cost: 0 }]), [
      { allowed: true, remaining: 0, resetMs: 3_500 },
      { allowed: true, remaining: 0, resetMs: 64_000 },
    ]);
    // Past maxCounters the least recently checked go; new counters start from zero in their room.
    for (const subject of ["b", "c", "d", "e"]) {
      assert.deepEqual(checkNow(store, [counter(subject)]), [
        { allowed: true, remaining: 1, resetMs: 1_100 },
      ]);
    }
    assert.equal(store.size, 3);
    assert.deepEqual(checkNow(store, [{ ...second, cost: 0 }]), [
      { allowed: true, remaining: 2, resetMs: 0 },
    ]);
  });

  it("past maxCounters drops the least recently checked window counters, a check's counters used in their order (as one run or one by one)", () => {
    const keys = ["a", "b", "c"].flatMap((subject) =>
      ["p", "q", "r"].map((name) => [subject, name])
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.uniqueArray(fc.integer({ min: 0, max: keys.length - 1 }), {
            minLength: 1,
            maxLength: 4,
          }),
          {
            minLength: 1,
            maxLength: 40,
          },
        ),
        (checks) => {
          const store = createMemoryRateLimitStore({ maxCounters: 4, now: () => 0 });
          const held = new Map<number, number>(); // the reference: units by key, in order of use
          for (const check of checks) {
            const expected = check.map((k) => {
              const units = (held.get(k) ?? 0) + 1;
              held.delete(k);
              held.set(k, units);
              return 1_000 - units;
            });
            while (held.size > 4) held.delete(held.keys().next().value!);
            const answers = checkNow(
              store,
              check.map((k) => ({ ...counter(keys[k][0], 1, 1_000, 3_600_000), name: keys[k][1] })),
            );
            assert.deepEqual(answers.map((a) => a.remaining), expected);
            assert.equal(store.size, held.size);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("counts from its newest sub-bucket when the clock steps back", () => {
    let now = 10_000;
    const store = createMemoryRateLimitStore({ now: () => now });
    checkNow(store, [counter("a")]);
    now = 5_000;
    const [second] = checkNow(store, [counter("a")]); // counted at 10,000 (its newest sub-bucket)
    assert.deepEqual(second, { allowed: true, remaining: 0, resetMs: 1_100 });
    now = 11_099;
    assert.equal((checkNow(store, [counter("a")]))[0].allowed, false);
    now = 11_100;
    assert.equal((checkNow(store, [counter("a")]))[0].allowed, true);
  });

  it("a counter swept as idle on another subject's check comes back no earlier than the store's newest moment: a clock that then steps back admits no unit twice in a window", () => {
    let now = 10_000;
    const store = createMemoryRateLimitStore({ now: () => now });
    const one = (subject: string) => checkNow(store, [counter(subject, 1, 1)])[0];
    assert.equal(one("a").allowed, true); // counted in sub-bucket 100, until 11,100
    now = 11_100;
    assert.equal(one("b").allowed, true);
    assert.equal(store.size, 1, "a's counter was idle at 11,100: swept");
    now = 10_500; // the clock steps back
    // Counted at 11,100, the newest moment the store read: a's unit of 10,000 had left by then.
    assert.deepEqual(one("a"), { allowed: true, remaining: 0, resetMs: 1_100 });
    now = 11_650; // its unit stays counted in sub-bucket 111 until 12,200, not 105 until 11,600
    assert.deepEqual(one("a"), { allowed: false, remaining: 0, resetMs: 550 });
    now = 12_200;
    assert.equal(one("a").allowed, true);
  });

  it("a counter used after the clock stepped back is not swept as idle at the store's newest moment: no interval of windowMs admits more than the limit", () => {
    let now = 0;
    const store = createMemoryRateLimitStore({ now: () => now });
    const check = (subject: string, windowMs = 1_000) =>
      checkNow(store, [counter(subject, 1, 3, windowMs)])[0].allowed;
    check("minute", 60_000);
    check("victim");
    now = 5_000;
    check("other"); // the store's newest moment
    now = 2_000; // the clock steps back 3 s
    let admitted = 0;
    for (let i = 0; i < 5; i++) if (check("victim")) admitted++;
    assert.equal(admitted, 3);
    now = 2_001;
    check("minute", 60_000); // other subjects' checks sweep what is idle
    check("other");
    now = 2_002;
    for (let i = 0; i < 5; i++) if (check("victim")) admitted++;
    assert.equal(admitted, 3, "the victim's units of 2,000 still count at 2,002");
  });

  it("never fits a cost above the limit, and says so with resetMs = windowMs", () => {
    const store = createMemoryRateLimitStore({ now: () => 0 });
    assert.deepEqual(checkNow(store, [counter("a", 3)]), [
      { allowed: false, remaining: 2, resetMs: 1_000 },
    ]);
  });

  it("throws a TypeError for a bad maxCounters", () => {
    assert.throws(() => createMemoryRateLimitStore({ maxCounters: 0 }), TypeError);
  });
});

/**
 * A store whose window links (its one `Int32Array`: 4 links a row, the next
 * row of the subject at 2) the test can reach, to break a subject's chain.
 */
function storeWithLinks(now: () => number) {
  const made: Int32Array[] = [];
  const Native = globalThis.Int32Array;
  const store = createMemoryRateLimitStore({ now });
  globalThis.Int32Array = class extends Native {
    constructor(...args: ConstructorParameters<Int32ArrayConstructor>) {
      super(...args);
      made.push(this as Int32Array);
    }
  } as Int32ArrayConstructor;
  try {
    store.checkNow([{ ...counter("s"), name: "a" }, { ...counter("s"), name: "b" }]); // rows 0 → 1
  } finally {
    globalThis.Int32Array = Native;
  }
  assert.equal(made.length, 1);
  return { store, links: made[0] };
}

describe("createMemoryRateLimitStore with a broken chain of window rows (a bug)", () => {
  it("a walk that does not end is a TypeError, not a hang: the limiter refuses (closed)", {
    timeout: 10_000,
  }, async () => {
    const { store, links } = storeWithLinks(() => 0);
    links[1 * 4 + 2] = 1; // row 1 next to itself: the walk never reaches row 0 again
    assert.throws(
      () => store.checkNow([{ ...counter("s"), name: "c" }]),
      (e) => e instanceof TypeError && /broken chain/.test(e.message),
    );
    const limiter = createRateLimiter({ store, onStoreError: "open", logger: () => {} });
    await assert.rejects(
      limiter.check("s", [{ name: "c", limit: 2, windowMs: 1_000 }]),
      (e) => e instanceof TypeError && /broken chain/.test(e.message),
    );
  });

  it("dropping a row its chain misses is a TypeError, not a hang", { timeout: 10_000 }, () => {
    let now = 0;
    const { store, links } = storeWithLinks(() => now);
    links[0 * 4 + 2] = -1; // row 1 out of the chain of "s"
    now = 60_000; // both idle: the next check sweeps rows 0 and 1
    assert.throws(
      () => store.checkNow([counter("t")]),
      (e) => e instanceof TypeError && /broken chain/.test(e.message),
    );
  });
});

describe("createMemoryRateLimitStore with credit counters", () => {
  it("keeps a balance across a refill rule change ({ anchor: true }, the store contract; real time)", async () => {
    await anchorContract(createMemoryRateLimitStore(), "memory");
  });

  it("a credit change answers the balance before (the store contract)", async () => {
    await beforeContract(createMemoryRateLimitStore(), "memory");
  });

  it("answers as the reference: spends, refills across days and month ends (29-31 clamps), cost 0, changes, all or nothing", async () => {
    await fc.assert(
      fc.asyncProperty(creditCommands, fc.integer({ min: 0, max: 400 }), async (script, day0) => {
        let now = Date.UTC(2023, 11, 1) + day0 * 86_400_000 - 3_600_000;
        const store = createMemoryRateLimitStore({ now: () => now });
        const reference = new ReferenceCombined();
        for (const command of script) {
          now += command.advanceMs;
          const credit = creditOf(command);
          if (command.change) {
            assert.deepEqual(
              await store.changeCredits(credit, command.change, Infinity),
              reference.credits.change(credit, command.change, now),
            );
          } else {
            const counters = [...countersOf(command), credit];
            assert.deepEqual(checkNow(store, counters), reference.check(counters, now));
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("on a fractional clock (performance.timeOrigin + performance.now()) answers as the reference at the whole ms, every resetMs an integer, as Redis and PostgreSQL count", async () => {
    await fc.assert(
      fc.asyncProperty(
        creditCommands,
        fc.array(fc.integer({ min: 0, max: 999 }), { minLength: 60, maxLength: 60 }),
        async (script, fractions) => {
          let ms = Date.UTC(2023, 11, 1) - 3_600_000;
          let now = ms;
          const store = createMemoryRateLimitStore({ now: () => now });
          const reference = new ReferenceCombined();
          for (const [i, command] of script.entries()) {
            ms += command.advanceMs;
            now = ms + fractions[i] / 1_000;
            const credit = creditOf(command);
            const answers = command.change
              ? [await store.changeCredits(credit, command.change, Infinity)]
              : checkNow(store, [...countersOf(command), credit]);
            for (const answer of answers) {
              assert.ok(Number.isInteger(answer!.resetMs), `resetMs ${answer!.resetMs}`);
            }
            assert.deepEqual(
              answers,
              command.change
                ? [reference.credits.change(credit, command.change, now)]
                : reference.check([...countersOf(command), credit], now),
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("applies set/add racing with spends in the order issued, never below 0", async () => {
    await fc.assert(
      fc.asyncProperty(creditCommands, async (script) => {
        let now = Date.UTC(2024, 1, 28, 23, 59, 59, 990);
        const store = createMemoryRateLimitStore({ now: () => now++ });
        const reference = new ReferenceCombined();
        const start = now;
        const expected = script.map((command, i) => {
          const credit = creditOf({ ...command, subject: "s" });
          return command.change
            ? reference.credits.change(credit, command.change, start + i)
            : reference.check([credit], start + i)[0];
        });
        const actual = await Promise.all(script.map((command) => {
          const credit = creditOf({ ...command, subject: "s" });
          return command.change
            ? store.changeCredits(credit, command.change, Infinity)
            : store.checkBatch([{ counters: [credit], deadline: Infinity }]).then((a) =>
              a.results[0]![0]
            );
        }));
        assert.deepEqual(actual, expected);
        assert.ok(actual.every((r) => r.remaining >= 0));
      }),
      { numRuns: 200 },
    );
  });

  it("refills once per boundary, on the 31st clamped to Feb 29 and Apr 30 (UTC)", () => {
    let now = Date.UTC(2024, 0, 31, 12);
    const store = createMemoryRateLimitStore({ now: () => now });
    const credit = {
      kind: "credit" as const,
      subject: "k",
      name: "credits",
      cost: 3,
      initial: 3,
      refill: { amount: 5, interval: "monthly" as const, day: 31 },
    };
    const spend = (at: number) => ((now = at), checkNow(store, [credit])[0]);
    assert.deepEqual(spend(now), {
      allowed: true,
      remaining: 0,
      resetMs: Date.UTC(2024, 1, 29) - now,
    });
    assert.deepEqual(spend(Date.UTC(2024, 1, 28, 23)), {
      allowed: false,
      remaining: 0,
      resetMs: 3_600_000,
    });
    assert.equal((spend(Date.UTC(2024, 1, 29))).remaining, 2);
    assert.equal((spend(Date.UTC(2024, 2, 30))).allowed, false);
    assert.equal((spend(Date.UTC(2024, 2, 31))).remaining, 2);
    assert.equal((spend(Date.UTC(2024, 3, 30, 1))).remaining, 2);
  });

  it("says -1 when no refill makes the cost fit", () => {
    const store = createMemoryRateLimitStore({ now: () => 0 });
    const base = { kind: "credit" as const, subject: "k", name: "c", initial: 1 };
    assert.deepEqual(checkNow(store, [{ ...base, cost: 2 }]), [
      { allowed: false, remaining: 1, resetMs: -1 },
    ]);
    const refill = { amount: 3, everyMs: 1_000 };
    assert.deepEqual(checkNow(store, [{ ...base, name: "r", refill, cost: 4 }]), [
      { allowed: false, remaining: 1, resetMs: -1 },
    ]);
    assert.deepEqual(checkNow(store, [{ ...base, name: "r", refill, cost: 2 }]), [
      { allowed: false, remaining: 1, resetMs: 1_000 },
    ]);
  });

  it("all or nothing, 1,000 of 1,000 trials: a rate-limit denial keeps the balance, a credit denial keeps the window counts", () => {
    const store = createMemoryRateLimitStore();
    let kept = 0;
    for (let trial = 0; trial < 1_000; trial++) {
      const subject = `t${trial}`;
      const window = {
        kind: "window" as const,
        subject,
        name: "w",
        limit: 1,
        windowMs: 60_000,
        cost: 1,
      };
      const credit = { kind: "credit" as const, subject, name: "c", cost: 1, initial: 5 };
      checkNow(store, [window]);
      const byWindow = checkNow(store, [window, credit]);
      const broke = { ...credit, name: "empty", initial: 0 };
      const wide = { ...window, name: "wide", limit: 10 };
      const byCredit = checkNow(store, [wide, broke]);
      const [wideAfter, creditAfter] = checkNow(store, [{ ...wide, cost: 0 }, {
        ...credit,
        cost: 0,
      }]);
      if (
        !byWindow[0].allowed && byWindow[1].allowed && creditAfter.remaining === 5 &&
        byCredit[0].allowed && !byCredit[1].allowed && wideAfter.remaining === 10
      ) kept++;
    }
    assert.equal(kept, 1_000);
  });

  it("checkBatch: applies each check in order through checkNow; a check past its deadline (the caller's clock, Date.now) answers null and applies nothing", async () => {
    // the injected clock moves counting time only: deadlines are on the caller's clock
    const store = createMemoryRateLimitStore({ now: () => Date.UTC(2030, 0, 1) });
    const one = counter("a", 1, 2);
    const later = Date.now() + 60_000;
    const answer = await store.checkBatch([
      { counters: [one], deadline: later },
      { counters: [one], deadline: Date.now() }, // reached at its deadline: too late
      { counters: [one], deadline: later },
      { counters: [one], deadline: later },
    ]);
    assert.deepEqual(answer.results.map((r) => r && r[0].allowed), [true, null, true, false]);
    assert.deepEqual(await store.checkBatch([{ counters: [one], deadline: Date.now() - 1 }]), {
      results: [null],
    });
    assert.equal(checkNow(store, [{ ...one, cost: 0 }])[0].remaining, 0);
  });

  it("changeCredits: past its deadline answers null and changes nothing", async () => {
    const store = createMemoryRateLimitStore({ now: () => 5_000 });
    const credit = { kind: "credit" as const, subject: "k", name: "c", cost: 0, initial: 4 };
    assert.equal(await store.changeCredits(credit, { add: 3 }, Date.now() - 1), null);
    assert.equal(
      (await store.changeCredits(credit, { add: 3 }, Date.now() + 60_000))?.remaining,
      7,
    );
  });

  it("changeCredits: keeps at most maxCounters balances without a check between (the least recently used go first)", async () => {
    const store = createMemoryRateLimitStore({ maxCounters: 3, now: () => 5_000 });
    const later = Date.now() + 60_000;
    for (let i = 0; i < 1_000; i++) {
      const credit = { kind: "credit" as const, subject: `s${i}`, name: "c", cost: 0, initial: 0 };
      assert.equal((await store.changeCredits(credit, { set: i }, later))?.remaining, i);
      assert.ok(store.size <= 3, `after ${i + 1} changes: ${store.size} balances held`);
    }
    const newest = { kind: "credit" as const, subject: "s999", name: "c", cost: 0, initial: 0 };
    assert.equal(checkNow(store, [newest])[0].remaining, 999, "the newest change kept");
  });

  it("past maxCounters drops a subject's balances its check or change did not name (one subject, many names)", async () => {
    const store = createMemoryRateLimitStore({ maxCounters: 2, now: () => 5_000 });
    const later = Date.now() + 60_000;
    for (let i = 0; i < 200; i++) {
      const credit = { kind: "credit" as const, subject: "s", name: `c${i}`, cost: 1, initial: 9 };
      if (i % 2 === 0) assert.equal(checkNow(store, [credit])[0].remaining, 8);
      else assert.equal((await store.changeCredits(credit, { add: 1 }, later))?.remaining, 10);
      assert.ok(store.size <= 2, `after ${i + 1}: ${store.size} balances held`);
    }
    const last = { kind: "credit" as const, subject: "s", name: "c199", cost: 1, initial: 9 };
    assert.equal(checkNow(store, [last])[0].remaining, 9, "the newest change kept");
  });

  it("past maxCounters drops only as many unused balances of the check's subject as the bound needs", () => {
    const store = createMemoryRateLimitStore({ maxCounters: 4, now: () => 5_000 });
    const credit = (name: string) => ({
      kind: "credit" as const,
      subject: "s",
      name,
      cost: 1,
      initial: 1,
    });
    for (const name of ["a", "b", "c", "d"]) checkNow(store, [credit(name)]);
    checkNow(store, [credit("a"), credit("e")]); // 5 balances: one goes
    assert.equal(store.size, 4);
    const spentAgain = ["b", "c", "d"].filter((name) => checkNow(store, [credit(name)])[0].allowed);
    assert.ok(spentAgain.length <= 1, `spent balances granted again: ${spentAgain}`);
  });

  it("past maxCounters a check's sweep never drops that check's own counters: one naming more keeps them all (a key's balance and its pool, two policies)", () => {
    const store = createMemoryRateLimitStore({ maxCounters: 1, now: () => 5_000 });
    const key = {
      kind: "credit" as const,
      subject: "key:k1",
      name: "credits",
      cost: 1,
      initial: 1,
    };
    const pool = { ...key, subject: "tenant:t1", initial: 1_000 };
    for (let i = 0; i < 4; i++) {
      assert.deepEqual(
        checkNow(store, [key, pool]).map((r) => [r.allowed, r.remaining]),
        i === 0 ? [[true, 0], [true, 999]] : [[false, 0], [true, 999]],
        `check ${i + 1}: the balance of 1 spent once`,
      );
    }
    const policies = [counter("k2", 1, 1), { ...counter("k2", 1, 1), name: "burst" }];
    assert.deepEqual(checkNow(store, policies).map((r) => r.allowed), [true, true]);
    assert.deepEqual(checkNow(store, policies).map((r) => r.allowed), [false, false]);
    // Other checks' counters still go past maxCounters, the least recently used first.
    assert.equal(store.size, 3, "the two window counters and the pool's balance");
    checkNow(store, [counter("k3", 1, 1)]);
    assert.equal(store.size, 2, "one window counter and one balance");
    assert.equal(checkNow(store, [{ ...key, cost: 0 }])[0].remaining, 1, "key:k1 restarts");
  });

  it("readCredits: reads balances with the refill due, writes nothing; one it does not hold as it starts, on its clock", async () => {
    let now = 0;
    const store = createMemoryRateLimitStore({ now: () => now });
    const credit = {
      kind: "credit" as const,
      subject: "k",
      name: "c",
      cost: 1,
      initial: 4,
      refill: { amount: 9, everyMs: 1_000 },
    };
    assert.deepEqual(await store.readCredits([credit]), [
      { allowed: true, remaining: 4, resetMs: 1_000 },
    ]);
    assert.equal(store.size, 0, "reading created nothing");
    checkNow(store, [credit]);
    now = 500;
    assert.deepEqual(await store.readCredits([credit, { ...credit, name: "other" }]), [
      { allowed: true, remaining: 3, resetMs: 500 },
      { allowed: true, remaining: 4, resetMs: 500 },
    ]);
    now = 1_500;
    assert.deepEqual(await store.readCredits([credit]), [
      { allowed: true, remaining: 9, resetMs: 500 },
    ]);
    now = 1_600;
    // the refill read at 1,500 was not written: a spend now takes it, once
    assert.equal(checkNow(store, [credit])[0].remaining, 8);
  });
});

describe("createMemoryRateLimitStore answers", () => {
  it("names each window counter in its answer (a policy result), a new object per check that holds no count", () => {
    const store = createMemoryRateLimitStore({ now: () => 5_000 });
    const window = counter("a", 1, 2);
    const [first] = store.checkNow([window]);
    assert.deepEqual(first, {
      name: "api",
      limit: 2,
      windowMs: 1_000,
      remaining: 1,
      resetMs: 1_100,
      allowed: true,
    });
    (first as { remaining: number }).remaining = 99; // a caller's change counts nothing
    const [second] = store.checkNow([window]);
    assert.notEqual(second, first);
    assert.equal(second.remaining, 0);
    const [refused] = store.checkNow([window]);
    assert.deepEqual(refused, { ...second, allowed: false });
    assert.notEqual(refused, second);
  });
});

describe("createMemoryRateLimitStore counters of several subjects in one check", () => {
  it("counts each on its own row, new and known ones interleaved (a subject looked up once per run of its counters)", () => {
    const store = createMemoryRateLimitStore({ now: () => 5_000 });
    const of = (subject: string, name: string, limit = 10) => ({
      ...counter(subject, 1, limit),
      name,
    });
    store.checkNow([of("a", "x")]);
    const mixed = [of("a", "y"), of("b", "x"), of("a", "x"), of("a", "z"), of("b", "y", 1)];
    assert.deepEqual(checkNow(store, mixed).map((r) => r.remaining), [9, 9, 8, 9, 0]);
    assert.equal(store.size, 5);
    assert.deepEqual(checkNow(store, mixed).map((r) => [r.allowed, r.remaining]), [
      [true, 9],
      [true, 9],
      [true, 8],
      [true, 9],
      [false, 0],
    ]);
    const each = mixed.map((c) => checkNow(store, [{ ...c, cost: 0 }])[0].remaining);
    assert.deepEqual(each, [9, 9, 8, 9, 0]);
    assert.equal(store.size, 5);
  });
  it("finds each window of a subject whatever the order a check names them in, repeats and new ones included (as a count per window)", () => {
    const windows = [["x", 1_000], ["y", 1_000], ["x", 60_000], ["z", 5_000]] as const;
    fc.assert(
      fc.property(
        fc.array(
          fc.array(fc.tuple(fc.constantFrom("a", "b"), fc.nat(windows.length - 1)), {
            minLength: 1,
            maxLength: 6,
          }),
          { minLength: 1, maxLength: 12 },
        ),
        (checks) => {
          const store = createMemoryRateLimitStore({ now: () => 5_000 });
          const counts = new Map<string, number>();
          for (const check of checks) {
            const counters = check.map(([subject, w]) => ({
              ...counter(subject, 1, 1_000, windows[w][1]),
              name: windows[w][0],
            }));
            const expected = check.map(([subject, w]) => {
              const key = `${subject} ${w}`;
              counts.set(key, (counts.get(key) ?? 0) + 1);
              return 1_000 - counts.get(key)!;
            });
            assert.deepEqual(checkNow(store, counters).map((r) => r.remaining), expected);
          }
          assert.equal(store.size, counts.size);
        },
      ),
    );
  });
});

describe("createMemoryRateLimitStore checkNow(counters, nowMs)", () => {
  /** Runs `fn` with `Date.now` counting its reads (answering `at`). */
  function countingDateNow<T>(at: number, fn: (reads: () => number) => T): T {
    const original = Date.now;
    let reads = 0;
    Date.now = () => {
      reads++;
      return at;
    };
    try {
      return fn(() => reads);
    } finally {
      Date.now = original;
    }
  }

  it("on the default clock: counts at the caller's nowMs and reads no clock of its own", () => {
    const store = createMemoryRateLimitStore();
    const day = Date.UTC(2026, 0, 1);
    countingDateNow(day + 86_400_000, (reads) => {
      // Sub-buckets of 100 ms from `day`: a unit counted at nowMs leaves 11 of them later.
      const [first] = store.checkNow([counter("a", 1, 2, 1_000)], day + 10);
      assert.equal(first.resetMs, 1_100 - 10, "answered at nowMs, not at Date.now()");
      store.checkNow([counter("a", 1, 2, 1_000)], day + 20);
      const [third] = store.checkNow([counter("a", 1, 2, 1_000)], day + 30);
      assert.equal(third.allowed, false, "counted in one window at nowMs");
      assert.equal(reads(), 0);
    });
  });

  it("made while Date.now is replaced (a fake timer): keeps that clock, whatever nowMs says", () => {
    const day = Date.UTC(2026, 0, 1);
    const store = countingDateNow(day + 10, () => createMemoryRateLimitStore());
    const [first] = store.checkNow([counter("a", 1, 2, 1_000)], day + 500);
    assert.equal(first.resetMs, 1_100 - 10, "counted at its clock's day + 10");
  });

  it("with an injected now: keeps its own clock, whatever nowMs says", () => {
    let now = 5_000;
    const store = createMemoryRateLimitStore({ now: () => now });
    store.checkNow([counter("a", 2, 2, 1_000)], 1e12);
    now += 2_000; // the window (on its own clock) has passed: nowMs ignored
    assert.equal(store.checkNow([counter("a", 2, 2, 1_000)], 5_000)[0].allowed, true);
    assert.equal(store.checkNow([counter("a", 1, 2, 1_000)], Number.NaN)[0].allowed, false);
  });

  it("refuses (a TypeError, nothing counted) a nowMs that is not a time: not finite, fractional, negative, past 8.64e15, not a number", () => {
    const store = createMemoryRateLimitStore();
    for (const bad of [Number.NaN, Infinity, -Infinity, -1, 1.5, 8.64e15 + 1, "1000", null]) {
      assert.throws(
        () => store.checkNow([counter("a", 1, 1)], bad as number),
        (error: unknown) => error instanceof TypeError && /nowMs/.test(error.message),
        String(bad),
      );
    }
    assert.equal(store.size, 0, "nothing counted");
    assert.equal(store.checkNow([counter("a", 1, 1)], Date.now())[0].allowed, true);
  });
});

describe("createMemoryRateLimitStore on a clock that reads no time (a bug)", () => {
  const BAD = [Infinity, -Infinity, Number.NaN, -1, 8.64e15 + 1, "1000", undefined];
  const policy = [{ name: "api", limit: 3, windowMs: 60_000 }];
  const credits = { initial: 5, refill: { amount: 100, interval: "daily" as const } };
  const isClockError = (e: unknown) => e instanceof TypeError && /\bnow\b/.test(e.message);

  it("every reading (checkNow, checkBatch, changeCredits, readCredits) is a TypeError, nothing counted or kept: the store goes on counting as before", async () => {
    for (const bad of BAD) {
      let t = Date.UTC(2026, 0, 1, 12);
      let junk = false;
      const store = createMemoryRateLimitStore({ now: () => (junk ? bad as number : t) });
      const limiter = createRateLimiter({ store, logger: () => {} });
      for (let i = 0; i < 3; i++) limiter.checkNow!("key:victim", policy);
      junk = true;
      assert.throws(() => store.checkNow([counter("other")]), isClockError, String(bad));
      assert.throws(() => limiter.checkNow!("key:k", [], { credits, cost: 5 }), isClockError);
      await assert.rejects(
        store.checkBatch([{ counters: [counter("other")], deadline: Infinity }]),
        isClockError,
      );
      const k = { kind: "credit" as const, subject: "key:k", name: "credits", cost: 1, ...credits };
      await assert.rejects(store.changeCredits(k, { add: 1 }, Infinity), isClockError);
      await assert.rejects(store.readCredits([k]), isClockError);
      junk = false;
      assert.equal(store.size, 1, `${String(bad)}: nothing counted or kept but the victim's row`);
      for (let i = 0; i < 20; i++) {
        t += 1;
        assert.equal(limiter.checkNow!("key:victim", policy).allowed, false, "still refused");
      }
      assert.equal(limiter.checkNow!("key:k", [], { credits, cost: 5 }).allowed, true);
      t += 3 * 86_400_000; // the balance started at the last good reading: it refills as due
      assert.equal(limiter.checkNow!("key:k", [], { credits, cost: 1 }).credits?.remaining, 99);
    }
  });

  it("the limiter refuses (closed): its check rejects with the TypeError whatever its failure policy", async () => {
    const store = createMemoryRateLimitStore({ now: () => Infinity });
    const limiter = createRateLimiter({ store, onStoreError: "open", logger: () => {} });
    await assert.rejects(limiter.check("key:a", policy), isClockError);
    assert.throws(() => limiter.checkNow!("key:a", policy), isClockError);
  });

  it("made while Date.now is replaced (a fake timer) that then reads no time: a TypeError too", () => {
    const original = Date.now;
    let reading: unknown = 5_000;
    Date.now = () => reading as number;
    try {
      const store = createMemoryRateLimitStore();
      assert.equal(store.checkNow([counter("a")])[0].allowed, true);
      reading = Number.NaN;
      assert.throws(() => store.checkNow([counter("a")], 5_000), isClockError);
    } finally {
      Date.now = original;
    }
  });
});
