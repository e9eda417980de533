/**
 * Client-IP resolvers of the Fetch binding: the default one (the connection's
 * peer address, from the server's per-request info) and one for servers
 * behind known proxies, over Web `Headers` (its parsing and walk are the
 * core's, `../_forwarded.ts`, shared with `./api-keys/nest`).
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
 * with an IP allowlist is then refused: fail closed). `info` is what the
 * server passed beside the request: `Deno.serve`'s `ServeHandlerInfo`, or
 * Hono's `c.env` (the same object on Deno; `{ incoming }` under
 * `@hono/node-server`).
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
 * The connection's peer address in a server's per-request `info`:
 * `info.remoteAddr.hostname` (`Deno.serve`; Hono on Deno as `c.env`), else
 * `info.incoming.socket.remoteAddress` (Hono's `c.env` under
 * `@hono/node-server`), else `undefined`. Never reads a forwarding header.
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
 * Builds a resolver for servers behind your own proxies: it starts at the
 * connection's peer ({@link peerAddress}) and walks the chosen header
 * (`X-Forwarded-For`, or RFC 7239 `Forwarded`; repeated lines as `Headers`
 * joins them) from the right, skipping hops in `trustedProxies`, and returns
 * the first untrusted address. The rules are those of `./api-keys/nest`'s
 * `trustedProxyClientIpResolver`: values a client wrote left of your proxies
 * never win, and a malformed or unparsable hop where the walk needs it, a
 * header value over 8,192 characters, or a chain of trusted hops only yields
 * `undefined` (an IP-restricted key fails closed). Throws a `TypeError` at
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
