/**
 * Client-IP resolvers of the guard: the default one (the framework's answer)
 * and one for apps behind known proxies, without framework-wide trust (its
 * parsing and walk are the core's, `../_forwarded.ts`, shared with
 * `./api-keys/fetch`).
 *
 * @module
 */
import {
  clientIpBehindProxies,
  compileTrustedProxies,
  type TrustedProxyClientIpResolverOptions,
} from "../_forwarded.ts";
import type { ApiKeyClientIpResolver } from "./api_keys.constants.ts";

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

/** The header's value, repeated lines joined as Node joins them. */
function headerValue(header: unknown): string | undefined {
  if (typeof header === "string") return header;
  return Array.isArray(header) ? header.join(", ") : undefined;
}

/**
 * Builds a resolver for apps behind proxies that should not get framework-wide
 * trust. It starts at the socket peer and walks `X-Forwarded-For` (or RFC 7239
 * `Forwarded`, tokenised strictly) from the right, skipping `trustedProxies`,
 * and returns the first untrusted address: what a client wrote left of your
 * proxies never wins. A hop that is not an IP literal (`for=unknown`, an
 * obfuscated name), a value over 8,192 characters, or only trusted hops yield
 * `undefined`, so an IP-restricted key fails closed. Throws at startup when
 * `trustedProxies` is empty or has a bad entry.
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
  const proxies = compileTrustedProxies(options, "trustedProxyClientIpResolver");
  return (request) => {
    const message = request?.raw ?? request;
    return clientIpBehindProxies(
      message?.socket?.remoteAddress,
      headerValue(message?.headers?.[proxies.header]),
      proxies,
    );
  };
}

export type { TrustedProxyClientIpResolverOptions };
