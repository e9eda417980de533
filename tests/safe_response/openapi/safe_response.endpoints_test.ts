import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DECORATORS } from "@nestjs/swagger";
import {
  SafeCursorPaginatedEndpoint,
  SafeEndpoint,
  SafePaginatedEndpoint,
} from "../../../safe_response/openapi/safe_response.endpoints.ts";

class Dto {}
const responsesOf = (decorator: MethodDecorator) => {
  class Routes {
    get() {}
  }
  decorator(Routes.prototype, "get", Object.getOwnPropertyDescriptor(Routes.prototype, "get")!);
  return Reflect.getMetadata(DECORATORS.API_RESPONSE, Routes.prototype.get);
};

describe("safe_response.endpoints", () => {
  it("SafeEndpoint documents the success and the listed errors together", () => {
    const responses = responsesOf(SafeEndpoint(Dto, { errors: [404] }));
    assert.deepEqual(Object.keys(responses).sort(), ["200", "404"]);
    assert.ok(responses["404"].content["application/json"]);
  });

  it("problemDetails documents the errors as application/problem+json", () => {
    const responses = responsesOf(SafeEndpoint(Dto, { errors: [404], problemDetails: true }));
    assert.deepEqual(Object.keys(responses["404"].content), ["application/problem+json"]);
  });

  it("the paginated endpoints document their pagination meta", () => {
    assert.match(
      JSON.stringify(responsesOf(SafePaginatedEndpoint(Dto))["200"]),
      /schemas\/SafePaginationMeta"/,
    );
    assert.match(
      JSON.stringify(responsesOf(SafeCursorPaginatedEndpoint(Dto))["200"]),
      /schemas\/SafeCursorPaginationMeta"/,
    );
  });

  it("rejects a status outside 100-599, naming the decorator", () => {
    assert.throws(() => SafeEndpoint(Dto, { statusCode: 700 }), /SafeEndpoint/);
  });
});
