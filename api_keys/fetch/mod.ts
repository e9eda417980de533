/**
 * API keys for Web-standard `Request`/`Response` servers (`Deno.serve`, Hono)
 * without Nest: `createApiKeyAuthorizer` (the header rules and checks of
 * `./api-keys/nest`), client-IP resolvers, and `createLeakReportFetchHandler`.
 * To answer failures as envelopes, give `onError` the formatter of
 * `./safe-response/fetch`.
 *
 * @example
 * ```ts
 * import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { createApiKeyAuthorizer, getApiKeyContext } from "@saferoute/api-kit/api-keys/fetch";
 *
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const apiKeys = createApiKeyAuthorizer(service);
 * const listOrders = apiKeys
 *   .require({ requiredScope: { resource: "orders", level: "read" } })
 *   .protect((request) => Response.json({ tenantId: getApiKeyContext(request)?.tenantId }));
 *
 * Deno.serve((request, info) => listOrders(request, info));
 * ```
 *
 * @module
 */
export {
  type ApiKeyAuthorizer,
  type ApiKeyAuthorizerOptions,
  type ApiKeyErrorResponder,
  apiKeyErrorResponse,
  type ApiKeyRequirements,
  createApiKeyAuthorizer,
  type FetchHandler,
  getApiKeyContext,
  getRateLimitHeaders,
} from "./api_keys.authorizer.ts";
export {
  defaultFetchClientIp,
  type FetchClientIpResolver,
  peerAddress,
  trustedProxyClientIp,
  type TrustedProxyClientIpResolverOptions,
} from "./api_keys.client_ip.ts";
export { createLeakReportFetchHandler } from "./api_keys.leaks.ts";
export { type ApiKeysAdminFetchOptions, createApiKeysAdminFetchHandler } from "./api_keys.admin.ts";
