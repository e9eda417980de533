/**
 * Safe response for servers speaking Web-standard `Request`/`Response`
 * (`Deno.serve`, Hono), without Nest: `createSafeFetch` takes the options of
 * the Nest module, and its `route` wraps a handler so that results become
 * success envelopes and thrown values (`SafeException`, `ApiKeyError`...)
 * error envelopes or RFC 9457 problem details, with the same meta as
 * `./safe-response/nest` (pagination with links, sort, filters, field
 * selection, deprecation and sunset headers, request id, response time,
 * rate-limit mirroring, API version, the error catalog), configured per
 * route with plain objects named after the decorators. `errorResponse` is
 * the `onError` of `./api-keys/fetch`.
 * @example
 * ```ts
 * import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
 * import { createApiKeyAuthorizer, getApiKeyContext } from "@saferoute/api-kit/api-keys/fetch";
 * import { createSafeFetch } from "@saferoute/api-kit/safe-response/fetch";
 * const safe = createSafeFetch({ requestId: true });
 * const service = new ApiKeysService({
 *   peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
 *   storage: new InMemoryApiKeyStorage(),
 * });
 * const apiKeys = createApiKeyAuthorizer(service, { onError: safe.errorResponse });
 * const orders = apiKeys
 *   .require({ requiredScope: { resource: "orders", level: "read" } })
 *   .protect(safe.route({ responseMessage: "Orders" }, (request) => ({
 *     tenantId: getApiKeyContext(request)?.tenantId,
 *     orders: [],
 *   })));
 * Deno.serve((request, info) => orders(request, info));
 * ```
 *
 * @module
 */
export type { SafeContext } from "./_exchange.ts";
export {
  createSafeFetch,
  type SafeFetch,
  type SafeFetchOptions,
  type SafeHandler,
  type SafeRouteOptions,
} from "./safe_response.fetch.ts";
export { readJsonBody, type ReadJsonBodyOptions, RequestBodyError } from "./read_json_body.ts";
