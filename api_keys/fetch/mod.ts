/**
 * API keys for servers speaking Web-standard `Request`/`Response`
 * (`Deno.serve`, Hono), without Nest: `createApiKeyAuthorizer` checks a
 * request's key against a route's requirements (`ApiKeysService.authorizeRequest`,
 * the same header rules and checks as `./api-keys/nest`), with client-IP
 * resolvers over the server's connection info and trusted proxies. Imports
 * nothing from Nest nor from the safe-response entry points: give `onError`
 * the error formatter of `./safe-response/fetch` to answer failures as
 * envelopes. `createLeakReportFetchHandler` serves the leaked-key handlers of
 * `./api-keys` (GitHub secret-scanning partner, public revocation).
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
