/**
 * An independent model of the IP allowlist: IPv4 as 32-bit integers, IPv6 as
 * 128-bit BigInts, text rendered by hand. No `ipaddr.js`.
 */
import fc from "fast-check";

export type Family = "v4" | "v6";

/** An address: family and numeric value. */
export interface Address {
  family: Family;
  value: bigint;
}

/** A range: network address and prefix length. */
export interface Range extends Address {
  bits: number;
}

const WIDTH: Record<Family, number> = { v4: 32, v6: 128 };
const MAPPED_PREFIX = 0xffffn;

export function mask(family: Family, bits: number): bigint {
  const width = BigInt(WIDTH[family]);
  return ((1n << width) - 1n) ^ ((1n << (width - BigInt(bits))) - 1n);
}

export function dotted(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join(".");
}

function groups(value: bigint): number[] {
  return Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
}

/** Hex groups with the longest run (>= 2, first on a tie) of zero groups written as `::`. */
function compress(g: number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < g.length;) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < g.length && g[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = g.map((n) => n.toString(16));
  if (bestStart === -1) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}

/** RFC 5952 text: lowercase, no leading zeros, longest zero run compressed. */
export function rfc5952(value: bigint): string {
  return compress(groups(value));
}

/** An IPv6 value in one of several legal spellings, chosen by `style`. */
export function spellV6(value: bigint, style: number): string {
  const g = groups(value);
  const tail = dotted(value & 0xffffffffn);
  switch (style % 4) {
    case 0:
      return rfc5952(value);
    case 1: // full, zero-padded, upper case
      return g.map((n) => n.toString(16).padStart(4, "0").toUpperCase()).join(":");
    case 2: { // compressed head, dotted IPv4 tail (e.g. "::ffff:1.2.3.4", "2001:db8::1.2.3.4")
      const head = compress(g.slice(0, 6));
      return head.endsWith("::") ? head + tail : `${head}:${tail}`;
    }
    default: // six uncompressed groups, dotted IPv4 tail
      return `${g.slice(0, 6).map((n) => n.toString(16)).join(":")}:${tail}`;
  }
}

/** IPv4-mapped IPv6 (`::ffff:0:0/96`) becomes IPv4, as the library documents. */
export function unmap(address: Address): Address {
  if (address.family === "v6" && address.value >> 32n === MAPPED_PREFIX) {
    return { family: "v4", value: address.value & 0xffffffffn };
  }
  return address;
}

/** The canonical entry `normalizeAllowedIpCidrs` must produce, or null when it must refuse. */
export function expectedEntry(address: Address, bits: number): string | null {
  const unmapped = unmap(address);
  const shifted = unmapped === address ? bits : bits - 96;
  if (shifted < 0 || shifted > WIDTH[unmapped.family]) return null;
  const network = unmapped.value & mask(unmapped.family, shifted);
  const text = unmapped.family === "v4" ? dotted(network) : rfc5952(network);
  return `${text}/${shifted}`;
}

/** Whether the oracle allows `client` for `ranges` (already unmapped networks). */
export function oracleAllows(client: Address | null, ranges: Range[]): boolean {
  if (ranges.length === 0) return true;
  if (client === null) return false;
  const c = unmap(client);
  return ranges.some((r) =>
    r.family === c.family && (c.value & mask(r.family, r.bits)) === r.value
  );
}

/** Range of an allowlist entry, per the oracle. */
export function rangeOf(address: Address, bits: number): Range | null {
  const unmapped = unmap(address);
  const shifted = unmapped === address ? bits : bits - 96;
  if (shifted < 0 || shifted > WIDTH[unmapped.family]) return null;
  return { ...unmapped, value: unmapped.value & mask(unmapped.family, shifted), bits: shifted };
}

const u16 = fc.oneof(
  { arbitrary: fc.constant(0), weight: 3 },
  { arbitrary: fc.integer({ min: 0, max: 0xffff }), weight: 2 },
);

export const v4Value: fc.Arbitrary<bigint> = fc.nat({ max: 0xffffffff }).map(BigInt);

export const v6Value: fc.Arbitrary<bigint> = fc.oneof(
  fc.array(u16, { minLength: 8, maxLength: 8 }).map((g) =>
    g.reduce((acc, n) => (acc << 16n) | BigInt(n), 0n)
  ),
  v4Value.map((v) => (MAPPED_PREFIX << 32n) | v),
);

/** An address with the text a client or an allowlist author would write. */
export const spelledAddress: fc.Arbitrary<{ address: Address; text: string }> = fc.oneof(
  v4Value.map((value) => ({ address: { family: "v4" as const, value }, text: dotted(value) })),
  fc.tuple(v6Value, fc.nat()).map(([value, style]) => ({
    address: { family: "v6" as const, value },
    text: spellV6(value, style),
  })),
);
