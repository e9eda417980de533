import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, Module, Post } from "@nestjs/common";
import type {
  CursorPaginationQuery,
  OffsetPaginationQuery,
} from "../../../safe_response/pagination_query.ts";
import { SafeResponseModule } from "../../../safe_response/nest/safe_response.module.ts";
import {
  CursorPaginated,
  Deprecated,
  FieldSelection,
  Paginated,
  PaginationQuery,
  ProblemType,
  RawResponse,
  ResponseMessage,
  SafeResponse,
  SuccessCode,
} from "../../../safe_response/nest/safe_response.decorators.ts";
import { readRouteOptions } from "../../../safe_response/_route_metadata.ts";
import { ADAPTERS, boot, CapturingLogger, getJson } from "./helpers.ts";

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
    assert.throws(() => FieldSelection({ separator: "" }), /FieldSelection options\.separator/);
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

  it("read a class-level Deprecated and ProblemType, and FieldSelection's options", () => {
    @Controller("legacy")
    @Deprecated({ sunset: "2027-06-30T12:00:00Z" })
    @ProblemType("https://errors.example.com/legacy")
    class Legacy {
      @Get()
      @FieldSelection({ queryParam: "select", maxDepth: 1 })
      list() {}
    }
    const options = readRouteOptions(Legacy, Legacy.prototype.list);
    assert.deepEqual(options.deprecation?.meta, {
      deprecated: true,
      sunset: "2027-06-30T12:00:00.000Z",
    });
    assert.deepEqual(options.deprecation?.headers, [
      ["Deprecation", "@0"],
      ["Sunset", "Wed, 30 Jun 2027 12:00:00 GMT"],
    ]);
    assert.equal(options.problemType, "https://errors.example.com/legacy");
    assert.deepEqual(options.fieldSelection, { queryParam: "select", maxDepth: 1 });
  });
});

/** What each handler was given, by route. */
const seen = new Map<string, unknown[]>();
const see = (route: string, value: unknown) => seen.set(route, [...seen.get(route) ?? [], value]);

@Controller("pq")
class PagingController {
  @Get("offset")
  @Paginated({ maxLimit: 5, links: true })
  offset(@PaginationQuery() query: OffsetPaginationQuery) {
    see("offset", query);
    return { data: [query.page], total: 42, page: query.page, limit: query.limit! };
  }

  @Get("cursor")
  @CursorPaginated({ maxLimit: 5, defaultLimit: 2 })
  cursor(@PaginationQuery() query: CursorPaginationQuery) {
    see("cursor", query);
    return { data: [], nextCursor: null, hasMore: false, limit: query.limit! };
  }

  @Get("unpaginated")
  unpaginated(@PaginationQuery() query: OffsetPaginationQuery) {
    return query;
  }
}

@Module({ imports: [SafeResponseModule.register()], controllers: [PagingController] })
class PagingModule {}

for (const adapter of ADAPTERS) {
  describe(`PaginationQuery() over HTTP (${adapter})`, () => {
    it("gives the handler the parsed, clamped query, refuses a bad one before it runs", async () => {
      const logger = new CapturingLogger();
      const { url, close } = await boot(PagingModule, adapter, { logger });
      try {
        seen.clear();
        const { body } = await getJson(url, "/pq/offset?page=2&limit=1000000&q=x");
        assert.deepEqual(seen.get("offset"), [{ kind: "offset", page: 2, limit: 5 }]);
        const pagination = (body.meta as { pagination: Record<string, unknown> }).pagination;
        assert.equal(pagination.limit, 5);
        assert.equal(
          (pagination.links as Record<string, unknown>).next,
          "/pq/offset?page=3&limit=5&q=x",
        );
        await getJson(url, "/pq/cursor?cursor=40");
        assert.deepEqual(seen.get("cursor"), [{ kind: "cursor", cursor: "40", limit: 2 }]);
        seen.clear();
        const bad: Array<[string, string]> = [
          ["/pq/offset?limit=0", "limit"],
          ["/pq/offset?page=9007199254740993", "page"],
          ["/pq/cursor?limit=1e309", "limit"],
          [`/pq/cursor?cursor=${"c".repeat(10 * 1024)}`, "cursor"],
        ];
        for (const [path, parameter] of bad) {
          const { status, body } = await getJson(url, path);
          const error = body.error as { code: string; message: string };
          assert.equal(status, 400, path.slice(0, 40));
          assert.equal(error.code, "INVALID_PAGINATION_QUERY");
          assert.match(error.message, new RegExp(`^Query parameter \`${parameter}\` `));
        }
        assert.equal(seen.size, 0, "a handler ran");
        const misuse = await getJson(url, "/pq/unpaginated?page=2");
        assert.equal(misuse.status, 500);
        assert.equal(
          logger.find("error", "PagingController.unpaginated: the pagination query of a route")
            .length,
          1,
        );
      } finally {
        await close();
      }
    });
  });
}
