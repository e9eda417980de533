import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Get, Post } from "@nestjs/common";
import { endpointDecorators } from "../../safe_response/_route_decorators.ts";
import { combine, readRouteOptions } from "../../safe_response/_route_metadata.ts";

describe("endpointDecorators (the composites' runtime half)", () => {
  it("are what the composites (endpointDecorators) set", () => {
    class Routes {
      @Post()
      @combine(...endpointDecorators({
        statusCode: 200,
        pagination: { kind: "offset", maxLimit: 4, defaultLimit: 3, links: true },
        sort: true,
        message: "Listed",
        code: "LISTED",
        problemDetails: true,
      }))
      list() {}

      @Get()
      @combine(...endpointDecorators({
        statusCode: 202,
        pagination: { kind: "cursor", linkHeader: "only" },
        filter: true,
        deprecated: {},
      }))
      feed() {}
    }
    const list = readRouteOptions(Routes, Routes.prototype.list);
    assert.equal(list.raw, false);
    assert.equal(list.statusCode, 200); // not a POST's 201
    assert.deepEqual(list.pagination, {
      kind: "offset",
      maxLimit: 4,
      defaultLimit: 3,
      links: true,
    });
    assert.equal(list.sort, true);
    assert.equal(list.message, "Listed");
    assert.equal(list.successCode, "LISTED");
    assert.equal(list.problemDetails, true);
    const feed = readRouteOptions(Routes, Routes.prototype.feed);
    assert.equal(feed.statusCode, 202);
    assert.equal(feed.pagination?.kind, "cursor");
    assert.equal(feed.linkHeader, "only");
    assert.equal(feed.filter, true);
    assert.equal(feed.problemDetails, false);
    assert.deepEqual(feed.deprecation?.meta, { deprecated: true });
  });
});
