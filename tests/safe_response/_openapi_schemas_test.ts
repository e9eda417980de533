import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { SAFE_RESPONSE_SCHEMAS, schemaRef } from "../../safe_response/_openapi_schemas.ts";

describe("component schemas", () => {
  it("are frozen, named Safe*, and reference each other by $ref", () => {
    assert.ok(Object.isFrozen(SAFE_RESPONSE_SCHEMAS.SafeErrorResponse));
    assert.ok(Object.keys(SAFE_RESPONSE_SCHEMAS).every((name) => name.startsWith("Safe")));
    assert.deepEqual(schemaRef("SafeErrorBody"), { $ref: "#/components/schemas/SafeErrorBody" });
  });
});
