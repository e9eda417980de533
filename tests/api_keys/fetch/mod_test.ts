import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as fetchBinding from "../../../api_keys/fetch/mod.ts";

describe("api_keys/fetch/mod.ts", () => {
  it("exports the binding's public runtime names", () => {
    assert.deepEqual(Object.keys(fetchBinding).sort(), [
      "apiKeyErrorResponse",
      "createApiKeyAuthorizer",
      "createApiKeysAdminFetchHandler",
      "createLeakReportFetchHandler",
      "defaultFetchClientIp",
      "getApiKeyContext",
      "getRateLimitHeaders",
      "peerAddress",
      "trustedProxyClientIp",
    ]);
  });
});
