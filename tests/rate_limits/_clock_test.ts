import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { BOUND_TTL_MS, createClockOffset } from "../../rate_limits/_clock.ts";

/** The process's clocks, by hand: `wall` (`Date.now()`) and `monotonic` (`performance.now()`). */
function fakeClocks(at: number) {
  const clocks = {
    wallMs: at,
    monoMs: at,
    wall: () => clocks.wallMs,
    monotonic: () => clocks.monoMs,
  };
  return {
    clocks,
    /** Both clocks `ms` on. */
    advance(ms: number) {
      clocks.wallMs += ms;
      clocks.monoMs += ms;
    },
  };
}

describe("createClockOffset", () => {
  it("knows nothing before a round trip", () => {
    const clock = createClockOffset();
    assert.equal(clock.known, false);
    assert.equal(clock.toServer(1_000, clock.now()), undefined);
  });

  it("maps a local deadline with the tightest recent bound, never later than the server's instant", () => {
    const { clocks, advance } = fakeClocks(1_030);
    const clock = createClockOffset(clocks);
    // Sent at 1_000 local, the server read 5_020, the reply arrived at 1_030: offset in [3_990, 4_020].
    clock.observe(5_020, 1_000);
    assert.equal(clock.known, true);
    assert.equal(clock.toServer(2_000, clock.now()), 5_990);
    // A reply read late (a busy event loop) is a looser bound: it must not make deadlines early.
    advance(870);
    clock.observe(5_100, 1_100); // sent at 1_100, read at 1_900: offset in [3_200, 4_000]
    assert.equal(clock.toServer(2_900, clock.now()), 5_990 + 900);
    advance(-700); // (a test's liberty: the bound below arrives "at 1_200")
    clock.observe(5_200, 1_190); // a tighter bound (or a server clock stepped forward) wins at once
    assert.equal(clock.toServer(2_200, clock.now()), 6_200);
  });

  it("a reply read late whose server reading is floored to the ms (its upper bound up to 1 ms under the true offset) keeps the kept bound: deadlines are not made early", () => {
    const { clocks, advance } = fakeClocks(1_000.9);
    const clock = createClockOffset(clocks);
    // True offset 4_000: the server read 5_000.9 at local 1_000.9 and answers it floored, 5_000.
    clock.observe(5_000, 1_000.8); // a quick round trip: offset in [3_999.1, 3_999.2]
    const kept = clock.toServer(2_000, clock.now());
    // Sent at 1_100.7, read by the server at 1_100.8 (5_100.8, answered 5_100), the reply held
    // 300 ms (a held drain): its upper bound 3_999.3 is above the kept bound, its lower one loose.
    advance(400);
    clock.observe(5_100, 1_100.7);
    assert.equal(clock.toServer(2_400, clock.now()), kept! + 400);
    // A server reading as late as its floor allows: the upper bound 5_200 - 1_200.95 = 3_999.05
    // sits under the kept bound (3_999.1) only by the floor's part of a ms.
    clock.observe(5_200, 1_200.95);
    assert.equal(clock.toServer(2_400, clock.now()), kept! + 400);
  });

  it("follows a server clock stepped back at the first reply that shows it (its upper bound, server - sent, below the kept bound)", () => {
    const { clocks, advance } = fakeClocks(1_000_000);
    const clock = createClockOffset(clocks);
    let ahead = 50; // the server's clock minus the process's
    /** One round trip of `ms`: the server reads its clock halfway. */
    const roundTrip = (ms: number) => {
      const sentAt = clock.now();
      advance(ms / 2);
      const serverMs = clocks.monoMs + ahead;
      advance(ms / 2);
      clock.observe(serverMs, sentAt);
    };
    roundTrip(2);
    ahead -= 5_000; // the server's clock steps back 5 s (NTP, a failover to a server behind)
    for (const at of [1_000, 4_000, 9_000]) {
      advance(at - (clocks.monoMs - 1_000_002));
      roundTrip(2);
      const now = clock.now();
      const deadline = clocks.wallMs + 500;
      // Never later than the true instant on the server (500 ms from its now), by the bound's 1 ms.
      assert.equal(clock.toServer(deadline, now), clocks.monoMs + ahead + 500 - 1, `at ${at}`);
    }
    // A step back within a round trip's bounds goes unseen: the kept bound is 1 ms late (< 4 ms).
    ahead -= 2;
    roundTrip(4);
    assert.equal(clock.toServer(clocks.wallMs, clock.now()), clocks.monoMs + ahead + 1);
    ahead -= 10;
    roundTrip(4); // 12 ms back in all: more than this round trip allows
    assert.equal(clock.toServer(clocks.wallMs, clock.now()), clocks.monoMs + ahead - 2);
  });

  it("lets a bound go after BOUND_TTL_MS (a looser one takes its place)", () => {
    const { clocks, advance } = fakeClocks(1_030);
    const clock = createClockOffset(clocks);
    clock.observe(5_020, 1_000);
    advance(BOUND_TTL_MS + 500);
    // Read 29 ms after the server's reading (offset in [3_961, 3_991]): looser, taken all the same.
    clock.observe(5_020 + BOUND_TTL_MS + 471, 1_000 + BOUND_TTL_MS + 500);
    assert.equal(
      clock.toServer(2_000 + BOUND_TTL_MS + 500, clock.now()),
      5_961 + BOUND_TTL_MS + 500,
    );
  });

  it("a local wall clock stepped forward or back moves no deadline on the server (the offset is the monotonic clock's)", () => {
    const { clocks, advance } = fakeClocks(1_000_000);
    const clock = createClockOffset(clocks);
    clock.observe(1_000_050, 999_990); // the server 50 ms ahead
    for (const step of [800, -800 - 3_000]) {
      clocks.wallMs += step; // an NTP step: Date.now() jumps, performance.now() does not
      advance(10);
      const serverNow = clocks.monoMs + 50;
      // A deadline 1,000 ms from now on the stepped wall clock is 1,000 ms from the server's now.
      assert.equal(
        clock.toServer(clocks.wallMs + 1_000, clock.now()),
        serverNow + 1_000,
        `step ${step}`,
      );
    }
  });

  it("ignores non-finite readings", () => {
    const clock = createClockOffset();
    clock.observe(Number.NaN, clock.now());
    clock.observe(5_000, Number.NaN);
    assert.equal(clock.known, false);
  });
});
