// A Deno.serve-style app: one `fetch(request)` handler over the Fetch entry points.
import { ApiKeysService, InMemoryApiKeyStorage } from "@saferoute/api-kit/api-keys";
import { createApiKeyAuthorizer, getApiKeyContext } from "@saferoute/api-kit/api-keys/fetch";
import { createSafeFetch } from "@saferoute/api-kit/safe-response/fetch";

export const service = new ApiKeysService({
  peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
  storage: new InMemoryApiKeyStorage(),
});
const safe = createSafeFetch({});
const apiKeys = createApiKeyAuthorizer(service, { onError: safe.errorResponse });
const whoami = apiKeys.protect(safe.route({}, (request) => ({
  tenantId: getApiKeyContext(request).tenantId,
})));

export default {
  fetch: (request) => whoami(request, { remoteAddr: { hostname: "127.0.0.1" } }),
};
