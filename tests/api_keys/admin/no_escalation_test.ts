/**
 * The "no escalation" rule, the admin routes' default policy (`findEscalation`) in isolation: each power
 * (environment, scopes, allowlist, expiry) on its own, several at once, and
 * allowlist containment against an independent integer model of IP ranges;
 * the limits rule (`findLimitsEscalation`) of create and rotate.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { normalizeAllowedIpCidrs } from "../../../api_keys/mod.ts";
import {
  findEscalation,
  findLimitsEscalation,
  type KeyPowers,
} from "../../../api_keys/admin/no_escalation.ts";
import { SEED } from "../../reliability/hostile_inputs.ts";
import {
  dotted,
  mask,
  type Range,
  rangeOf,
  spelledAddress,
  spellV6,
} from "../../reliability/ip_oracle.ts";

const ADMIN: KeyPowers = {
  environment: "live",
  scopes: ["keys:write", "projects:write", "feed:read"],
  allowedIpCidrs: [],
  expiresAt: null,
};

const T = new Date("2030-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(T.getTime() + ms);

describe("findEscalation", () => {
  it("is null for the admin key itself and for a key with fewer powers", () => {
    assert.equal(findEscalation(ADMIN, ADMIN), null);
    const pinned: KeyPowers = {
      environment: "live",
      scopes: ["keys:write", "projects:read"],
      allowedIpCidrs: ["10.0.0.0/8", "2001:db8::/32"],
      expiresAt: T,
    };
    assert.equal(findEscalation(pinned, pinned), null);
    assert.equal(
      findEscalation(pinned, {
        environment: "test",
        scopes: ["projects:read"],
        allowedIpCidrs: ["10.1.2.3/32"],
        expiresAt: at(-1),
      }),
      null,
    );
  });

  describe("environment", () => {
    it("lets a live key act on test keys, never a test key on live keys", () => {
      const test: KeyPowers = { ...ADMIN, environment: "test" };
      assert.equal(findEscalation(ADMIN, test), null);
      assert.equal(findEscalation(test, test), null);
      assert.deepEqual(findEscalation(test, ADMIN), { environment: ["live"] });
    });
  });

  describe("scopes", () => {
    it("names each scope the admin key does not hold; write covers read, read never write", () => {
      assert.equal(findEscalation(ADMIN, { ...ADMIN, scopes: ["projects:read"] }), null);
      assert.deepEqual(
        findEscalation(ADMIN, {
          ...ADMIN,
          scopes: ["billing:read", "projects:read", "feed:write", "keys:read"],
        }),
        { scopes: ["billing:read", "feed:write"] },
      );
    });

    it("matches resources exactly (no prefix or dotted-parent match)", () => {
      assert.deepEqual(
        findEscalation(ADMIN, { ...ADMIN, scopes: ["project:read", "projects.secret:read"] }),
        { scopes: ["project:read", "projects.secret:read"] },
      );
    });
  });

  describe("allowlist", () => {
    const pinned: KeyPowers = { ...ADMIN, allowedIpCidrs: ["10.0.0.0/8", "2001:db8::/32"] };

    it("lets an admin key without an allowlist issue any allowlist, or none", () => {
      for (const allowedIpCidrs of [[], ["10.0.0.0/8"], ["::/0", "0.0.0.0/0"]]) {
        assert.equal(findEscalation(ADMIN, { ...ADMIN, allowedIpCidrs }), null);
      }
      assert.equal(findEscalation(ADMIN, { ...ADMIN, allowedIpCidrs: undefined }), null);
    });

    it("reads a missing allowlist as any address, so a pinned admin key cannot issue one", () => {
      for (const allowedIpCidrs of [[], undefined]) {
        assert.deepEqual(findEscalation(pinned, { ...ADMIN, allowedIpCidrs }), {
          allowedIpCidrs: ["0.0.0.0/0", "::/0"],
        });
      }
    });

    it("names only the ranges outside every admin range", () => {
      assert.deepEqual(
        findEscalation(pinned, {
          ...ADMIN,
          allowedIpCidrs: [
            "10.0.0.0/8",
            "10.255.0.0/16",
            "10.0.0.0/7",
            "11.0.0.0/8",
            "2001:db8:ffff::/48",
            "2001:db9::/32",
          ],
        }),
        { allowedIpCidrs: ["10.0.0.0/7", "11.0.0.0/8", "2001:db9::/32"] },
      );
    });

    it("never nests an IPv4 range in an IPv6 one or the reverse", () => {
      const v4Only: KeyPowers = { ...ADMIN, allowedIpCidrs: ["0.0.0.0/0"] };
      assert.deepEqual(findEscalation(v4Only, ADMIN), { allowedIpCidrs: ["::/0"] });
      const v6Only: KeyPowers = { ...ADMIN, allowedIpCidrs: ["::/0"] };
      assert.deepEqual(findEscalation(v6Only, { ...ADMIN, allowedIpCidrs: ["10.0.0.0/8"] }), {
        allowedIpCidrs: ["10.0.0.0/8"],
      });
    });

    it("takes IPv4-mapped entries as IPv4 once canonical", () => {
      const allowedIpCidrs = normalizeAllowedIpCidrs(["::ffff:10.1.0.0/112"]);
      assert.equal(findEscalation(pinned, { ...ADMIN, allowedIpCidrs }), null);
    });

    it("counts an entry that is not canonical as exceeding (fail closed)", () => {
      assert.deepEqual(findEscalation(pinned, { ...ADMIN, allowedIpCidrs: ["10.1.2.3"] }), {
        allowedIpCidrs: ["10.1.2.3"],
      });
    });

    it("agrees with an integer model of range containment", () => {
      /** A canonical entry from the model's range (or null when the library refuses it). */
      const canonical = (text: string): string | null => {
        try {
          return normalizeAllowedIpCidrs([text])[0];
        } catch {
          return null;
        }
      };
      const within = (inner: Range, outer: Range) =>
        inner.family === outer.family && inner.bits >= outer.bits &&
        (inner.value & mask(outer.family, outer.bits)) === outer.value;
      const outerArb = fc.tuple(spelledAddress, fc.nat({ max: 128 })).map(
        ([{ address, text }, rawBits]) => {
          const bits = rawBits % ((address.family === "v4" ? 32 : 128) + 1);
          return { range: rangeOf(address, bits), text: `${text}/${bits}` };
        },
      );
      fc.assert(
        fc.property(
          outerArb,
          fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
          fc.nat({ max: 128 }),
          fc.nat({ max: 127 }),
          fc.boolean(),
          fc.nat(),
          ({ range: outer, text: outerText }, noise, rawBits, flipBit, flip, style) => {
            if (outer === null) return;
            // An inner range near the outer one: its network with random host bits, sometimes
            // one bit flipped, and a random prefix length (shorter, equal or longer).
            const width = outer.family === "v4" ? 32 : 128;
            const hostMask = ((1n << BigInt(width)) - 1n) ^ mask(outer.family, outer.bits);
            let value = outer.value | (noise & hostMask);
            if (flip) value ^= 1n << BigInt(flipBit % width);
            const bits = rawBits % (width + 1);
            const innerText = `${
              outer.family === "v4" ? dotted(value) : spellV6(value, style)
            }/${bits}`;
            const inner = rangeOf({ family: outer.family, value }, bits);
            const adminEntry = canonical(outerText);
            const keyEntry = canonical(innerText);
            assert.ok(adminEntry !== null, outerText);
            // A mapped IPv6 range shorter than /96 is refused by the library and the model alike.
            assert.equal(keyEntry === null, inner === null, innerText);
            if (keyEntry === null || inner === null) return;
            const escalation = findEscalation(
              { ...ADMIN, allowedIpCidrs: [adminEntry] },
              { ...ADMIN, allowedIpCidrs: [keyEntry] },
            );
            assert.equal(
              escalation === null,
              within(inner, outer),
              `${keyEntry} within ${adminEntry}?`,
            );
          },
        ),
        { seed: SEED + 40, numRuns: 3_000 },
      );
    });
  });

  describe("expiry", () => {
    const expiring: KeyPowers = { ...ADMIN, expiresAt: T };

    it("lets a key without expiry issue any expiry, or none", () => {
      assert.equal(findEscalation(ADMIN, ADMIN), null);
      assert.equal(findEscalation(ADMIN, expiring), null);
    });

    it("refuses a key that never expires or outlives the admin key, even by 1 ms", () => {
      assert.deepEqual(findEscalation(expiring, ADMIN), { expiresAt: ["never"] });
      assert.deepEqual(findEscalation(expiring, { ...ADMIN, expiresAt: at(1) }), {
        expiresAt: [at(1).toISOString()],
      });
      assert.equal(findEscalation(expiring, { ...ADMIN, expiresAt: T }), null);
      assert.equal(findEscalation(expiring, { ...ADMIN, expiresAt: at(-1) }), null);
    });

    it("counts an invalid date on either side as exceeding (fail closed)", () => {
      const invalid = new Date(Number.NaN);
      assert.deepEqual(findEscalation({ ...ADMIN, expiresAt: invalid }, expiring), {
        expiresAt: [T.toISOString()],
      });
      assert.deepEqual(findEscalation(expiring, { ...ADMIN, expiresAt: invalid }), {
        expiresAt: ["invalid"],
      });
    });
  });

  it("names every power in which the key exceeds the admin key at once", () => {
    const narrow: KeyPowers = {
      environment: "test",
      scopes: ["keys:write"],
      allowedIpCidrs: ["192.0.2.0/24"],
      expiresAt: T,
    };
    assert.deepEqual(findEscalation(narrow, ADMIN), {
      environment: ["live"],
      scopes: ["projects:write", "feed:read"],
      allowedIpCidrs: ["0.0.0.0/0", "::/0"],
      expiresAt: ["never"],
    });
  });
});

describe("findLimitsEscalation", () => {
  const minute = { name: "minute", limit: 3, windowMs: 60_000 };
  const shared = { name: "tenant", limit: 100, windowMs: 60_000, sharedBy: "tenant" as const };
  const caller = { rateLimits: [minute, shared], windowsOf: "c", balanceOf: "c", pool: true };

  it("a key on the caller's limits, or limited more, is no escalation", () => {
    assert.equal(findLimitsEscalation(caller, caller), null);
    const more = { name: "hour", limit: 10, windowMs: 3_600_000 };
    assert.equal(
      findLimitsEscalation(caller, { ...caller, rateLimits: [more, shared, minute] }),
      null,
    );
    const poolOnly = { rateLimits: [], windowsOf: "p", balanceOf: null, pool: true };
    assert.equal(findLimitsEscalation(poolOnly, { ...poolOnly, balanceOf: "k" }), null);
    const unlimited = { rateLimits: [], windowsOf: "u", balanceOf: null, pool: false };
    assert.equal(findLimitsEscalation(unlimited, caller), null);
  });

  it("policies: each of the caller's as it is, on its counters unless shared by the tenant", () => {
    assert.deepEqual(findLimitsEscalation(caller, { ...caller, windowsOf: "k" }), {
      rateLimits: ["minute"],
    });
    for (const changed of [{ limit: 2 }, { limit: 4 }, { windowMs: 1_000 }, { cost: 2 }]) {
      assert.deepEqual(
        findLimitsEscalation(caller, {
          ...caller,
          rateLimits: [{ ...minute, ...changed }, shared],
        }),
        { rateLimits: ["minute"] },
        JSON.stringify(changed),
      );
    }
    assert.deepEqual(findLimitsEscalation(caller, { ...caller, rateLimits: [] }), {
      rateLimits: ["minute", "tenant"],
    });
  });

  it("credits: each balance the caller spends, its own and the pool", () => {
    const separate = { credits: ["separate balance"] };
    assert.deepEqual(findLimitsEscalation(caller, { ...caller, balanceOf: "k" }), separate);
    assert.deepEqual(findLimitsEscalation(caller, { ...caller, pool: false }), separate);
    assert.deepEqual(findLimitsEscalation(caller, { ...caller, balanceOf: null }), separate);
    assert.deepEqual(
      findLimitsEscalation(caller, { ...caller, balanceOf: null, pool: false }),
      { credits: ["no balance"] },
    );
  });
});
