/**
 * Client-IP resolvers of the guard: the default one (the framework's answer)
 * and one for apps behind known proxies, without framework-wide trust.
 *
 * @module
 */
import {
  type IpAddress,
  isAddressInCidrs,
  normalizeAllowedIpCidrs,
  parseIpAddress,
} from "../ip_allowlist.ts";
import type { ApiKeyClientIpResolver } from "./api_keys.module.ts";

/**
 * Client address of an Express or Fastify request: `request.ip` (which honours
 * Express `trust proxy` and Fastify `trustProxy`), else the socket's remote
 * address, else `undefined`. Never reads `X-Forwarded-For` or `Forwarded` itself.
 *
 * @example
 * ```ts
 * import { defaultApiKeyClientIpResolver } from "@saferoute/api-kit/api-keys/nest";
 * defaultApiKeyClientIpResolver({ ip: "203.0.113.7" }); // "203.0.113.7"
 * ```
 */
// deno-lint-ignore no-explicit-any
export function defaultApiKeyClientIpResolver(request: any): string | undefined {
  const ip = request?.ip;
  if (typeof ip === "string" && ip !== "") return ip;
  const address = (request?.raw ?? request)?.socket?.remoteAddress;
  return typeof address === "string" && address !== "" ? address : undefined;
}

/**
 * Longest forwarding-header value read (all lines joined). A longer one makes
 * the client unknown: no proxy chain needs more, and parsing stays bounded.
 */
const MAX_FORWARDING_HEADER_LENGTH = 8192;

/**
 * Options of `trustedProxyClientIpResolver`.
 *
 * @example
 * ```ts
 * import type { TrustedProxyClientIpResolverOptions } from "@saferoute/api-kit/api-keys/nest";
 * const options: TrustedProxyClientIpResolverOptions = {
 *   trustedProxies: ["10.0.0.0/8", "127.0.0.1"],
 *   header: "forwarded",
 * };
 * ```
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

/** The header's value, repeated lines joined as Node joins them. */
function headerValue(header: unknown): string | undefined {
  if (typeof header === "string") return header;
  return Array.isArray(header) ? header.join(", ") : undefined;
}

function compileTrusted(trustedProxies: unknown): string[] {
  if (!Array.isArray(trustedProxies) || trustedProxies.length === 0) {
    throw new TypeError(
      "trustedProxyClientIpResolver: trustedProxies must be a non-empty array of addresses or CIDRs",
    );
  }
  return trustedProxies.map((entry) => {
    try {
      return normalizeAllowedIpCidrs([entry])[0];
    } catch {
      throw new TypeError(
        `trustedProxyClientIpResolver: trustedProxies entry ${
          JSON.stringify(entry)
        } is not an address or CIDR`,
      );
    }
  });
}

/**
 * Builds a resolver for apps behind proxies that should not get framework-wide
 * trust. It starts at the socket peer and walks the chosen header
 * (`X-Forwarded-For`, or RFC 7239 `Forwarded`) from the right, skipping hops in
 * `trustedProxies`, and returns the first untrusted address. Values a client
 * wrote left of your proxies never win: `Forwarded` is tokenised strictly per
 * RFC 7239 §4 (RFC 9110 quoted-strings), and a malformed element, such as one
 * with an unterminated quote or a bad escape, never swallows the element a
 * proxy appended after it. A hop is an IP literal (`1.2.3.4`, `1.2.3.4:80`,
 * `::1`, `[::1]`, `[::1]:80`) read by the allowlist's parser. A malformed or
 * unparsable hop where the walk needs it (including `for=unknown`, obfuscated
 * identifiers and an element without `for`), a header value over 8,192
 * characters, or a chain of trusted hops only yields `undefined`, so an
 * IP-restricted key fails closed. Throws at startup when `trustedProxies` is
 * empty or has a bad entry.
 *
 * @example
 * ```ts
 * import { InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { ApiKeysModule, trustedProxyClientIpResolver } from "@saferoute/api-kit/api-keys/nest";
 *
 * ApiKeysModule.forRoot({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 *   clientIpResolver: trustedProxyClientIpResolver({ trustedProxies: ["10.0.0.0/8"] }),
 * });
 * ```
 */
export function trustedProxyClientIpResolver(
  options: TrustedProxyClientIpResolverOptions,
): ApiKeyClientIpResolver {
  const trusted = compileTrusted(options?.trustedProxies);
  const header = options.header ?? "x-forwarded-for";
  if (header !== "x-forwarded-for" && header !== "forwarded") {
    throw new TypeError(
      'trustedProxyClientIpResolver: header must be "x-forwarded-for" or "forwarded"',
    );
  }
  return (request) => {
    const message = request?.raw ?? request;
    const peer = message?.socket?.remoteAddress;
    if (typeof peer !== "string") return undefined;
    const value = headerValue(message.headers?.[header]);
    if (value !== undefined && value.length > MAX_FORWARDING_HEADER_LENGTH) return undefined;
    const hops: (string | undefined)[] = value === undefined
      ? []
      : header === "forwarded"
      ? forwardedForValues(value)
      : forwardedForHops(value);
    hops.push(peer);
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i];
      const address = hop === undefined ? undefined : parseHop(hop);
      if (address === undefined) return undefined;
      if (!isAddressInCidrs(address, trusted)) return address.toString();
    }
    return undefined;
  };
}
