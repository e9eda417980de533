import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClockOffset } from "../../rate_limits/_clock.ts";

describe("createClockOffset", () => {
  it("knows nothing before a round trip", () => {
    const clock = createClockOffset();
    assert.equal(clock.known, false);
    assert.equal(clock.toServer(1_000), undefined);
  });

  it("maps a local deadline with the newest round trip's bound, never later than the server's instant", () => {
    const clock = createClockOffset();
    // Sent at 1_000 local, the server read 5_020, the reply arrived at 1_030: offset in [3_990, 4_020].
    clock.observe(5_020, 1_030);
    assert.equal(clock.known, true);
    assert.equal(clock.toServer(2_000), 5_990);
    clock.observe(5_100, 1_200); // a stepped clock: the newest bound wins
    assert.equal(clock.toServer(2_000), 5_900);
  });

  it("ignores non-finite readings", () => {
    const clock = createClockOffset();
    clock.observe(Number.NaN, 1);
    assert.equal(clock.known, false);
  });
});
