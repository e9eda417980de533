import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { answersWellFormed, isWellFormed } from "../../rate_limits/_well_formed.ts";
import {
  createStoreDoor,
  MAX_BATCH,
  MAX_IN_FLIGHT,
  MAX_LET_GO,
  replyMarginMs,
  SETTLE_MS,
  Unanswered,
} from "../../rate_limits/_door.ts";
import type { CounterResult, RateLimitStore, WindowCounter } from "../../rate_limits/store.ts";
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";
import { FakeRemoteStore } from "./_fake_store.ts";

const window = (subject: string, limit = 1_000_000): WindowCounter => ({
  kind: "window",
  subject,
  name: "api",
  limit,
  windowMs: 60_000,
  cost: 1,
});
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const until = async (done: () => boolean) => {
  for (let i = 0; i < 500 && !done(); i++) await sleep(10);
  assert.ok(done(), "condition not reached in 5 s");
};
type Answer = readonly CounterResult[] | Unanswered;

describe("createStoreDoor", () => {
  it("sends concurrent checks as batches: at most MAX_IN_FLIGHT calls in flight, at most MAX_BATCH checks each, exact", async () => {
    const store = new FakeRemoteStore();
    store.requestDelayMs = 5;
    const door = createStoreDoor(store, 30_000);
    const answers = await Promise.all(
      Array.from({ length: 3_000 }, () => door.check([window("hot", 1_000)])),
    );
    assert.equal(answers.filter((a) => !(a instanceof Unanswered) && a[0].allowed).length, 1_000);
    assert.ok(answers.every((a) => !(a instanceof Unanswered)), "no answer by the failure policy");
    assert.ok(store.maxPending <= MAX_IN_FLIGHT, String(store.maxPending));
    assert.ok(Math.max(...store.batches) <= MAX_BATCH, String(Math.max(...store.batches)));
    assert.ok(store.calls <= 20, `3,000 checks took ${store.calls} store calls`);
  });

  it("a clustered store gets one slot per batch (a counter's slot, else its subject); others mix them (an idle door sends the first check at once)", async () => {
    for (const clustered of [true, false]) {
      const seen: string[][] = [];
      const store: RateLimitStore = {
        clustered,
        checkBatch: (checks) => {
          seen.push(checks.map((c) => c.counters[0].slot ?? c.counters[0].subject));
          return Promise.resolve({
            results: checks.map((c) =>
              c.counters.map(() => ({ allowed: true, remaining: 1, resetMs: 0 }))
            ),
          });
        },
      };
      const door = createStoreDoor(store, 30_000);
      const tagged = (subject: string, slot: string) => ({ ...window(subject), slot });
      await Promise.all(
        [window("a"), window("b"), tagged("c", "t1"), tagged("d", "t1"), window("a")].map((c) =>
          door.check([c])
        ),
      );
      if (clustered) {
        assert.deepEqual(seen, [["a"], ["b"], ["t1", "t1"], ["a"]]);
      } else {
        assert.deepEqual(seen, [["a"], ["b", "t1", "t1", "a"]]);
      }
    }
  });

  it("a stall: 10,000 checks leave at their deadline, pending calls stay at most MAX_IN_FLIGHT, one timer for the queue, nothing replayed on recovery", async () => {
    const store = new FakeRemoteStore();
    store.stalled = true;
    const door = createStoreDoor(store, 200);
    const timers = globalThis.setTimeout;
    let armed = 0;
    globalThis.setTimeout =
      ((...args: Parameters<typeof setTimeout>) => (armed++, timers(...args))) as typeof setTimeout;
    const started = performance.now();
    let answers: Answer[];
    try {
      answers = await Promise.all(
        Array.from({ length: 10_000 }, () => door.check([window("hot")])),
      );
    } finally {
      globalThis.setTimeout = timers;
    }
    const waited = performance.now() - started;
    assert.ok(answers.every((a) => a instanceof Unanswered && a.reason === "timeout"));
    assert.ok(waited >= 150 && waited < 5_000, String(waited));
    assert.ok(store.maxPending <= MAX_IN_FLIGHT, String(store.maxPending));
    // A timer per batch and re-arm, never one per check (a loaded machine re-arms a few more).
    assert.ok(armed <= 100, `${armed} timers armed for 10,000 checks`);
    store.resume();
    await until(() => store.pending === 0);
    assert.equal(store.appliedAt.size, 0, "nothing applied after the answers");
    assert.equal(store.inner.checkNow([{ ...window("hot"), cost: 0 }])[0].remaining, 1_000_000);
    const after = await door.check([window("hot")]);
    assert.ok(!(after instanceof Unanswered) && after[0].remaining === 1_000_000 - 1);
  });

  it("one check at a time arms no timer per check: the deadlines share one timer, re-armed only when it fires", async () => {
    const store = new FakeRemoteStore();
    const door = createStoreDoor(store, 1_000);
    const timers = globalThis.setTimeout;
    let armed = 0;
    globalThis.setTimeout =
      ((...args: Parameters<typeof setTimeout>) => (armed++, timers(...args))) as typeof setTimeout;
    try {
      for (let i = 0; i < 200; i++) {
        const answer = await door.check([window("seq")]);
        assert.ok(!(answer instanceof Unanswered));
      }
    } finally {
      globalThis.setTimeout = timers;
    }
    assert.ok(armed <= 5, `${armed} timers armed for 200 checks one at a time`);
  });

  it("a check reaching the store after its deadline is not applied; a reply later than the timeout is answered by the failure policy after it was applied, never before", async () => {
    const late = new FakeRemoteStore();
    late.requestDelayMs = 200;
    const door = createStoreDoor(late, 100);
    assert.ok(await door.check([window("a")]) instanceof Unanswered);
    await until(() => late.pending === 0);
    assert.equal(late.appliedAt.size, 0);

    const slowReply = new FakeRemoteStore();
    slowReply.replyDelayMs = 200;
    const answered = new Map<string, number>();
    const other = createStoreDoor(slowReply, 100);
    await Promise.all(Array.from({ length: 50 }, async (_, i) => {
      const answer = await other.check([window(`s${i}`)]);
      assert.ok(answer instanceof Unanswered && answer.reason === "timeout");
      answered.set(`s${i}`, Date.now());
    }));
    await until(() => slowReply.pending === 0);
    for (const [subject, at] of slowReply.appliedAt) {
      assert.ok(at <= answered.get(subject)!, `${subject} applied after its answer`);
    }
  });

  it("sends each check's deadline (wall clock, computed when sent from the monotonic time left) a margin before its answer: timeoutMs / 2, at most 100 ms", async () => {
    // A short timeoutMs leaves a batch's later checks and the reply room too (a tenth left 5 ms).
    assert.deepEqual(
      [1, 50, 120, 200, 5_000].map(replyMarginMs),
      [0, 25, 60, 100, 100],
    );
    const deadlines: number[] = [];
    const store: RateLimitStore = {
      checkBatch: (
        checks,
      ) => (deadlines.push(...checks.map((c) => c.deadline)),
        Promise.resolve({
          results: checks.map(() => [{ allowed: true, remaining: 0, resetMs: 0 }]),
        })),
    };
    const before = Date.now();
    await createStoreDoor(store, 1_000).check([window("a")]);
    const after = Date.now();
    assert.equal(deadlines.length, 1);
    assert.ok(deadlines[0] >= before + 899 && deadlines[0] <= after + 900, String(deadlines));
  });

  it("a check counts from the door's one clock read for every check of the task: its deadline still fires", async () => {
    const deadlines: number[] = [];
    const stalled: RateLimitStore = {
      checkBatch: (
        checks,
      ) => (deadlines.push(...checks.map((c) => c.deadline)), new Promise(() => {})),
    };
    const door = createStoreDoor(stalled, 200);
    const first = door.check([window("first")]); // arms the door's one timer
    await Promise.resolve();
    deadlines.length = 0;
    const now = performance.now;
    let reads = 0;
    performance.now = () => (reads++, now.call(performance));
    const before = Date.now();
    const started = now.call(performance);
    let pending: unknown[];
    try {
      pending = Array.from({ length: 10 }, (_, i) => door.check([window(`u${i}`)]));
      await Promise.resolve(); // the door's pump: one clock read, every check sent
    } finally {
      performance.now = now;
    }
    assert.equal(reads, 1, `${reads} clock reads for 10 checks of one task`);
    const after = Date.now();
    assert.equal(deadlines.length, 10);
    for (const d of deadlines) assert.ok(d >= before + 99 && d <= after + 100, String(d));
    const answers = await Promise.all([first, ...pending]);
    assert.ok(answers.every((a) => a instanceof Unanswered && a.reason === "timeout"));
    const waited = now.call(performance) - started;
    assert.ok(waited >= 195 && waited < 3_000, `answered after ${waited} ms`);
  });

  it("then: maps each answer before its promise settles (the failure policy's too); a throw of then rejects that check only", async () => {
    const store = new FakeRemoteStore();
    const door = createStoreDoor(store, 1_000);
    const mapped = await door.check(
      [window("m")],
      undefined,
      undefined,
      (answer) => answer instanceof Unanswered ? "unanswered" : `allowed ${answer[0].allowed}`,
    );
    assert.equal(mapped, "allowed true");
    const [thrown, kept] = await Promise.allSettled([
      door.check([window("t")], undefined, undefined, () => {
        throw new RangeError("then failed");
      }),
      door.check(
        [window("k")],
        undefined,
        undefined,
        (answer) => !(answer instanceof Unanswered),
      ),
    ]);
    assert.ok(thrown.status === "rejected" && /then failed/.test(String(thrown.reason)));
    assert.deepEqual(kept, { status: "fulfilled", value: true });
    store.stalled = true;
    const timedOut = await createStoreDoor(store, 100).check(
      [window("s")],
      undefined,
      undefined,
      (answer) => answer instanceof Unanswered ? answer.reason : "answered",
    );
    assert.equal(timedOut, "timeout");
    store.resume();
  });

  it("a batch sent late in a pump (after a slow store call) gets the same deadline as the pump's first batch", async () => {
    const deadlines: number[][] = [];
    const slow: RateLimitStore = {
      checkBatch: (checks) => {
        deadlines.push(checks.map((c) => c.deadline));
        const until = performance.now() + 40; // a store call that takes 40 ms to send
        while (performance.now() < until) { /* busy */ }
        return new Promise(() => {});
      },
    };
    const door = createStoreDoor(slow, 300);
    const pending = Array.from(
      { length: MAX_BATCH + 100 },
      (_, i) => door.check([window(`b${i}`)]),
    );
    const answers = await Promise.all(pending);
    assert.ok(answers.every((a) => a instanceof Unanswered && a.reason === "timeout"));
    // The first check went alone at once; the others, one pump, in two batches.
    assert.deepEqual(deadlines.map((d) => d.length), [1, MAX_BATCH, 99]);
    const [first, second] = [deadlines[1][0], deadlines[2][0]];
    assert.ok(Math.abs(second - first) <= 2, `deadlines ${first} and ${second} of one pump`);
  });

  it("a wall clock stepped back an hour neither hangs a check nor gives the store a later deadline", async () => {
    const deadlines: number[] = [];
    const store: RateLimitStore = {
      checkBatch: (
        checks,
      ) => (deadlines.push(...checks.map((c) => c.deadline)), new Promise(() => {})),
    };
    const real = Date.now;
    const started = performance.now();
    try {
      const door = createStoreDoor(store, 100);
      Date.now = () => real() - 3_600_000; // stepped after the door was made
      const pending = door.check([window("a")]);
      assert.ok((await pending) instanceof Unanswered);
    } finally {
      Date.now = real;
    }
    assert.ok(performance.now() - started < 2_000);
    assert.ok(deadlines[0] < real() - 3_000_000, "the deadline follows the stepped clock");
  });

  it("a null result is answered by the failure policy (timeout)", async () => {
    const store: RateLimitStore = {
      checkBatch: (checks) => Promise.resolve({ results: checks.map(() => null) }),
    };
    const answer = await createStoreDoor(store, 1_000).check([window("a")]);
    assert.ok(answer instanceof Unanswered && answer.reason === "timeout");
  });

  it("store unavailability is Unanswered; a store bug or a malformed reply is a TypeError naming its cause", async () => {
    const down: RateLimitStore = {
      name: "redis",
      checkBatch: () => Promise.reject(new Error("ECONNREFUSED")),
    };
    const failed = await createStoreDoor(down, 1_000).check([window("a")]);
    assert.ok(failed instanceof Unanswered && failed.reason === "error");
    assert.equal((failed.cause as Error).message, "ECONNREFUSED");
    const bugs: [RateLimitStore, RegExp][] = [
      [{
        name: "redis",
        checkBatch: () => Promise.reject(new TypeError("x is undefined")),
      }, /redis store failed \(TypeError: x is undefined\)/],
      [{
        name: "redis",
        checkBatch: () => {
          throw new RangeError("sync");
        },
      }, /redis store failed \(RangeError: sync\)/],
      [{ name: "redis", checkBatch: () => Promise.resolve({ results: [] }) }, /malformed/],
      [{
        name: "redis",
        checkBatch: () => Promise.resolve({ results: [[{ allowed: "yes" }]] } as never),
      }, /malformed/],
      [{
        name: "redis",
        checkBatch: () => Promise.resolve(undefined as never),
      }, /malformed/],
      // A reply that throws as it is read: malformed, answered now (not left to hang, nor thrown
      // into the void as an unhandled rejection).
      [{
        name: "redis",
        checkBatch: () =>
          Promise.resolve({
            results: [[{
              get allowed(): boolean {
                throw new Error("boom");
              },
              remaining: 0,
              resetMs: 0,
            }]],
          }),
      }, /malformed.*boom/],
      [{
        name: "redis",
        checkBatch: () =>
          Promise.resolve({
            get results(): never {
              throw new Error("boom");
            },
          }),
      }, /malformed.*boom/],
    ];
    for (const [store, message] of bugs) {
      await assert.rejects(
        Promise.resolve(createStoreDoor(store, 1_000).check([window("a")])),
        (error: Error) => error instanceof TypeError && message.test(error.message),
      );
    }
  });

  it("calls checkNow synchronously, without a timer; its plain Error is Unanswered, its TypeError thrown", () => {
    const timers = globalThis.setTimeout;
    let armed = 0;
    globalThis.setTimeout =
      ((...args: Parameters<typeof setTimeout>) => (armed++, timers(...args))) as typeof setTimeout;
    try {
      const ok: RateLimitStore = {
        checkBatch: () => Promise.reject(new Error("not this")),
        checkNow: () => [{ allowed: true, remaining: 1, resetMs: 0 }],
      };
      const answer = createStoreDoor(ok, 1_000).check([window("a")]);
      assert.deepEqual(answer, [{ allowed: true, remaining: 1, resetMs: 0 }]);
      const down: RateLimitStore = {
        checkBatch: () => Promise.reject(new Error("not this")),
        checkNow: () => {
          throw new Error("down");
        },
      };
      assert.ok(
        createStoreDoor(down, 1_000).check([window("a")]) instanceof Unanswered,
      );
      const buggy: RateLimitStore = { ...down, checkNow: () => [] };
      assert.throws(
        () => createStoreDoor(buggy, 1_000).check([window("a")]),
        /malformed/,
      );
      // An answer that throws as it is read is malformed too (a plain Error would be Unanswered).
      const unreadable: RateLimitStore = {
        ...down,
        checkNow: () => [{
          get allowed(): boolean {
            throw new Error("boom");
          },
          remaining: 0,
          resetMs: 0,
        }],
      };
      assert.throws(
        () => createStoreDoor(unreadable, 1_000).check([window("a")]),
        { name: "TypeError", message: /malformed.*boom/ },
      );
    } finally {
      globalThis.setTimeout = timers;
    }
    assert.equal(armed, 0);
  });

  it("checks in-process answers again unless its checkNow is marked well-formed (the memory store's; one replaced on it is checked)", () => {
    const yes = () => [{ allowed: "yes", remaining: 1, resetMs: 0 }] as unknown as CounterResult[];
    const store: RateLimitStore = {
      checkBatch: () => Promise.resolve({ results: [] }),
      checkNow: yes,
    };
    assert.throws(() => createStoreDoor(store, 1_000).check([window("a")]), /malformed/);
    assert.equal(isWellFormed(yes), false);
    answersWellFormed(yes);
    assert.equal(isWellFormed(yes), true);
    assert.deepEqual(createStoreDoor(store, 1_000).check([window("a")]), yes());
    const memory = createMemoryRateLimitStore();
    const [answer] = createStoreDoor(memory, 1_000).check([window("a")]) as CounterResult[];
    assert.equal(answer.remaining, 999_999);
    assert.equal(isWellFormed(memory.checkNow), true);
    memory.checkNow = () => [];
    assert.equal(isWellFormed(memory.checkNow), false);
    assert.throws(() => createStoreDoor(memory, 1_000).check([window("a")]), /malformed/);
  });

  it("a call that never settles frees its slot SETTLE_MS after its last answer (no wait of the store's own); its late reply changes nothing", async () => {
    const store = new FakeRemoteStore();
    store.stalled = true;
    const door = createStoreDoor(store, 100);
    const stalled = await Promise.all(
      Array.from(
        { length: MAX_IN_FLIGHT },
        () => door.call(() => store.readCredits([]), performance.now()),
      ),
    );
    assert.ok(stalled.every((a) => a instanceof Unanswered && a.reason === "timeout"));
    assert.equal(store.pending, MAX_IN_FLIGHT);
    // Every slot held: a check now leaves the queue unsent at its deadline.
    assert.ok(await door.check([window("next")]) instanceof Unanswered);
    assert.equal(store.calls, MAX_IN_FLIGHT);
    await sleep(SETTLE_MS + 100);
    const sent = door.check([window("next")]);
    await until(() => store.calls === MAX_IN_FLIGHT + 1);
    assert.ok(
      store.pending <= MAX_IN_FLIGHT + 1,
      "one more call pending: the store's client holds the stalled ones",
    );
    store.resume();
    const answer = await sent;
    assert.ok(!(answer instanceof Unanswered) && answer[0].remaining === 999_999);
    await until(() => store.pending === 0);
  });

  it("a stall of any length: the calls let go of stay at most MAX_LET_GO, every check is still answered by its deadline, and as calls settle new checks reach the store", async () => {
    const settlers: (() => void)[] = [];
    let calls = 0;
    let unsettled = 0;
    let answering = false;
    const answer = (checks: readonly { counters: readonly unknown[] }[]) => ({
      results: checks.map((c) =>
        c.counters.map(() => ({ allowed: true, remaining: 1, resetMs: 0 }))
      ),
    });
    const store: RateLimitStore = {
      checkBatch: (checks) => {
        calls++;
        if (answering) return Promise.resolve(answer(checks));
        unsettled++;
        return new Promise((resolve) => {
          settlers.push(() => (unsettled--, resolve({ results: checks.map(() => null) })));
        });
      },
    };
    const timeoutMs = 100;
    const door = createStoreDoor(store, timeoutMs);
    let most = 0;
    const waits: Promise<number>[] = [];
    const started = performance.now();
    // 5 checks every 25 ms for 4 × SETTLE_MS, of calls that never settle.
    while (performance.now() - started < 4 * SETTLE_MS) {
      const sentAt = performance.now();
      for (let i = 0; i < 5; i++) {
        waits.push(
          Promise.resolve(door.check([window(`s${i}`)])).then((a) => {
            assert.ok(a instanceof Unanswered);
            return performance.now() - sentAt;
          }),
        );
      }
      await sleep(25);
      most = Math.max(most, unsettled);
    }
    const late = (await Promise.all(waits)).filter((ms) => ms > timeoutMs + 50);
    assert.deepEqual(late, [], "every check answered by its deadline");
    assert.ok(
      most <= MAX_IN_FLIGHT + MAX_LET_GO,
      `${most} unsettled calls (bound ${MAX_IN_FLIGHT + MAX_LET_GO})`,
    );
    const sent = calls;
    // Nothing more is sent while every slot is held by a call past SETTLE_MS.
    assert.ok(await door.check([window("held")]) instanceof Unanswered);
    assert.equal(calls, sent);
    // The calls settle: slots come back, new checks reach the store.
    answering = true;
    for (const settle of settlers.splice(0)) settle();
    const after = await door.check([window("after")]);
    assert.ok(!(after instanceof Unanswered), "answered by the store after the calls settled");
    assert.equal(unsettled, 0);
  });

  it("a let-go call settling lets go of a call held past SETTLE_MS: a lost connection never holds the door for good", async () => {
    const settlers: (() => void)[] = [];
    const door = createStoreDoor(new FakeRemoteStore(), 100);
    const stuck = () => new Promise<null>((resolve) => settlers.push(() => resolve(null)));
    const round = () =>
      Promise.all(
        Array.from({ length: MAX_IN_FLIGHT }, () => door.call(stuck, performance.now())),
      );
    await round();
    await sleep(SETTLE_MS + 100); // let go of: MAX_LET_GO reached
    await round();
    await sleep(SETTLE_MS + 100); // past SETTLE_MS, these hold their slots
    assert.equal(settlers.length, 2 * MAX_IN_FLIGHT);
    assert.ok(await door.call(stuck, performance.now()) instanceof Unanswered);
    assert.equal(settlers.length, 2 * MAX_IN_FLIGHT, "every slot held: nothing sent");
    settlers[0](); // a let-go call settles: a held one is let go of, its slot free
    const next = door.call(stuck, performance.now());
    await until(() => settlers.length === 2 * MAX_IN_FLIGHT + 1);
    settlers.at(-1)!();
    assert.ok((await next) instanceof Unanswered);
    for (const settle of settlers) settle();
  });

  it("a call unsettled SETTLE_MS past its last answer is reported then (traced, observed: timeout), also when it keeps its slot; once, whenever it is let go of or settles", async () => {
    const settlers: (() => void)[] = [];
    /** Per call, in sending order: its `traced` and `observe` reports. */
    const traced: (string | undefined)[][] = [];
    const observed: (string | undefined)[] = [];
    const door = createStoreDoor(
      new FakeRemoteStore(),
      100,
      (_sentAt, _checks, errorType) => void observed.push(errorType),
      {
        batch: () => {
          const reports: (string | undefined)[] = [];
          traced.push(reports);
          return (errorType) => void reports.push(errorType);
        },
      },
    );
    const stuck = () => new Promise<null>((resolve) => settlers.push(() => resolve(null)));
    const round = () =>
      Promise.all(
        Array.from({ length: MAX_IN_FLIGHT }, () => door.call(stuck, performance.now())),
      );
    const timeouts = (n: number) => Array(n).fill("timeout");
    await round();
    await sleep(SETTLE_MS + 100); // let go of: MAX_LET_GO reached
    assert.deepEqual(traced, Array.from({ length: MAX_IN_FLIGHT }, () => ["timeout"]));
    await round();
    await sleep(SETTLE_MS + 100); // past SETTLE_MS, these keep their slots, and are reported
    assert.equal(settlers.length, 2 * MAX_IN_FLIGHT);
    assert.deepEqual(traced, Array.from({ length: 2 * MAX_IN_FLIGHT }, () => ["timeout"]));
    assert.deepEqual(observed, timeouts(2 * MAX_IN_FLIGHT));
    assert.ok(await door.call(stuck, performance.now()) instanceof Unanswered);
    assert.equal(settlers.length, 2 * MAX_IN_FLIGHT, "every slot still held: nothing sent");
    settlers[0](); // a let-go call settles: a held one is let go of (reported already)
    const next = door.call(stuck, performance.now());
    await until(() => settlers.length === 2 * MAX_IN_FLIGHT + 1);
    settlers.at(-1)!(); // settles in time (a null result: answered timeout, reported as it settles)
    assert.ok((await next) instanceof Unanswered);
    for (const settle of settlers) settle(); // the held ones settle: reported already
    await sleep(10);
    assert.deepEqual(traced, [
      ...Array.from({ length: 2 * MAX_IN_FLIGHT }, () => ["timeout"]),
      [undefined],
    ]);
    assert.deepEqual(observed, [...timeouts(2 * MAX_IN_FLIGHT), undefined]);
  });

  it("other calls share the slots and the deadline: a stalled store holds at most MAX_IN_FLIGHT of them", async () => {
    const store = new FakeRemoteStore();
    store.stalled = true;
    const door = createStoreDoor(store, 100);
    const deadlines: number[] = [];
    const start = Date.now();
    const answers = await Promise.all(Array.from({ length: 20 }, () =>
      door.call((deadline) => {
        deadlines.push(deadline);
        return store.readCredits([]);
      }, performance.now())));
    assert.ok(answers.every((a) => a instanceof Unanswered && a.reason === "timeout"));
    assert.ok(store.maxPending <= MAX_IN_FLIGHT);
    assert.equal(deadlines.length, MAX_IN_FLIGHT, "the others left the queue unsent");
    assert.ok(deadlines.every((d) => d >= start + 49 && d <= start + 60), String(deadlines));
    store.resume();
    await until(() => store.pending === 0);
  });
});
