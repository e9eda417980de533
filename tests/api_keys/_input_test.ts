import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyValidationError } from "../../api_keys/errors.ts";
import {
  durationProblem,
  instantProblem,
  MAX_API_KEY_INSTANT_MS,
  validateCreateInput,
  validateListOptions,
  validateRotateInput,
} from "../../api_keys/_input.ts";

const SCOPES = [{ resource: "orders", level: "read" as const }];

function field(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ApiKeyValidationError);
    return error.field;
  }
  throw new Error("expected an ApiKeyValidationError");
}

describe("input validation", () => {
  it("bounds every instant and duration by 9999-12-31T23:59:59.999Z", () => {
    assert.equal(new Date(MAX_API_KEY_INSTANT_MS).toISOString(), "9999-12-31T23:59:59.999Z");
    assert.equal(instantProblem(MAX_API_KEY_INSTANT_MS), undefined);
    assert.match(instantProblem(MAX_API_KEY_INSTANT_MS + 1)!, /9999-12-31/);
    assert.equal(durationProblem(0, 0), undefined);
    for (const bad of [-1, NaN, Infinity, "5", null]) {
      assert.match(durationProblem(bad, 0)!, /non-negative number/, String(bad));
    }
    assert.match(durationProblem(1, MAX_API_KEY_INSTANT_MS)!, /9999-12-31/);
  });

  it("a create input: scopes flattened, allowlist canonical, environment live by default", () => {
    const valid = validateCreateInput({
      tenantId: "t",
      name: "n",
      scopes: [...SCOPES, ...SCOPES],
      allowedIpCidrs: ["10.1.2.3"],
    });
    assert.deepEqual(valid, {
      tenantId: "t",
      name: "n",
      scopes: ["orders:read"],
      environment: "live",
      expiresAt: undefined,
      createdBy: null,
      allowedIpCidrs: ["10.1.2.3/32"],
      rateLimits: undefined,
    });
  });

  it("names the field of each bad input", () => {
    const base = { tenantId: "t", name: "n", scopes: SCOPES };
    assert.equal(field(() => validateCreateInput({ ...base, tenantId: " " })), "tenantId");
    assert.equal(field(() => validateCreateInput({ ...base, scopes: [] })), "scopes");
    assert.equal(
      field(() => validateCreateInput({ ...base, allowedIpCidrs: ["x"] })),
      "allowedIpCidrs",
    );
    assert.equal(field(() => validateCreateInput(null as never)), "input");
    const now = new Date(0);
    assert.equal(field(() => validateRotateInput({ gracePeriodMs: -1 }, now)), "gracePeriodMs");
    assert.equal(field(() => validateRotateInput({ name: "" }, now)), "name");
    assert.equal(
      field(() => validateListOptions({ includeRevoked: "yes" as never })),
      "includeRevoked",
    );
  });

  it("a rotate input inherits what it omits; list options default to active keys", () => {
    assert.deepEqual(validateRotateInput(undefined, new Date(0)), {
      gracePeriodMs: 86_400_000,
      graceStarts: "rotation",
      maxWaitMs: 0,
      name: undefined,
      createdBy: undefined,
      expiresAt: undefined,
      allowedIpCidrs: undefined,
      rateLimits: undefined,
    });
    assert.equal(validateListOptions(undefined), false);
    assert.equal(validateListOptions({ includeRevoked: true }), true);
  });
});
