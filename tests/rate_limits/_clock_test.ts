import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { BOUND_TTL_MS, createClockOffset } from "../../rate_limits/_clock.ts";

describe("createClockOffset", () => {
  it("knows nothing before a round trip", () => {
    const clock = createClockOffset();
    assert.equal(clock.known, false);
    assert.equal(clock.toServer(1_000), undefined);
  });

  it("maps a local deadline with the tightest recent bound, never later than the server's instant", () => {
    const clock = createClockOffset();
    // Sent at 1_000 local, the server read 5_020, the reply arrived at 1_030: offset in [3_990, 4_020].
    clock.observe(5_020, 1_030);
    assert.equal(clock.known, true);
    assert.equal(clock.toServer(2_000), 5_990);
    // A reply read late (a busy event loop) is a looser bound: it must not make deadlines early.
    clock.observe(5_100, 1_900);
    assert.equal(clock.toServer(2_000), 5_990);
    clock.observe(5_200, 1_200); // a tighter bound (or a clock stepped forward) wins at once
    assert.equal(clock.toServer(2_000), 6_000);
  });

  it("lets a bound go after BOUND_TTL_MS (a server clock stepped back is followed)", () => {
    const clock = createClockOffset();
    clock.observe(5_020, 1_030);
    clock.observe(5_020 + BOUND_TTL_MS, 1_030 + BOUND_TTL_MS + 500);
    assert.equal(clock.toServer(2_000), 5_490);
  });

  it("ignores non-finite readings", () => {
    const clock = createClockOffset();
    clock.observe(Number.NaN, 1);
    assert.equal(clock.known, false);
  });
});
