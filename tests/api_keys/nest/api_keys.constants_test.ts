import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  API_KEY_CONTEXT_PROPERTY,
  API_KEYS_CLIENT_IP_RESOLVER,
  API_KEYS_CONTEXT_WRITER,
  API_KEYS_ENVIRONMENT_METADATA,
  API_KEYS_MODULE_OPTIONS,
  API_KEYS_SCOPE_METADATA,
} from "../../../api_keys/nest/api_keys.constants.ts";

describe("Nest binding constants", () => {
  it("keep the spec's names exact", () => {
    assert.equal(API_KEY_CONTEXT_PROPERTY, "apiKey");
    assert.equal(API_KEYS_ENVIRONMENT_METADATA, "lib:api-keys:environment");
    assert.equal(API_KEYS_SCOPE_METADATA, "lib:api-keys:scope");
  });

  it("use distinct Symbols as injection tokens", () => {
    const tokens = [API_KEYS_CONTEXT_WRITER, API_KEYS_CLIENT_IP_RESOLVER, API_KEYS_MODULE_OPTIONS];
    for (const token of tokens) assert.equal(typeof token, "symbol");
    assert.equal(new Set(tokens).size, tokens.length);
  });
});
