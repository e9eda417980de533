/**
 * `acceptedUntilMs` (api_keys/_accepted_until.ts): when a record stops being
 * accepted. A key rotated without grace ended at its rotation, whatever the
 * clock that judges it; any other expiry is a time judged on the local clock.
 * Its uses: tests/api_keys/verify/_fleet_test.ts (a clock behind the rotating
 * instance's), tests/api_keys/_expiry_test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { acceptedUntilMs } from "../../api_keys/_accepted_until.ts";

const at = (iso: string) => new Date(iso);

describe("acceptedUntilMs", () => {
  it("is Infinity without expiry, rotated or not", () => {
    assert.equal(acceptedUntilMs({ expiresAt: null, rotatedAt: null }), Infinity);
    assert.equal(
      acceptedUntilMs({ expiresAt: null, rotatedAt: at("2030-01-01T00:00:00Z") }),
      Infinity,
    );
  });

  it("is expiresAt for a key never rotated, and for a rotated key whose grace ends after its rotation", () => {
    const expiresAt = at("2030-01-02T00:00:00Z");
    assert.equal(acceptedUntilMs({ expiresAt, rotatedAt: null }), expiresAt.getTime());
    const rotatedAt = new Date(expiresAt.getTime() - 1);
    assert.equal(acceptedUntilMs({ expiresAt, rotatedAt }), expiresAt.getTime());
  });

  it("is -Infinity for a key rotated without grace (expiresAt at or before rotatedAt)", () => {
    const rotatedAt = at("2030-01-01T00:00:00Z");
    assert.equal(acceptedUntilMs({ expiresAt: rotatedAt, rotatedAt }), -Infinity);
    const before = new Date(rotatedAt.getTime() - 1_000);
    assert.equal(acceptedUntilMs({ expiresAt: before, rotatedAt }), -Infinity);
  });

  it("is -Infinity for an expiry that cannot be read (an invalid Date: counted as expired, never as NaN)", () => {
    const unreadable = new Date(Number.NaN);
    assert.equal(acceptedUntilMs({ expiresAt: unreadable, rotatedAt: null }), -Infinity);
    assert.equal(
      acceptedUntilMs({ expiresAt: unreadable, rotatedAt: at("2030-01-01") }),
      -Infinity,
    );
  });
});
