/**
 * The swagger metadata keys `./safe-response/nest` writes without importing
 * `@nestjs/swagger`, pinned against the installed package's `DECORATORS`: a
 * swagger release that renames one fails here.
 */
import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Get } from "@nestjs/common";
import { DECORATORS } from "@nestjs/swagger";
import {
  markDeprecatedOperation,
  markExtension,
  SWAGGER_METADATA,
} from "../../../safe_response/nest/_swagger_metadata.ts";

describe("swagger metadata by key", () => {
  it("uses the installed @nestjs/swagger's keys", () => {
    assert.equal(SWAGGER_METADATA.operation, DECORATORS.API_OPERATION);
    assert.equal(SWAGGER_METADATA.extension, DECORATORS.API_EXTENSION);
    assert.equal(SWAGGER_METADATA.response, DECORATORS.API_RESPONSE);
    assert.equal(SWAGGER_METADATA.parameters, DECORATORS.API_PARAMETERS);
  });

  it("merges deprecated into the operation and keeps existing extensions", () => {
    class Routes {
      list() {}
    }
    const descriptor = Object.getOwnPropertyDescriptor(Routes.prototype, "list")!;
    Get()(Routes.prototype, "list", descriptor);
    Reflect.defineMetadata(DECORATORS.API_OPERATION, { summary: "List" }, Routes.prototype.list);
    markDeprecatedOperation()(Routes);
    markExtension("x-a", 1)(Routes.prototype, "list", descriptor);
    markExtension("x-a", 2)(Routes.prototype, "list", descriptor);
    assert.deepEqual(Reflect.getMetadata(DECORATORS.API_OPERATION, Routes.prototype.list), {
      summary: "List",
      deprecated: true,
    });
    assert.deepEqual(Reflect.getMetadata(DECORATORS.API_EXTENSION, Routes.prototype.list), {
      "x-a": 1,
    });
  });
});
