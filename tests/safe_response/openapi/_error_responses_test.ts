import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { buildErrorBody, buildProblemDetails } from "../../../safe_response/mod.ts";
import { errorResponses } from "../../../safe_response/openapi/_error_responses.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

describe("documented error responses", () => {
  it("carry examples equal to what the runtime's body builders send", () => {
    const envelope = errorResponses(
      [404, { status: 404, code: "GONE_ITEM" }],
      { problem: false },
      "t",
    );
    const examples = (envelope.get(404) as Json).content["application/json"].examples;
    assert.deepEqual(
      examples.NOT_FOUND.value,
      buildErrorBody({ statusCode: 404, code: "NOT_FOUND", message: "Not Found" }),
    );
    assert.ok(examples.GONE_ITEM);
    const problem = errorResponses([409], { problem: true, baseUrl: "https://e.com/p" }, "t");
    assert.deepEqual(
      (problem.get(409) as Json).content["application/problem+json"].examples.CONFLICT.value,
      buildProblemDetails({
        type: "https://e.com/p/conflict",
        status: 409,
        code: "CONFLICT",
        detail: "Conflict",
        instance: "/",
      }),
    );
  });

  it("rejects statuses that are not errors", () => {
    assert.throws(() => errorResponses([302], { problem: false }, "Deco"), /Deco: `status`/);
  });
});
