import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { requiredEnvironmentOf, requiredScopeOf } from "../../api_keys/_route_requirements.ts";
import { RequireEnvironment, RequireScope } from "../../api_keys/nest/api_keys.decorators.ts";
import { createApiKeyAuthorizer } from "../../api_keys/fetch/api_keys.authorizer.ts";
import { generateKey } from "../../api_keys/key_format.ts";
import { makeService } from "./helpers.ts";

/** Resources no key can hold (`create` and `importKeys` refuse them), with why. */
const UNHOLDABLE: [string, string][] = [
  ["orders:read", "a resource:level string"],
  [" orders", "a stray space"],
  ["orders ", "a trailing space"],
  ["r".repeat(129), "over 128 characters"],
  ["ordres*", "a character outside the rule"],
];
const RULE = /resource must be 1-128 characters of \[A-Za-z0-9\._\/-\]$/;

describe("route requirements", () => {
  it("freezes a valid scope and passes a valid environment", () => {
    const scope = requiredScopeOf("orders", "write", "who");
    assert.deepEqual(scope, { resource: "orders", level: "write" });
    assert.ok(Object.isFrozen(scope));
    assert.equal(requiredEnvironmentOf("test", "who"), "test");
  });

  it("refuses bad values with a TypeError naming where they were given", () => {
    assert.throws(() => requiredScopeOf(" ", "read", "who"), /^TypeError: who: resource must be/);
    assert.throws(() => requiredScopeOf("orders", "admin", "who"), /who: level "admin" must be/);
    assert.throws(() => requiredEnvironmentOf("prod", "who"), /who: environment must be "live"/);
  });

  it("refuses a resource no key can hold, by the rule create and importKeys apply", () => {
    for (const [resource, why] of UNHOLDABLE) {
      assert.throws(
        () => requiredScopeOf(resource, "read", "who"),
        (error: Error) =>
          error instanceof TypeError && error.message.startsWith("who: ") &&
          RULE.test(error.message),
        why,
      );
    }
    // A key pasted as the resource is refused, never echoed.
    const key = generateKey({ environment: "live" }).raw;
    assert.throws(
      () => requiredScopeOf(key, "read", "who"),
      (error: Error) =>
        error instanceof TypeError && /^who: resource must not be an API key$/.test(error.message),
    );
    // The accepted alphabet: capitals, digits, '.', '_', '/', '-'.
    assert.equal(
      requiredScopeOf("Billing/v2.invoices_x-1", "write", "who").resource,
      "Billing/v2.invoices_x-1",
    );
  });

  it("is what RequireScope and the Fetch binding's require check when the route is declared", () => {
    const authorize = createApiKeyAuthorizer(makeService().service);
    for (const [resource, why] of UNHOLDABLE) {
      assert.throws(
        () => RequireScope(resource, "read"),
        /^TypeError: RequireScope: resource must be 1-128/,
        why,
      );
      assert.throws(
        () => authorize.require({ requiredScope: { resource, level: "read" } }),
        /^TypeError: ApiKeyAuthorizer\.require: requiredScope: resource must be 1-128/,
        why,
      );
    }
  });

  it("is what the Nest decorators check (their messages unchanged)", () => {
    assert.throws(() => RequireScope("", "read"), /^TypeError: RequireScope: resource must be/);
    assert.throws(() => RequireScope("x", "own" as never), /RequireScope: level "own" must be/);
    assert.throws(
      () => RequireEnvironment("prod" as never),
      /^TypeError: RequireEnvironment: environment must be "live" or "test"$/,
    );
  });
});
