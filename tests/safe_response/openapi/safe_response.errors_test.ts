import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DECORATORS } from "@nestjs/swagger";
import { defineErrors } from "../../../safe_response/mod.ts";
import {
  ApiSafeCatalogError,
  ApiSafeCatalogErrors,
  ApiSafeErrorResponse,
  ApiSafeErrorResponses,
  ApiSafeProblemResponse,
} from "../../../safe_response/openapi/safe_response.errors.ts";

const responsesOf = (decorator: MethodDecorator) => {
  class Routes {
    get() {}
  }
  decorator(Routes.prototype, "get", Object.getOwnPropertyDescriptor(Routes.prototype, "get")!);
  return Reflect.getMetadata(DECORATORS.API_RESPONSE, Routes.prototype.get);
};

describe("safe_response.errors", () => {
  it("documents error envelopes with an example built by the body builder", () => {
    const responses = responsesOf(ApiSafeErrorResponses([404, 409]));
    assert.deepEqual(Object.keys(responses), ["404", "409"]);
    const content = responses["409"].content["application/json"];
    assert.deepEqual(content.schema, { $ref: "#/components/schemas/SafeErrorResponse" });
    assert.deepEqual(content.examples.CONFLICT.value, {
      success: false,
      statusCode: 409,
      error: { code: "CONFLICT", message: "Conflict" },
    });
    assert.equal(responsesOf(ApiSafeErrorResponse(404))["404"].description, "Not Found");
    // docs/migration.md: the one line that restores 0.14's description
    const restored = responsesOf(
      ApiSafeErrorResponse(404, { description: "Error response (404)" }),
    );
    assert.equal(restored["404"].description, "Error response (404)");
  });

  it("documents problem details as application/problem+json", () => {
    const responses = responsesOf(ApiSafeProblemResponse(422));
    const content = responses["422"].content["application/problem+json"];
    assert.deepEqual(content.schema, { $ref: "#/components/schemas/SafeProblemDetails" });
    assert.equal(content.examples.UNPROCESSABLE_ENTITY.value.status, 422);
  });
});

describe("seed 0.15: ApiSafeCatalogError (one key)", () => {
  it("documents one catalog error as ApiSafeCatalogErrors does", () => {
    const Errors = defineErrors({
      USER_NOT_FOUND: { status: 404, message: "User not found", description: "No such user" },
    });
    const one = responsesOf(ApiSafeCatalogError(Errors, "USER_NOT_FOUND"));
    assert.deepEqual(one, responsesOf(ApiSafeCatalogErrors(Errors, ["USER_NOT_FOUND"])));
    assert.equal(one["404"].description, "No such user");
    const problem = responsesOf(
      ApiSafeCatalogError(Errors, "USER_NOT_FOUND", { problemDetails: true }),
    );
    assert.deepEqual(Object.keys(problem["404"].content), ["application/problem+json"]);
    // @ts-expect-error: not a key of the catalog
    assert.throws(() => ApiSafeCatalogError(Errors, "NOPE"), /`NOPE` is not in the catalog/);
  });
});
