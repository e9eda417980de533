import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get } from "@nestjs/common";
import { DECORATORS } from "@nestjs/swagger";
import * as openapi from "../../../safe_response/openapi/mod.ts";
import {
  ApiSafeCatalogErrors,
  ApiSafeErrorResponse,
  ApiSafeResponse,
  SafeEndpoint,
} from "../../../safe_response/openapi/mod.ts";
import { defineErrors } from "../../../safe_response/mod.ts";

describe("./safe-response/openapi decorators", () => {
  it("document responses through @nestjs/swagger", () => {
    class Dto {}
    const Errors = defineErrors({ TAKEN: { status: 409, message: "Taken" } });
    @Controller("d")
    class Routes {
      @Get()
      @ApiSafeResponse(Dto)
      @ApiSafeErrorResponse(404)
      @ApiSafeCatalogErrors(Errors, ["TAKEN"])
      get() {}
    }
    const responses = Reflect.getMetadata(DECORATORS.API_RESPONSE, Routes.prototype.get);
    assert.deepEqual(Object.keys(responses).sort(), ["200", "404", "409"]);
  });

  it("no longer exports PROBLEM_TYPE_EXTENSION (removed from the public surface in 0.2.0)", () => {
    assert.equal("PROBLEM_TYPE_EXTENSION" in openapi, false);
  });

  it("ApiSafeCatalogErrors documents a catalog entry's description", () => {
    const Errors = defineErrors({
      TAKEN: { status: 409, message: "Taken", description: "The email is registered" },
      GONE: { status: 410, message: "Gone" },
    });
    @Controller("d")
    class Routes {
      @Get()
      @ApiSafeCatalogErrors(Errors, ["TAKEN", "GONE"])
      get() {}
    }
    const responses = Reflect.getMetadata(DECORATORS.API_RESPONSE, Routes.prototype.get);
    assert.equal(responses["409"].description, "The email is registered");
    assert.equal(responses["410"].description, "Gone"); // the status title by default
  });

  it("composites validate their runtime options", () => {
    assert.throws(() => SafeEndpoint(Object, { statusCode: 700 }), /SafeEndpoint/);
    assert.throws(
      () => ApiSafeCatalogErrors(defineErrors({}), ["X" as never]),
      /not in the catalog/,
    );
  });
});
