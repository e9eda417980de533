/**
 * A client-IP resolver for apps behind known proxies, without framework-wide trust.
 *
 * @module
 */
import ipaddr from "ipaddr.js";
import { normalizeAllowedIpCidrs } from "../ip_allowlist.ts";
import type { ApiKeyClientIpResolver } from "./api-keys-module-options.interface.ts";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

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

function parseAddress(text: string): Address | null {
  if (text.includes("%") || !ipaddr.isValid(text)) return null;
  const address = ipaddr.parse(text);
  if (address.kind() === "ipv4") {
    return ipaddr.IPv4.isValidFourPartDecimal(text) ? address : null;
  }
  const v6 = address as ipaddr.IPv6;
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}

/** A hop as written in a header: `1.2.3.4`, `1.2.3.4:80`, `::1`, `[::1]` or `[::1]:80`. */
function parseHop(text: string): Address | null {
  if (text.startsWith("[")) {
    const end = text.indexOf("]");
    const rest = text.slice(end + 1);
    if (end === -1 || (rest !== "" && !/^:\d{1,5}$/.test(rest))) return null;
    return parseAddress(text.slice(1, end));
  }
  const port = /^([0-9.]+):\d{1,5}$/.exec(text);
  return parseAddress(port === null ? text : port[1]);
}

/** Splits on `separator` outside double-quoted strings (RFC 7230 quoted-string). */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted && char === "\\") {
      current += char + (text[i + 1] ?? "");
      i++;
      continue;
    }
    if (char === '"') quoted = !quoted;
    if (char === separator && !quoted) {
      parts.push(current);
      current = "";
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}

/** The `for=` values of a `Forwarded` header, or `null` when an element has none. */
function forwardedHops(value: string): string[] | null {
  const hops: string[] = [];
  for (const element of splitOutsideQuotes(value, ",")) {
    let hop: string | undefined;
    for (const pair of splitOutsideQuotes(element, ";")) {
      const eq = pair.indexOf("=");
      if (eq !== -1 && pair.slice(0, eq).trim().toLowerCase() === "for") {
        hop = pair.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1");
      }
    }
    if (hop === undefined) return null;
    hops.push(hop);
  }
  return hops;
}

function headerValue(header: unknown): string | undefined {
  if (typeof header === "string") return header;
  return Array.isArray(header) ? header.join(",") : undefined;
}

function compileTrusted(trustedProxies: unknown): Range[] {
  if (!Array.isArray(trustedProxies) || trustedProxies.length === 0) {
    throw new TypeError(
      "trustedProxyClientIpResolver: trustedProxies must be a non-empty array of addresses or CIDRs",
    );
  }
  return trustedProxies.map((entry) => {
    let canonical: string;
    try {
      [canonical] = normalizeAllowedIpCidrs([entry]);
    } catch {
      throw new TypeError(
        `trustedProxyClientIpResolver: trustedProxies entry ${
          JSON.stringify(entry)
        } is not an address or CIDR`,
      );
    }
    return ipaddr.parseCIDR(canonical);
  });
}

/**
 * Builds a resolver for apps behind proxies that should not get framework-wide
 * trust. It starts at the socket peer and walks the chosen header
 * (`X-Forwarded-For`, or RFC 7239 `Forwarded`) from the right, skipping hops in
 * `trustedProxies`, and returns the first untrusted address. Values a client
 * wrote left of your proxies never win. A malformed or unparsable hop (including
 * `for=unknown` or obfuscated identifiers), or a chain of trusted hops only,
 * yields `undefined`, so an IP-restricted key fails closed. Throws at startup
 * when `trustedProxies` is empty or has a bad entry.
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
  const isTrusted = (address: Address) =>
    trusted.some((range) => range[0].kind() === address.kind() && address.match(range));

  return (request) => {
    const message = request?.raw ?? request;
    const peer = message?.socket?.remoteAddress;
    if (typeof peer !== "string") return undefined;
    const value = headerValue(message.headers?.[header]);
    let hops: string[] | null = [];
    if (value !== undefined) {
      hops = header === "forwarded" ? forwardedHops(value) : value.split(",");
    }
    if (hops === null) return undefined;
    hops.push(peer);
    for (let i = hops.length - 1; i >= 0; i--) {
      const address = parseHop(hops[i].trim());
      if (address === null) return undefined;
      if (!isTrusted(address)) return address.toString();
    }
    return undefined;
  };
}
