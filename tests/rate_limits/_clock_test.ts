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
    assert.equal(clock.toServer(1_000), undefined);
  });

  it("maps a local deadline with the tightest recent bound, never later than the server's instant", () => {
    const { clocks, advance } = fakeClocks(1_030);
    const clock = createClockOffset(clocks);
    // Sent at 1_000 local, the server read 5_020, the reply arrived at 1_030: offset in [3_990, 4_020].
    clock.observe(5_020);
    assert.equal(clock.known, true);
    assert.equal(clock.toServer(2_000), 5_990);
    // A reply read late (a busy event loop) is a looser bound: it must not make deadlines early.
    advance(870);
    clock.observe(5_100);
    assert.equal(clock.toServer(2_900), 5_990 + 900);
    advance(-700); // (a test's liberty: the bound below arrives "at 1_200")
    clock.observe(5_200); // a tighter bound (or a server clock stepped forward) wins at once
    assert.equal(clock.toServer(2_200), 6_200);
  });

  it("lets a bound go after BOUND_TTL_MS (a server clock stepped back is followed)", () => {
    const { clocks, advance } = fakeClocks(1_030);
    const clock = createClockOffset(clocks);
    clock.observe(5_020);
    advance(BOUND_TTL_MS + 500);
    clock.observe(5_020 + BOUND_TTL_MS);
    assert.equal(clock.toServer(2_000 + BOUND_TTL_MS + 500), 5_490 + BOUND_TTL_MS + 500);
  });

  it("a local wall clock stepped forward or back moves no deadline on the server (the offset is the monotonic clock's)", () => {
    const { clocks, advance } = fakeClocks(1_000_000);
    const clock = createClockOffset(clocks);
    clock.observe(1_000_050); // the server 50 ms ahead
    for (const step of [800, -800 - 3_000]) {
      clocks.wallMs += step; // an NTP step: Date.now() jumps, performance.now() does not
      advance(10);
      const serverNow = clocks.monoMs + 50;
      // A deadline 1,000 ms from now on the stepped wall clock is 1,000 ms from the server's now.
      assert.equal(clock.toServer(clocks.wallMs + 1_000), serverNow + 1_000, `step ${step}`);
    }
  });

  it("ignores non-finite readings", () => {
    const clock = createClockOffset();
    clock.observe(Number.NaN);
    assert.equal(clock.known, false);
  });
});
