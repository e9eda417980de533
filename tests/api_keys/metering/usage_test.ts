import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { API_KEY_USAGE_REFUSALS } from "../../../api_keys/metering/usage.ts";
import { ApiKeyErrorCode } from "../../../api_keys/errors.ts";

describe("API_KEY_USAGE_REFUSALS", () => {
  it("lists the refusal codes counted per key: the key's own refusals and the rate-limit ones", () => {
    // Not about the key: no key yet, or the rate-limit store down (never counted).
    const notOfTheKey = ["api_key_missing", "api_key_malformed", "api_key_rate_limit_unavailable"];
    const own = Object.values(ApiKeyErrorCode).filter((code) => !notOfTheKey.includes(code));
    for (const code of own) assert.ok(API_KEY_USAGE_REFUSALS.includes(code as never), code);
    assert.ok(API_KEY_USAGE_REFUSALS.includes("api_key_rate_limited"));
    assert.ok(API_KEY_USAGE_REFUSALS.includes("api_key_usage_exceeded"));
    assert.equal(new Set(API_KEY_USAGE_REFUSALS).size, 8);
    assert.ok(Object.isFrozen(API_KEY_USAGE_REFUSALS));
  });
});
