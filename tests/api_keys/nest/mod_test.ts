import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as nest from "../../../api_keys/nest/mod.ts";

describe("api_keys/nest/mod.ts", () => {
  it("exports the binding's public runtime names and the deprecated @nestarc aliases", () => {
    assert.deepEqual(Object.keys(nest).sort(), [
      "API_KEYS_CLIENT_IP_RESOLVER",
      "API_KEYS_CONTEXT_WRITER",
      "API_KEYS_ENVIRONMENT_METADATA",
      "API_KEYS_OPTIONS",
      "API_KEYS_RATE_LIMIT_METADATA", // deprecated alias of the options token (docs/migration.md)
      "API_KEYS_SCOPE_METADATA",
      "API_KEY_CONTEXT_PROPERTY",
      "ApiKeyHttpException",
      "ApiKeysGuard",
      "ApiKeysModule",
      "CurrentApiKey",
      "ENVIRONMENT_METADATA",
      "RateLimit", // deprecated
      "RequireEnvironment",
      "RequireScope",
      "SCOPE_METADATA", // deprecated
      "createApiKeysAdminController",
      "defaultApiKeyClientIpResolver",
      "getApiKeyContext",
      "leakReportFromRequest",
      "sendLeakReport",
      "trustedProxyClientIpResolver",
    ]);
  });
});
