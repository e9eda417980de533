/**
 * How the demo finds the client IP: as if a proxy on the loopback
 * interface sat in front, `X-Forwarded-For` is honoured when the peer is
 * 127.0.0.1 or ::1 (so `curl -H 'X-Forwarded-For: 203.0.113.7'` shows the
 * IP-restricted key refused); otherwise, and when the header is absent, the
 * socket address is used. Other peers cannot spoof the header.
 *
 * @module
 */
import {
  type ApiKeyClientIpResolver,
  defaultApiKeyClientIpResolver,
  trustedProxyClientIpResolver,
} from "../api_keys/nest/mod.ts";

const throughLoopbackProxy = trustedProxyClientIpResolver({
  trustedProxies: ["127.0.0.1/32", "::1/128"],
});

/**
 * The demo's client-IP resolver (also used by `GET /api/whoami` to show the
 * address the guard saw).
 *
 * @example
 * ```ts
 * import { demoClientIpResolver } from "./client_ip.ts";
 * demoClientIpResolver({ headers: {}, socket: { remoteAddress: "127.0.0.1" } }); // "127.0.0.1"
 * ```
 */
export const demoClientIpResolver: ApiKeyClientIpResolver = async (request) =>
  (await throughLoopbackProxy(request)) ?? defaultApiKeyClientIpResolver(request);
