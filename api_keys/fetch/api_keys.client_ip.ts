/**
 * Client-IP resolvers of the Fetch binding: the connection's peer, or the
 * address behind known proxies.
 *
 * @module
 */
import {
  clientIpBehindProxies,
  compileTrustedProxies,
  type TrustedProxyClientIpResolverOptions,
} from "../_forwarded.ts";

/**
 * Returns the client address of a request, or `undefined` when unknown (a key
 * with an IP allowlist is then refused). `info` is what the server passed
 * beside the request (`Deno.serve`'s `ServeHandlerInfo`, Hono's `c.env`).
 *
 * @example
 * ```ts
 * import type { FetchClientIpResolver } from "@saferoute/api-kit/api-keys/fetch";
 * const behindCloudflare: FetchClientIpResolver = (request) =>
 *   request.headers.get("cf-connecting-ip") ?? undefined;
 * ```
 */
export type FetchClientIpResolver = (
  request: Request,
  info: unknown,
) => string | undefined | Promise<string | undefined>;

type Bag = Record<string, unknown>;

const bagOf = (value: unknown): Bag | undefined =>
  typeof value === "object" && value !== null ? value as Bag : undefined;

/**
 * The connection's peer address in a server's per-request `info` (`Deno.serve`,
 * Hono on Deno or `@hono/node-server`), else `undefined`. Never reads a
 * forwarding header.
 *
 * @example
 * ```ts
 * import { peerAddress } from "@saferoute/api-kit/api-keys/fetch";
 * peerAddress({ remoteAddr: { transport: "tcp", hostname: "203.0.113.7", port: 4711 } });
 * // "203.0.113.7"
 * ```
 */
export function peerAddress(info: unknown): string | undefined {
  const deno = bagOf(bagOf(info)?.remoteAddr)?.hostname;
  if (typeof deno === "string" && deno !== "") return deno;
  const node = bagOf(bagOf(bagOf(info)?.incoming)?.socket)?.remoteAddress;
  return typeof node === "string" && node !== "" ? node : undefined;
}

/**
 * The default resolver: the peer address of the connection
 * ({@link peerAddress}). Behind a proxy that is the proxy's address: use
 * {@link trustedProxyClientIp} there.
 *
 * @example
 * ```ts
 * import { defaultFetchClientIp } from "@saferoute/api-kit/api-keys/fetch";
 * const request = new Request("http://localhost/");
 * defaultFetchClientIp(request, { remoteAddr: { hostname: "127.0.0.1" } }); // "127.0.0.1"
 * ```
 */
export function defaultFetchClientIp(_request: Request, info: unknown): string | undefined {
  return peerAddress(info);
}

/**
 * Builds a resolver for servers behind your own proxies, starting at
 * {@link peerAddress}; the walk and its fail-closed rules are those of
 * `./api-keys/nest`'s `trustedProxyClientIpResolver`. Throws a `TypeError` at
 * startup when `trustedProxies` is empty or has a bad entry.
 *
 * @example
 * ```ts
 * import { trustedProxyClientIp } from "@saferoute/api-kit/api-keys/fetch";
 * const clientIp = trustedProxyClientIp({ trustedProxies: ["10.0.0.0/8"] });
 * const request = new Request("http://localhost/", {
 *   headers: { "x-forwarded-for": "198.51.100.1, 203.0.113.7" },
 * });
 * clientIp(request, { remoteAddr: { hostname: "10.0.0.1" } }); // "203.0.113.7"
 * ```
 */
export function trustedProxyClientIp(
  options: TrustedProxyClientIpResolverOptions,
): (request: Request, info: unknown) => string | undefined {
  const proxies = compileTrustedProxies(options, "trustedProxyClientIp");
  return (request, info) =>
    clientIpBehindProxies(
      peerAddress(info),
      request.headers.get(proxies.header) ?? undefined,
      proxies,
    );
}

export type { TrustedProxyClientIpResolverOptions };
