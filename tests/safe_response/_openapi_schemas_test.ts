import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { SAFE_RESPONSE_SCHEMAS, schemaRef } from "../../safe_response/_openapi_schemas.ts";

describe("component schemas", () => {
  it("are frozen, named Safe*, and reference each other by $ref", () => {
    assert.ok(Object.isFrozen(SAFE_RESPONSE_SCHEMAS.SafeErrorResponse));
    assert.ok(Object.keys(SAFE_RESPONSE_SCHEMAS).every((name) => name.startsWith("Safe")));
    assert.deepEqual(schemaRef("SafeErrorBody"), { $ref: "#/components/schemas/SafeErrorBody" });
  });

  it("say integer for every count and second the server sends as one (the client's guards check the same)", () => {
    const { properties } = SAFE_RESPONSE_SCHEMAS.SafeRateLimitMeta as {
      properties: Record<string, { type: string }>;
    };
    for (const field of ["limit", "remaining", "reset", "retryAfter"]) {
      assert.equal(properties[field].type, "integer", field);
    }
  });
});
