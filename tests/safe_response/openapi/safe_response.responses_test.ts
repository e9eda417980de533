import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DECORATORS } from "@nestjs/swagger";
import {
  ApiCursorPaginatedSafeResponse,
  ApiPaginatedSafeResponse,
  ApiSafeResponse,
} from "../../../safe_response/openapi/safe_response.responses.ts";

class Dto {}
const responsesOf = (decorator: MethodDecorator) => {
  class Routes {
    get() {}
  }
  const descriptor = Object.getOwnPropertyDescriptor(Routes.prototype, "get")!;
  decorator(Routes.prototype, "get", descriptor);
  return Reflect.getMetadata(DECORATORS.API_RESPONSE, Routes.prototype.get);
};
const schemaOf = (responses: Record<string, { content: Record<string, { schema: unknown }> }>) =>
  Object.values(responses)[0].content["application/json"].schema as {
    allOf: [{ $ref: string }, { properties: Record<string, unknown> }];
  };

describe("safe_response.responses", () => {
  it("ApiSafeResponse documents the envelope around the model at the given status", () => {
    const responses = responsesOf(ApiSafeResponse(Dto, { statusCode: 201, description: "made" }));
    assert.deepEqual(Object.keys(responses), ["201"]);
    assert.equal(responses["201"].description, "made");
    const schema = schemaOf(responses);
    assert.equal(schema.allOf[0].$ref, "#/components/schemas/SafeSuccessResponse");
    assert.deepEqual(schema.allOf[1].properties.data, { $ref: "#/components/schemas/Dto" });
  });

  it("the paginated variants document an array and their own pagination meta", () => {
    for (
      const [decorator, meta] of [
        [ApiPaginatedSafeResponse(Dto), "SafePaginationMeta"],
        [ApiCursorPaginatedSafeResponse(Dto), "SafeCursorPaginationMeta"],
      ] as const
    ) {
      const { properties } = schemaOf(responsesOf(decorator)).allOf[1];
      assert.deepEqual(properties.data, {
        type: "array",
        items: { $ref: "#/components/schemas/Dto" },
      });
      assert.match(JSON.stringify(properties.meta), new RegExp(`schemas/${meta}"`));
    }
  });

  it("a status without content (204, 205, 304) is documented without a body", () => {
    for (const status of [204, 205, 304]) {
      const responses = responsesOf(ApiSafeResponse(Dto, { statusCode: status }));
      assert.deepEqual(JSON.parse(JSON.stringify(responses[status])), {
        description: { 204: "No Content", 205: "Reset Content", 304: "Not Modified" }[status],
      });
    }
  });
});
