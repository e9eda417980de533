/**
 * The default client-IP resolver.
 *
 * @module
 */

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
