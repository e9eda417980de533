/**
 * The client address behind trusted proxies, framework-free: RFC 7239
 * `Forwarded` and `X-Forwarded-For` parsing and the right-to-left walk past
 * the trusted hops. The bindings read the peer address and the header value
 * their own way (Node's `IncomingMessage` in `./api-keys/nest`, Web
 * `Request` and `Headers` in `./api-keys/fetch`) and call
 * {@link clientIpBehindProxies}; every rule lives here.
 *
 * @module
 */
import {
  type IpAddress,
  isAddressInCidrs,
  normalizeAllowedIpCidrs,
  parseIpAddress,
} from "./ip_allowlist.ts";

/**
 * Longest forwarding-header value read (all lines joined). A longer one makes
 * the client unknown: no proxy chain needs more, and parsing stays bounded.
 */
const MAX_FORWARDING_HEADER_LENGTH = 8192;

/**
 * Options of the trusted-proxy resolvers: `trustedProxyClientIpResolver`
 * (`./api-keys/nest`) and `trustedProxyClientIp` (`./api-keys/fetch`).
 */
export interface TrustedProxyClientIpResolverOptions {
  /** Addresses or CIDR ranges of your own proxies (at least one). */
  trustedProxies: string[];
  /**
   * The header your proxies append to (default `x-forwarded-for`). Only this one
   * is read: a client could send the other one with any value it likes.
   */
  header?: "x-forwarded-for" | "forwarded";
}

/** RFC 9110 `tchar`s by character code (ASCII only). */
const TCHAR = new Uint8Array(128);
for (
  const char of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
) {
  TCHAR[char.charCodeAt(0)] = 1;
}

function isTchar(code: number): boolean {
  return code < 128 && TCHAR[code] === 1;
}

/** Whether `code` may stand in a quoted-string or after its backslash: HTAB, SP, VCHAR, obs-text. */
function isQuotable(code: number): boolean {
  return code === 0x09 || (code >= 0x20 && code <= 0xff && code !== 0x7f);
}

function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/** A forwarded-element as scanned. */
interface ScannedElement {
  /** The unquoted `for` value; undefined when the element has none or is malformed. */
  forValue?: string;
  /** Index of the comma that ends a well-formed element (or the text's length); -1 when malformed. */
  end: number;
}

const MALFORMED: ScannedElement = { end: -1 };

/**
 * Scans one RFC 7239 §4 forwarded-element from `start`:
 * `[ token "=" ( token / quoted-string ) ] *( ";" [ ... ] )`, names
 * case-insensitive and each at most once, quoted-strings and quoted-pairs per
 * RFC 9110 §5.6.4, then optional whitespace before `,` or the end. Nothing
 * else is allowed (no whitespace inside an element).
 */
function scanElement(text: string, start: number): ScannedElement {
  const names = new Set<string>();
  let forValue: string | undefined;
  let i = start;
  for (;;) {
    if (i < text.length && isTchar(text.charCodeAt(i))) {
      const nameStart = i;
      while (i < text.length && isTchar(text.charCodeAt(i))) i++;
      const name = text.slice(nameStart, i).toLowerCase();
      if (text[i] !== "=" || names.has(name)) return MALFORMED;
      names.add(name);
      i++;
      let value = "";
      if (text[i] === '"') {
        for (i++;; i++) {
          if (i >= text.length) return MALFORMED; // unterminated
          const code = text.charCodeAt(i);
          if (code === 0x22) break;
          if (code === 0x5c) {
            i++;
            if (i >= text.length || !isQuotable(text.charCodeAt(i))) return MALFORMED;
          } else if (!isQuotable(code)) {
            return MALFORMED;
          }
          value += text[i];
        }
        i++;
      } else {
        const valueStart = i;
        while (i < text.length && isTchar(text.charCodeAt(i))) i++;
        if (i === valueStart) return MALFORMED;
        value = text.slice(valueStart, i);
      }
      if (name === "for") forValue = value;
    }
    if (text[i] !== ";") break;
    i++;
  }
  while (i < text.length && isOws(text.charCodeAt(i))) i++;
  return i === text.length || text[i] === "," ? { forValue, end: i } : MALFORMED;
}

/**
 * The `for` value of each element of a `Forwarded` value, left to right
 * (undefined when an element has none or is malformed).
 *
 * A malformed element (an unterminated quote, a bad escape, anything off the
 * grammar) ends at the first comma after its start, wherever its quotes were,
 * so it never swallows a later element: the element a proxy appends after
 * client-written text is always read on its own. (An element that would span
 * that boundary is open-quoted there, so its quote closes at the proxy's
 * first `"`, which follows `=` and precedes a value character: never a valid
 * end.) Each character is scanned at most twice.
 */
function forwardedForValues(value: string): (string | undefined)[] {
  const values: (string | undefined)[] = [];
  let i = 0;
  for (;;) {
    while (i < value.length && isOws(value.charCodeAt(i))) i++;
    const element = scanElement(value, i);
    values.push(element.forValue);
    const end = element.end === -1 ? value.indexOf(",", i) : element.end;
    if (end === -1 || end >= value.length) return values;
    i = end + 1;
  }
}

/** The hops of an `X-Forwarded-For` value, left to right, without surrounding whitespace. */
function forwardedForHops(value: string): string[] {
  return value.split(",").map((hop) => {
    let start = 0;
    let end = hop.length;
    while (start < end && isOws(hop.charCodeAt(start))) start++;
    while (end > start && isOws(hop.charCodeAt(end - 1))) end--;
    return hop.slice(start, end);
  });
}

/** 1 to 5 decimal digits. */
function isPort(text: string): boolean {
  if (text.length === 0 || text.length > 5) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}

/**
 * A hop as written in a header: `1.2.3.4`, `1.2.3.4:80`, `::1`, `[::1]` or
 * `[::1]:80`, the address read by the allowlist's `parseIpAddress`.
 */
function parseHop(text: string): IpAddress | undefined {
  if (text.startsWith("[")) {
    const end = text.indexOf("]");
    if (end === -1) return undefined;
    const rest = text.slice(end + 1);
    if (rest !== "" && !(rest[0] === ":" && isPort(rest.slice(1)))) return undefined;
    return parseIpAddress(text.slice(1, end));
  }
  const colon = text.indexOf(":");
  if (colon !== -1 && text.indexOf(":", colon + 1) === -1) {
    // One colon: IPv4 with a port (an IPv6 address has at least two).
    return isPort(text.slice(colon + 1)) ? parseIpAddress(text.slice(0, colon)) : undefined;
  }
  return parseIpAddress(text);
}

/** Trusted proxies and the header they append, checked once. */
export interface TrustedProxies {
  /** The proxies' ranges, normalised. */
  readonly trusted: readonly string[];
  /** The header read (lower case). */
  readonly header: "x-forwarded-for" | "forwarded";
}

/**
 * Validates `options` for the resolver named `who` (its name starts every
 * error message). Throws a `TypeError` when `trustedProxies` is empty or has
 * an entry that is not an address or CIDR, or when `header` is unknown.
 */
export function compileTrustedProxies(
  options: TrustedProxyClientIpResolverOptions,
  who: string,
): TrustedProxies {
  const trustedProxies: unknown = options?.trustedProxies;
  if (!Array.isArray(trustedProxies) || trustedProxies.length === 0) {
    throw new TypeError(
      `${who}: trustedProxies must be a non-empty array of addresses or CIDRs`,
    );
  }
  const trusted = trustedProxies.map((entry) => {
    try {
      return normalizeAllowedIpCidrs([entry])[0];
    } catch {
      throw new TypeError(
        `${who}: trustedProxies entry ${JSON.stringify(entry)} is not an address or CIDR`,
      );
    }
  });
  const header = options.header ?? "x-forwarded-for";
  if (header !== "x-forwarded-for" && header !== "forwarded") {
    throw new TypeError(`${who}: header must be "x-forwarded-for" or "forwarded"`);
  }
  return { trusted, header };
}

/**
 * The client address: starts at the socket `peer` and walks the forwarding
 * header's `value` (repeated lines joined with `, `) from the right, skipping
 * hops in `proxies.trusted`, and returns the first untrusted address. A
 * missing peer, a malformed or unparsable hop where the walk needs it, a
 * value over 8,192 characters, or a chain of trusted hops only yields
 * `undefined` (an IP-restricted key then fails closed).
 */
export function clientIpBehindProxies(
  peer: unknown,
  value: string | undefined,
  proxies: TrustedProxies,
): string | undefined {
  if (typeof peer !== "string") return undefined;
  if (value !== undefined && value.length > MAX_FORWARDING_HEADER_LENGTH) return undefined;
  const hops: (string | undefined)[] = value === undefined
    ? []
    : proxies.header === "forwarded"
    ? forwardedForValues(value)
    : forwardedForHops(value);
  hops.push(peer);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i];
    const address = hop === undefined ? undefined : parseHop(hop);
    if (address === undefined) return undefined;
    if (!isAddressInCidrs(address, proxies.trusted)) return address.toString();
  }
  return undefined;
}
