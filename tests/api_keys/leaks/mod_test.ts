import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as leaks from "../../../api_keys/leaks/mod.ts";
import * as apiKeys from "../../../api_keys/mod.ts";

describe("api_keys/leaks/mod.ts", () => {
  it("exports the leak intake; ./api-keys keeps the names it had in 0.2 and no new one", () => {
    assert.deepEqual(Object.keys(leaks).sort(), [
      "SECRET_SCANNING_MAX_TOKENS",
      "createPublicRevocationHandler",
      "createSecretScanningPartnerHandler",
      "githubSecretScanningKeyResolver",
      "secretScanningPatterns",
    ]);
    for (const name of Object.keys(leaks)) {
      assert.equal(
        (apiKeys as Record<string, unknown>)[name],
        (leaks as Record<string, unknown>)[name],
      );
    }
  });
});
