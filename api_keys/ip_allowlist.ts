/**
 * Client-IP allowlists (CIDR ranges), parsed with `ipaddr.js`.
 *
 * @module
 */
import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

/** An IPv6 text ending in a dotted IPv4 part: the head (up to the last colon) and that part. */
const DOTTED_TAIL = /^(.*:)([^:]*\.[^:]*)$/;

/**
 * Rewrites the dotted IPv4 tail of an IPv6 text as two hex groups, so that
 * `ipaddr.js` reads it literally: it would otherwise take `::a.b.c.d` (the
 * IPv4-compatible address `::a.b.c.d`, RFC 4291 2.5.5.1) as IPv4-mapped
 * `::ffff:a.b.c.d`, and accept hex or zero-padded octets. Null when the
 * tail is not four-part decimal.
 */
function hexTail(text: string): string | null {
  const parts = DOTTED_TAIL.exec(text);
  if (parts === null) return text;
  if (!ipaddr.IPv4.isValidFourPartDecimal(parts[2])) return null;
  const [a, b, c, d] = ipaddr.IPv4.parse(parts[2]).octets;
  return `${parts[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

function parseAddress(text: string): Address | null {
  if (text.includes("%")) return null; // zone ids are not addresses of a client
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (!text.includes(":")) return null;
  const literal = hexTail(text);
  return literal !== null && ipaddr.IPv6.isValid(literal) ? ipaddr.IPv6.parse(literal) : null;
}

function unmap(address: Address): Address {
  return address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

function parseEntry(entry: string): Range | null {
  const slash = entry.indexOf("/");
  const addressText = slash === -1 ? entry : entry.slice(0, slash);
  const parsed = parseAddress(addressText);
  if (parsed === null) return null;
  const address = unmap(parsed);
  const mappedShift = address === parsed ? 0 : 96;
  const max = address.kind() === "ipv4" ? 32 : 128;
  let bits = max;
  if (slash !== -1) {
    const bitsText = entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(bitsText)) return null;
    bits = Number(bitsText) - mappedShift;
    if (bits < 0 || bits > max) return null;
  }
  return [address, bits];
}

function networkOf([address, bits]: Range): string {
  const bytes = address.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] &= keep === 0 ? 0 : (0xff << (8 - keep)) & 0xff;
  }
  return `${ipaddr.fromByteArray(bytes).toString()}/${bits}`;
}

/**
 * Validates and canonicalises allowlist entries: bare addresses become /32 or
 * /128, IPv4-mapped IPv6 becomes IPv4, host bits are cleared, duplicates are
 * dropped (first-seen order). Throws a `TypeError` naming the first bad entry
 * (zone ids, junk, out-of-range prefix lengths).
 *
 * @example
 * ```ts
 * import { normalizeAllowedIpCidrs } from "./ip_allowlist.ts";
 * normalizeAllowedIpCidrs(["10.1.2.3", "::ffff:10.0.0.0/104", "2001:db8::1/32"]);
 * // ["10.1.2.3/32", "10.0.0.0/8", "2001:db8::/32"]
 * ```
 */
export function normalizeAllowedIpCidrs(entries?: string[]): string[] {
  if (entries === undefined || entries === null) return [];
  if (!Array.isArray(entries)) throw new TypeError("allowedIpCidrs must be an array of strings");
  const out = new Set<string>();
  for (const entry of entries) {
    const range = typeof entry === "string" ? parseEntry(entry.trim()) : null;
    if (range === null) {
      throw new TypeError(`allowedIpCidrs entry ${JSON.stringify(entry)} is not an IP or CIDR`);
    }
    out.add(networkOf(range));
  }
  return [...out];
}

const rangeCache = new Map<string, Range | null>();

function cachedRange(cidr: string): Range | null {
  let range = rangeCache.get(cidr);
  if (range === undefined) {
    range = parseEntry(cidr);
    if (rangeCache.size >= 10_000) rangeCache.clear();
    rangeCache.set(cidr, range);
  }
  return range;
}

/**
 * Whether `clientIp` falls in any of `allowedIpCidrs`. An empty (or absent)
 * list allows every client; otherwise an unknown or unparsable client IP is
 * refused (fail closed). IPv4-mapped IPv6 clients match IPv4 ranges.
 *
 * @example
 * ```ts
 * import { isIpAllowed } from "./ip_allowlist.ts";
 * isIpAllowed("::ffff:10.1.2.3", ["10.0.0.0/8"]); // true
 * isIpAllowed(undefined, ["10.0.0.0/8"]); // false
 * isIpAllowed(undefined, []); // true
 * ```
 */
export function isIpAllowed(clientIp: string | undefined, allowedIpCidrs?: string[]): boolean {
  if (allowedIpCidrs === undefined || allowedIpCidrs.length === 0) return true;
  if (typeof clientIp !== "string") return false;
  const parsed = parseAddress(clientIp.trim());
  if (parsed === null) return false;
  const address = unmap(parsed);
  for (const cidr of allowedIpCidrs) {
    const range = cachedRange(cidr);
    if (range !== null && range[0].kind() === address.kind() && address.match(range)) return true;
  }
  return false;
}
