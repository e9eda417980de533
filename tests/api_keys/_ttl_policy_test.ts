import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyValidationError } from "../../api_keys/errors.ts";
import { compileTtlPolicy } from "../../api_keys/_ttl_policy.ts";

const NOW = new Date(Date.UTC(2030, 0, 1));
const at = (ms: number) => new Date(NOW.getTime() + ms);

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ApiKeyValidationError);
    return `${error.code} ${error.field}: ${error.message}`;
  }
  throw new Error("expected an ApiKeyValidationError");
}

describe("compileTtlPolicy", () => {
  it("without a policy: omitted or null means no expiry, a future date is kept", () => {
    const resolve = compileTtlPolicy();
    assert.equal(resolve(undefined, NOW), null);
    assert.equal(resolve(null, NOW), null);
    assert.equal(resolve(at(5), NOW)?.getTime(), at(5).getTime());
    assert.match(
      refusal(() => resolve(NOW, NOW)),
      /^api_key_invalid_time expiresAt: .*must be in the future/,
    );
  });

  it("defaultExpiresInMs fills an omitted expiry; a rotation keeps the old key's", () => {
    const resolve = compileTtlPolicy({ defaultExpiresInMs: 1000 });
    assert.equal(resolve(undefined, NOW)?.getTime(), at(1000).getTime());
    assert.equal(resolve(undefined, NOW, at(500))?.getTime(), at(500).getTime());
    assert.equal(resolve(undefined, NOW, null)?.getTime(), at(1000).getTime());
  });

  it("maxExpiresInMs refuses later expiries, never clamps; no expiry needs allowNeverExpires", () => {
    const resolve = compileTtlPolicy({ maxExpiresInMs: 1000 });
    assert.equal(resolve(at(1000), NOW)?.getTime(), at(1000).getTime());
    assert.match(
      refusal(() => resolve(at(1001), NOW)),
      /^api_key_invalid_time expiresAt: .*ttlPolicy\.maxExpiresInMs/,
    );
    assert.match(
      refusal(() => resolve(null, NOW)),
      /^api_key_invalid_input expiresAt: .*not allowed by the TTL policy/,
    );
    assert.equal(
      compileTtlPolicy({ maxExpiresInMs: 1000, allowNeverExpires: true })(null, NOW),
      null,
    );
  });

  it("a rotation keeps the old key's expiry only up to now + maxExpiresInMs", () => {
    const resolve = compileTtlPolicy({ maxExpiresInMs: 1000 });
    assert.equal(resolve(undefined, NOW, at(500))?.getTime(), at(500).getTime());
    assert.equal(resolve(undefined, NOW, at(365 * 86_400_000))?.getTime(), at(1000).getTime());
  });

  it("returns a new Date, never the caller's", () => {
    const requested = at(5);
    assert.notEqual(compileTtlPolicy()(requested, NOW), requested);
  });
});
