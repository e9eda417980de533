import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  BASIC_SUCCESS_SCHEMA,
  SAFE_RESPONSE_SCHEMAS,
  schemaRef,
} from "../../safe_response/_openapi_schemas.ts";

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

  it("say an HTTP status is an integer from 100 to 599, a response time a number of at least 0 (the client's guards check the same)", () => {
    const field = (schema: unknown, name: string) =>
      (schema as { properties: Record<string, unknown> }).properties[name];
    const status = { type: "integer", minimum: 100, maximum: 599 };
    const { SafeSuccessResponse, SafeErrorResponse, SafeProblemDetails } = SAFE_RESPONSE_SCHEMAS;
    assert.deepEqual(field(SafeSuccessResponse, "statusCode"), status);
    assert.deepEqual(field(BASIC_SUCCESS_SCHEMA, "statusCode"), status);
    assert.deepEqual(field(SafeErrorResponse, "statusCode"), status);
    assert.deepEqual(field(SafeProblemDetails, "status"), status);
    for (
      const meta of [SAFE_RESPONSE_SCHEMAS.SafeResponseMeta, SAFE_RESPONSE_SCHEMAS.SafeErrorMeta]
    ) {
      assert.deepEqual(field(meta, "responseTime"), { type: "number", minimum: 0 });
    }
  });
});
