import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as storage from "../../../api_keys/storage/mod.ts";
import * as apiKeys from "../../../api_keys/mod.ts";

describe("api_keys/storage/mod.ts", () => {
  it("exports the contract and the adapters, all re-exported by ./api-keys", () => {
    assert.deepEqual(Object.keys(storage).sort(), [
      "API_KEY_STORAGE_METHODS",
      "ApiKeyStorageContractError",
      "InMemoryApiKeyStorage",
      "PrismaApiKeyStorage",
      "runApiKeyStorageContract",
    ]);
    for (const name of Object.keys(storage)) {
      assert.equal(
        (apiKeys as Record<string, unknown>)[name],
        (storage as Record<string, unknown>)[name],
      );
    }
  });
});
