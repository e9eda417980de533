import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { isIpAllowed, normalizeAllowedIpCidrs } from "../../api_keys/mod.ts";
import { spyIpParsing } from "../api_keys/ip_parsing_spy.ts";
import { oversizedAddress, RUNS, SEED } from "./hostile_inputs.ts";
import {
  type Address,
  dotted,
  expectedEntry,
  mask,
  oracleAllows,
  type Range,
  rangeOf,
  spelledAddress,
  spellV6,
  unmap,
} from "./ip_oracle.ts";

const entry = fc.tuple(spelledAddress, fc.nat({ max: 128 }), fc.boolean()).map(
  ([{ address, text }, rawBits, bare]) => {
    const width = address.family === "v4" ? 32 : 128;
    const bits = bare ? width : rawBits % (width + 1);
    return { address, bits, text: bare ? text : `${text}/${bits}` };
  },
);

function normalizeOrNull(text: string): string[] | null {
  try {
    return normalizeAllowedIpCidrs([text]);
  } catch (error) {
    assert.ok(error instanceof TypeError, `not a TypeError: ${String(error)}`);
    return null;
  }
}

/** A client address inside `range` (random host bits) or just outside it (one network bit flipped). */
function clientNear(range: Range, hostBits: bigint, inside: boolean, style: number) {
  const width = range.family === "v4" ? 32 : 128;
  const hostMask = ((1n << BigInt(width)) - 1n) ^ mask(range.family, range.bits);
  let value = range.value | (hostBits & hostMask);
  if (!inside && range.bits > 0) value ^= 1n << BigInt(width - 1 - (Number(hostBits) % range.bits));
  const address: Address = { family: range.family, value };
  if (range.family === "v6") return { address, text: spellV6(value, style) };
  const mapped = (0xffffn << 32n) | value;
  const texts = [dotted(value), `::ffff:${dotted(value)}`, spellV6(mapped, style)];
  return { address, text: texts[style % texts.length] };
}

describe("IP allowlist against an integer/BigInt oracle", () => {
  it(`normalizeAllowedIpCidrs canonicalises or refuses exactly as the oracle (${RUNS} entries)`, () => {
    fc.assert(
      fc.property(entry, ({ address, bits, text }) => {
        const expected = expectedEntry(address, bits);
        const actual = normalizeOrNull(text);
        assert.deepEqual(actual, expected === null ? null : [expected], text);
      }),
      { seed: SEED + 10, numRuns: RUNS },
    );
  });

  it(`isIpAllowed agrees with the oracle for clients in and near the ranges (${RUNS} cases)`, () => {
    const allowlist = fc.array(entry, { minLength: 1, maxLength: 4 }).map((entries) =>
      entries.filter((e) => rangeOf(e.address, e.bits) !== null)
    ).filter((entries) => entries.length > 0);
    fc.assert(
      fc.property(
        allowlist,
        fc.nat({ max: 3 }),
        fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
        fc.boolean(),
        fc.nat(),
        (entries, pick, hostBits, inside, style) => {
          const ranges = entries.map((e) => rangeOf(e.address, e.bits)!);
          const cidrs = normalizeAllowedIpCidrs(entries.map((e) => e.text));
          const client = clientNear(ranges[pick % ranges.length], hostBits, inside, style);
          const expected = oracleAllows(client.address, ranges);
          assert.equal(isIpAllowed(client.text, cidrs), expected, `${client.text} in ${cidrs}`);
          // Raw (non-normalised) entries answer the same.
          assert.equal(isIpAllowed(client.text, entries.map((e) => e.text)), expected);
        },
      ),
      { seed: SEED + 11, numRuns: RUNS },
    );
  });

  it("fails closed for absent, junk and zone-scoped clients and allows all with no list", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: "binary", maxLength: 50 }), fc.constant(undefined)),
        (junk) => {
          const parsesAsAddress = junk !== undefined && normalizeOrNull(junk.trim()) !== null;
          fc.pre(!parsesAsAddress);
          assert.equal(isIpAllowed(junk, ["0.0.0.0/0", "::/0"]), false);
          assert.equal(isIpAllowed(junk, []), true);
          assert.equal(isIpAllowed(junk, undefined), true);
        },
      ),
      { seed: SEED + 12, numRuns: 2_000 },
    );
    assert.equal(isIpAllowed("fe80::1%eth0", ["fe80::/10"]), false);
  });

  it("maps IPv4-mapped IPv6 clients onto IPv4 ranges and only onto them", () => {
    fc.assert(
      fc.property(spelledAddress, ({ address, text }) => {
        const v4 = unmap(address);
        fc.pre(v4.family === "v4");
        assert.equal(isIpAllowed(text, [`${dotted(v4.value)}/32`]), true);
        assert.equal(isIpAllowed(text, ["::/0"]), false);
        assert.equal(isIpAllowed(text, ["0.0.0.0/0"]), true);
      }),
      { seed: SEED + 13, numRuns: 2_000 },
    );
  });

  it("reads ::a.b.c.d literally (RFC 4291) and refuses hex or zero-padded embedded octets", () => {
    assert.deepEqual(normalizeAllowedIpCidrs(["::1.2.3.4", "::0.0.0.0/0"]), [
      "::102:304/128",
      "::/0",
    ]);
    assert.equal(isIpAllowed("::1.2.3.4", ["1.2.3.4/32"]), false);
    assert.equal(isIpAllowed("::1.2.3.4", ["::102:304/128"]), true);
    assert.equal(isIpAllowed("1.2.3.4", ["::1.2.3.4"]), false);
    for (
      const text of ["::ffff:0x0a.0.0.1", "::ffff:010.0.0.1", "::ffff:1.2.3", "1::ffff:1.2.3.4.5"]
    ) {
      assert.throws(() => normalizeAllowedIpCidrs([text]), TypeError, text);
      assert.equal(isIpAllowed(text, ["0.0.0.0/0", "::/0"]), false, text);
    }
  });

  it("refuses oversized addresses before any parsing (1,000 inputs, up to 1 MB)", () => {
    fc.assert(
      fc.property(oversizedAddress, (text) => {
        const calls = spyIpParsing(() => {
          assert.throws(() => normalizeAllowedIpCidrs([text]), TypeError);
          assert.equal(isIpAllowed(text, ["0.0.0.0/0", "::/0"]), false);
        });
        assert.deepEqual(calls, []);
      }),
      { seed: SEED + 14, numRuns: 1_000 },
    );
  });
});
