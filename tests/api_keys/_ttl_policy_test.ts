import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyValidationError } from "../../api_keys/errors.ts";
import { allowsLifetime, compileTtlPolicy } from "../../api_keys/_ttl_policy.ts";

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

  it("a rotation of a key without expiry, under a policy refusing none with no default: now + maxExpiresInMs; create stays refused", () => {
    const resolve = compileTtlPolicy({ maxExpiresInMs: 1000 });
    assert.equal(resolve(undefined, NOW, null)?.getTime(), at(1000).getTime());
    assert.match(
      refusal(() => resolve(undefined, NOW)),
      /^api_key_invalid_input expiresAt: .*not allowed by the TTL policy/,
    );
    assert.match(
      refusal(() => resolve(null, NOW, null)),
      /^api_key_invalid_input expiresAt: .*not allowed by the TTL policy/,
    );
    // The policy's default, when it has one; none while the policy allows none.
    assert.equal(
      compileTtlPolicy({ defaultExpiresInMs: 500, maxExpiresInMs: 1000 })(undefined, NOW, null)
        ?.getTime(),
      at(500).getTime(),
    );
    assert.equal(
      compileTtlPolicy({ maxExpiresInMs: 1000, allowNeverExpires: true })(undefined, NOW, null),
      null,
    );
  });

  it("allowsLifetime: a lifetime within maxExpiresInMs; none only when the policy allows it", () => {
    assert.equal(allowsLifetime({}, null), true);
    assert.equal(allowsLifetime({}, 1e12), true);
    assert.equal(allowsLifetime({ maxExpiresInMs: 1000 }, null), false);
    assert.equal(allowsLifetime({ maxExpiresInMs: 1000 }, 1000), true);
    assert.equal(allowsLifetime({ maxExpiresInMs: 1000 }, 1001), false);
    assert.equal(allowsLifetime({ defaultExpiresInMs: 1000 }, null), false);
    assert.equal(allowsLifetime({ maxExpiresInMs: 1000, allowNeverExpires: true }, null), true);
  });

  it("returns a new Date, never the caller's", () => {
    const requested = at(5);
    assert.notEqual(compileTtlPolicy()(requested, NOW), requested);
  });
});
