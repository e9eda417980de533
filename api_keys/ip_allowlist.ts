/**
 * Client-IP allowlists (CIDR ranges) and the library's one IP-address parser.
 *
 * Address text is untrusted (an allowlist entry from a `keys:write` caller, a
 * client IP from headers), so it is bounded before it is read: text longer
 * than {@link MAX_IP_TEXT_LENGTH} is refused unread. The parser is written by
 * hand and linear: no regular expression sees the text (but the checks of
 * a refused entry's echo, at most 64 characters). Parsed addresses are
 * their bytes (range matching bit by bit, canonical text per RFC 5952), so no
 * package loads with this file (issue 41). Also the client-IP step both
 * bindings share (`resolveClientIp`).
 *
 * @module
 */
import { isEchoable } from "./_input.ts";
import { failureLine } from "./_sinks.ts";
import { compileKeyLayouts, KeyLayouts, LEGACY_KEY_LAYOUTS } from "./key_format.ts";

/**
 * Longest address or allowlist-entry text read (the longest IPv6 text with a
 * dotted tail and a `/128` suffix is 49). Longer text is not an address: an
 * allowlist entry is refused, a client IP is unknown.
 */
export const MAX_IP_TEXT_LENGTH = 64;

/** Most entries an `allowedIpCidrs` list may have. */
export const MAX_ALLOWED_IP_CIDRS = 100;

/**
 * A parsed address: its 4 (IPv4, IPv4-mapped IPv6 included) or 16 bytes;
 * `toString()` is its canonical text (dotted, or RFC 5952).
 */
export interface IpAddress {
  readonly bytes: readonly number[];
  toString(): string;
}

/** Canonical text of `bytes`: dotted IPv4, or RFC 5952 IPv6 (the longest run of 2+ zero groups, leftmost, as `::`). */
function ipText(bytes: readonly number[]): string {
  if (bytes.length === 4) return bytes.join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i] << 8) | bytes[i + 1]);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let end = i;
    while (end < 8 && groups[end] === 0) end++;
    if (end - i > bestLength) [bestStart, bestLength] = [i, end - i];
    i = end;
  }
  const hex = (from: number, to: number) =>
    groups.slice(from, to).map((group) => group.toString(16)).join(":");
  return bestStart === -1 ? hex(0, 8) : `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`;
}

/** The address of `bytes` (4 or 16). */
function addressOf(bytes: readonly number[]): IpAddress {
  return { bytes, toString: () => ipText(bytes) };
}

/** Whether `address` has the same family as `network` and its first `bits` bits. */
function inRange(address: IpAddress, [network, bits]: Range): boolean {
  const a = address.bytes;
  const b = network.bytes;
  if (a.length !== b.length) return false;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const keep = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((a[i] & keep) !== (b[i] & keep)) return false;
  }
  return true;
}

type Range = [IpAddress, number];

/** Value of `text` as 1 to `maxDigits` decimal digits, or -1. */
function decimal(text: string, maxDigits: number): number {
  if (text.length === 0 || text.length > maxDigits) return -1;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** Value of `text` as 1 to 4 hex digits (a group of an IPv6 address), or -1. */
function hexGroup(text: string): number {
  if (text.length === 0 || text.length > 4) return -1;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = parseInt(text[i], 16);
    if (Number.isNaN(digit)) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/** Four-part decimal IPv4 (no leading zeros, no hex, no short forms) as 4 bytes. */
function ipv4Bytes(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes = parts.map((part) => part.length > 1 && part[0] === "0" ? -1 : decimal(part, 3));
  return bytes.every((byte) => byte >= 0 && byte <= 255) ? bytes : undefined;
}

/** Groups of a colon-separated run (`""` is no group), or undefined on a bad group. */
function hexGroups(text: string): number[] | undefined {
  if (text === "") return [];
  const groups = text.split(":").map(hexGroup);
  return groups.includes(-1) ? undefined : groups;
}

/**
 * RFC 4291 IPv6 text as 16 bytes: at most one `::`, and a dotted IPv4 tail
 * read literally (`::1.2.3.4` is `::102:304`, not IPv4-mapped). Zone ids and
 * anything else are refused.
 */
function ipv6Bytes(text: string): number[] | undefined {
  let body = text;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  if (text.indexOf(".", lastColon) !== -1) {
    const v4 = ipv4Bytes(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    tail = [(v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]];
    body = text.endsWith("::", lastColon + 1)
      ? text.slice(0, lastColon + 1)
      : text.slice(0, lastColon);
  }
  const gap = body.indexOf("::");
  if (gap !== -1 && body.indexOf("::", gap + 1) !== -1) return undefined;
  const head = hexGroups(gap === -1 ? body : body.slice(0, gap));
  const rest = gap === -1 ? [] : hexGroups(body.slice(gap + 2));
  if (head === undefined || rest === undefined) return undefined;
  const given = head.length + rest.length + tail.length;
  if (gap === -1 ? given !== 8 : given > 7) return undefined;
  const groups = [...head, ...Array(8 - given).fill(0), ...rest, ...tail];
  return groups.flatMap((group) => [group >> 8, group & 0xff]);
}

/** IPv4-mapped IPv6 (`::ffff:0:0/96`) bytes as IPv4 bytes; others unchanged. */
function unmapped(bytes: number[]): number[] {
  if (bytes.length !== 16 || bytes[10] !== 0xff || bytes[11] !== 0xff) return bytes;
  return bytes.slice(0, 10).every((byte) => byte === 0) ? bytes.slice(12) : bytes;
}

/**
 * The library's IP-address parser, used by allowlists and by
 * `trustedProxyClientIpResolver`. Reads four-part decimal IPv4 or RFC 4291
 * IPv6 (a dotted tail read literally, its octets four-part decimal), ignoring
 * surrounding whitespace; IPv4-mapped IPv6 becomes IPv4. Text longer than
 * {@link MAX_IP_TEXT_LENGTH}, zone ids (`fe80::1%eth0`), hex, octal or short
 * IPv4 forms and anything else give `undefined`. Linear, and no regular
 * expression sees the text.
 */
export function parseIpAddress(text: string): IpAddress | undefined {
  if (typeof text !== "string" || text.length > MAX_IP_TEXT_LENGTH) return undefined;
  const trimmed = text.trim();
  const bytes = trimmed.includes(":") ? ipv6Bytes(trimmed) : ipv4Bytes(trimmed);
  return bytes === undefined ? undefined : addressOf(unmapped(bytes));
}

/** An entry's range; prefix lengths of IPv4-mapped entries count from the IPv4 part. */
function parseEntry(entry: string): Range | null {
  const slash = entry.indexOf("/");
  const addressText = slash === -1 ? entry : entry.slice(0, slash);
  const address = parseIpAddress(addressText);
  if (address === undefined) return null;
  const ipv4 = address.bytes.length === 4;
  const mappedShift = ipv4 && addressText.includes(":") ? 96 : 0;
  const max = ipv4 ? 32 : 128;
  let bits = max;
  if (slash !== -1) {
    bits = decimal(entry.slice(slash + 1), 3) - mappedShift;
    if (bits < 0 || bits > max) return null;
  }
  return [address, bits];
}

function networkOf([address, bits]: Range): string {
  const bytes = [...address.bytes];
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] &= keep === 0 ? 0 : (0xff << (8 - keep)) & 0xff;
  }
  return `${ipText(bytes)}/${bits}`;
}

/**
 * What a rate limit counts a client by: an IPv4 address (IPv4-mapped IPv6
 * included) as its canonical text, an IPv6 address as its network of
 * `ipv6Bits` leading bits (`2001:db8:1:2::/64`), as `@nestjs/throttler`
 * groups them; `undefined` when `text` is no address.
 */
export function trackedNetwork(text: string | undefined, ipv6Bits: number): string | undefined {
  const address = typeof text === "string" ? parseIpAddress(text) : undefined;
  if (address === undefined) return undefined;
  return address.bytes.length === 4 ? address.toString() : networkOf([address, ipv6Bits]);
}

/** The characters of IP and CIDR text (hex digits, `:`, `.`, `/`). */
const IP_TEXT = /^[0-9A-Fa-f:./]+$/;

/**
 * A refused entry as its error names it: quoted when it is IP text of at
 * most 49 characters (the longest address with a suffix) that `isEchoable`
 * passes (no hash), with any API key in it redacted (of the current layout,
 * every built-in legacy one, and the legacy ones of `layouts`, custom ones
 * included); its index otherwise.
 */
function echo(entry: string, index: number, layouts: KeyLayouts | undefined): string {
  if (!isEchoable(entry, IP_TEXT, 49)) return String(index);
  const builtIn = compileKeyLayouts(Object.keys(LEGACY_KEY_LAYOUTS), "LEGACY_KEY_LAYOUTS");
  const redaction = layouts === undefined
    ? builtIn
    : new KeyLayouts([...builtIn.legacy, ...layouts.legacy]);
  return redaction.redact(JSON.stringify(entry));
}

/**
 * Validates and canonicalises allowlist entries: bare addresses become /32 or
 * /128, IPv4-mapped IPv6 becomes IPv4, host bits are cleared, duplicates are
 * dropped (first-seen order). Throws a `TypeError` for more than
 * {@link MAX_ALLOWED_IP_CIDRS} entries, an entry longer than
 * {@link MAX_IP_TEXT_LENGTH} characters (named by its index, never echoed),
 * or the first bad entry (zone ids, junk, out-of-range prefix lengths; quoted
 * only when it is IP text that cannot be a hash or an API key, else by its index).
 *
 * @example
 * ```ts
 * import { normalizeAllowedIpCidrs } from "./ip_allowlist.ts";
 * normalizeAllowedIpCidrs(["10.1.2.3", "::ffff:10.0.0.0/104", "2001:db8::1/32"]);
 * // ["10.1.2.3/32", "10.0.0.0/8", "2001:db8::/32"]
 * ```
 */
export function normalizeAllowedIpCidrs(entries?: string[]): string[] {
  return serviceAllowedIpCidrs(entries, undefined);
}

/**
 * `normalizeAllowedIpCidrs` for a service: a bad entry's echo also has the
 * keys of `layouts`' legacy layouts redacted (`legacyKeyLayouts`, custom ones
 * included). Internal: not exported by the entry point.
 */
export function serviceAllowedIpCidrs(
  entries: string[] | undefined,
  layouts: KeyLayouts | undefined,
): string[] {
  if (entries === undefined || entries === null) return [];
  if (!Array.isArray(entries)) throw new TypeError("allowedIpCidrs must be an array of strings");
  if (entries.length > MAX_ALLOWED_IP_CIDRS) {
    throw new TypeError(`allowedIpCidrs must have at most ${MAX_ALLOWED_IP_CIDRS} entries`);
  }
  const out = new Set<string>();
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index];
    if (typeof entry !== "string") {
      throw new TypeError(`allowedIpCidrs entry ${index} is not a string`);
    }
    if (entry.length > MAX_IP_TEXT_LENGTH) {
      throw new TypeError(
        `allowedIpCidrs entry ${index} is longer than ${MAX_IP_TEXT_LENGTH} characters`,
      );
    }
    const range = parseEntry(entry.trim());
    if (range === null) {
      throw new TypeError(
        `allowedIpCidrs entry ${echo(entry, index, layouts)} is not an IP or CIDR`,
      );
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
 * Whether a parsed `address` falls in any of `cidrs` (allowlist entries,
 * canonical or not; unparsable entries match nothing).
 */
export function isAddressInCidrs(address: IpAddress, cidrs: readonly string[]): boolean {
  return cidrs.some((cidr) => {
    const range = cachedRange(cidr);
    return range !== null && inRange(address, range);
  });
}

/**
 * Whether `clientIp` falls in any of `allowedIpCidrs`. An empty (or absent)
 * list allows every client; otherwise an unknown or unparsable client IP
 * (including one longer than {@link MAX_IP_TEXT_LENGTH}) is refused (fail
 * closed). IPv4-mapped IPv6 clients match IPv4 ranges.
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
  const address = typeof clientIp === "string" ? parseIpAddress(clientIp) : undefined;
  return address !== undefined && isAddressInCidrs(address, allowedIpCidrs);
}

/** Whether `value` is a promise or thenable. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === "function";
}

/**
 * The answer of `resolve(...args)`, or `undefined` when it throws, rejects or
 * answers something other than a string; a throw or rejection is logged
 * through `log` (error name only, see `failureLine`). Synchronous when the
 * resolver is. Never throws or rejects.
 *
 * @param label The resolver's option name, for the log line.
 */
export function resolveClientIp<Args extends unknown[]>(
  resolve: (...args: Args) => unknown,
  args: Args,
  label: string,
  log: (line: string) => void,
): string | undefined | Promise<string | undefined> {
  const unknown = (error: unknown): undefined => {
    log(`${failureLine(label, error)}; client IP treated as unknown`);
    return undefined;
  };
  try {
    const resolved = resolve(...args);
    return isThenable(resolved)
      ? Promise.resolve(resolved).then(stringOrUndefined, unknown)
      : stringOrUndefined(resolved);
  } catch (error) {
    return unknown(error);
  }
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
