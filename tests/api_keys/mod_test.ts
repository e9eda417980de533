import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as apiKeys from "../../api_keys/mod.ts";

describe("api_keys/mod.ts", () => {
  it("exports the public names and no internal one", () => {
    const names = Object.keys(apiKeys);
    for (
      const name of ["ApiKeysService", "InMemoryApiKeyStorage", "extractApiKey", "isIpAllowed"]
    ) {
      assert.ok(names.includes(name), name);
    }
    for (
      const internal of [
        "apiKeyError",
        "compileSettings",
        "crc32Ascii",
        "createHasher",
        "StorageAccess",
        "VerifyFlow",
        "ManageFlow",
      ]
    ) {
      assert.ok(!names.includes(internal), internal);
    }
  });

  it("no longer exports the names removed from the public surface in 0.2.0", () => {
    const removed = [
      "API_KEY_CHECKSUM_LENGTH",
      "API_KEY_ERROR_STATUS",
      "API_KEY_HASH_SCHEMES",
      "API_KEY_NAMESPACE_PATTERN",
      "API_KEY_PREFIX_LENGTH",
      "API_KEY_SECRET_LENGTH",
      "DEFAULT_API_KEY_NAMESPACE",
      "DEFAULT_GRACE_PERIOD_MS",
      "GITHUB_SECRET_SCANNING_KEYS_URL",
      "MAX_API_KEY_NAME_LENGTH",
      "validateApiKeysServiceOptions",
    ];
    assert.deepEqual(removed.filter((name) => name in apiKeys), []);
  });

  it("runs the module example: create, authorize, authorizeRequest", async () => {
    const service = new apiKeys.ApiKeysService({
      peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes" },
      storage: new apiKeys.InMemoryApiKeyStorage(),
    });
    const { key } = await service.create({
      tenantId: "acme",
      name: "billing worker",
      scopes: [{ resource: "invoices", level: "write" }],
    });
    const required = { requiredScope: { resource: "invoices", level: "read" as const } };
    assert.equal((await service.authorize(key, required)).tenantId, "acme");
    const request = new Request("https://api.example/invoices", {
      headers: { "x-api-key": key },
    });
    const context = await service.authorizeRequest((name) => request.headers.get(name), required);
    assert.equal(context.tenantId, "acme");
  });
});
