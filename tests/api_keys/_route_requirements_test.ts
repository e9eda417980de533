import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { requiredEnvironmentOf, requiredScopeOf } from "../../api_keys/_route_requirements.ts";
import { RequireEnvironment, RequireScope } from "../../api_keys/nest/api_keys.decorators.ts";

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

  it("is what the Nest decorators check (their messages unchanged)", () => {
    assert.throws(() => RequireScope("", "read"), /^TypeError: RequireScope: resource must be/);
    assert.throws(() => RequireScope("x", "own" as never), /RequireScope: level "own" must be/);
    assert.throws(
      () => RequireEnvironment("prod" as never),
      /^TypeError: RequireEnvironment: environment must be "live" or "test"$/,
    );
  });
});
