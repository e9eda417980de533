import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, Post } from "@nestjs/common";
import {
  CursorPaginated,
  Deprecated,
  FieldSelection,
  Paginated,
  ProblemType,
  RawResponse,
  readRouteOptions,
  ResponseMessage,
  SafeResponse,
  SuccessCode,
} from "../../../safe_response/nest/safe_response.decorators.ts";

describe("runtime decorators", () => {
  it("validate when applied", () => {
    assert.throws(() => Deprecated({ since: "not a date" }), /`since` must be a valid date/);
    assert.throws(() => Deprecated({ link: "<evil>" }), /`link`/);
    assert.throws(() => Paginated({ maxLimit: 0 }), /`maxLimit` must be a positive integer/);
    assert.throws(() => CursorPaginated({ maxLimit: 1.5 }), /CursorPaginated/);
    assert.throws(
      () => Paginated({ defaultLimit: 0 }),
      /`defaultLimit` must be a positive integer/,
    );
    assert.throws(
      () => CursorPaginated({ maxLimit: 5, defaultLimit: 6 }),
      /^TypeError: CursorPaginated: `defaultLimit` must be at most `maxLimit`$/,
    );
    assert.throws(
      () => Paginated({ linkHeader: "yes" as unknown as boolean }),
      /Paginated: `linkHeader` must be true, false or "only"/,
    );
    assert.throws(() => Deprecated({ sunsetLink: "<evil>" }), /`sunsetLink`/);
    assert.throws(() => SuccessCode(""), /non-empty string/);
    assert.throws(() => ResponseMessage(""), /non-empty string/);
    assert.throws(() => ProblemType("has space"), /must be a URI/);
    assert.throws(() => SafeResponse({ statusCode: 99 }), /`statusCode` must be an HTTP status/);
    assert.throws(() => FieldSelection({ maxDepth: 0 }), /maxDepth/);
    const onClass = SuccessCode("X") as unknown as ClassDecorator;
    assert.throws(() => onClass(class Nope {}), /methods only/);
  });

  it("are read back as the core's route options, the method over the class", () => {
    @Controller("r")
    @RawResponse()
    @ResponseMessage("Class")
    class Routes {
      @Post()
      @SafeResponse()
      @ResponseMessage("Method")
      @SuccessCode("MADE")
      @Paginated({ links: true })
      @Deprecated()
      @FieldSelection(false)
      create() {}

      @Get()
      @CursorPaginated({ linkHeader: "only" })
      list() {}
    }
    const create = readRouteOptions(Routes, Routes.prototype.create);
    assert.equal(create.route, "Routes.create");
    assert.equal(create.raw, false);
    assert.equal(create.statusCode, 200); // SafeResponse: 200 also for a POST
    assert.equal(create.message, "Method");
    assert.equal(create.successCode, "MADE");
    assert.deepEqual(create.pagination, { kind: "offset", links: true });
    assert.deepEqual(create.deprecation?.meta, { deprecated: true });
    assert.equal(create.fieldSelection, false);
    const list = readRouteOptions(Routes, Routes.prototype.list);
    assert.equal(list.raw, true);
    assert.equal(list.message, "Class");
    assert.equal(list.statusCode, 200);
    assert.equal(list.linkHeader, "only");
    assert.equal(create.linkHeader, undefined);
  });
});
