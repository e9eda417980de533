/**
 * The pagination query over real HTTP (Express and Fastify, error envelopes
 * and problem details): `PaginationQuery()` gives the handler the parsed,
 * clamped and defaulted `page`/`cursor` and `limit`; a bad value is a 400
 * naming the parameter before the handler runs; meta reports the page size
 * the handler was given; a result whose numbers are not safe integers is a
 * logged 500, never plain data.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, Module, Query, type Type } from "@nestjs/common";
import type {
  CursorPaginationQuery,
  OffsetPaginationQuery,
} from "../../../safe_response/pagination_query.ts";
import {
  CursorPaginated,
  Paginated,
  PaginationQuery,
  SafeResponseModule,
  type SafeResponseModuleOptions,
} from "../../../safe_response/nest/mod.ts";
import { SafePaginatedEndpoint } from "../../../safe_response/openapi/mod.ts";
import { ADAPTERS, boot, CapturingLogger, getJson } from "./helpers.ts";

const ITEMS = Array.from({ length: 42 }, (_, index) => index + 1);

/** What each handler was called with, by route. */
const seen = new Map<string, unknown[]>();
const see = (route: string, value: unknown) => seen.set(route, [...seen.get(route) ?? [], value]);

@Controller("pq")
class PagingController {
  @Get("offset")
  @Paginated({ maxLimit: 5, links: true })
  offset(@PaginationQuery() query: OffsetPaginationQuery) {
    see("offset", query);
    const limit = query.limit!;
    const data = ITEMS.slice((query.page - 1) * limit, query.page * limit);
    return { data, total: ITEMS.length, page: query.page, limit };
  }

  @Get("cursor")
  @CursorPaginated({ maxLimit: 5, defaultLimit: 2 })
  cursor(@PaginationQuery() query: CursorPaginationQuery) {
    see("cursor", query);
    const start = query.cursor === undefined ? 0 : Number(query.cursor);
    const end = start + query.limit!;
    return {
      data: ITEMS.slice(start, end),
      nextCursor: end < ITEMS.length ? String(end) : null,
      hasMore: end < ITEMS.length,
      limit: query.limit!,
    };
  }

  /** Reads `limit` itself and returns that many items: more than it was given. */
  @Get("own-limit")
  @Paginated({ maxLimit: 5 })
  ownLimit(@Query("limit") limit = "3") {
    see("own-limit", limit);
    const size = Number(limit);
    return { data: ITEMS.slice(0, size), total: ITEMS.length, page: 1, limit: size };
  }

  /** No limits: the query is the handler's (today's behaviour); echoes `page`. */
  @Get("free")
  @Paginated()
  free(@Query("page") page = "1", @Query("limit") limit = "10") {
    see("free", { page, limit });
    return { data: [], total: 0, page: Number(page), limit: Number(limit) };
  }

  /** No limits, parsed query: validated, neither defaulted nor clamped. */
  @Get("free-parsed")
  @Paginated()
  freeParsed(@PaginationQuery() query: OffsetPaginationQuery) {
    see("free-parsed", query);
    return { data: [], total: 0, page: query.page, limit: query.limit ?? 7 };
  }

  /** The composite carries `defaultLimit` too. */
  @Get("endpoint")
  @SafePaginatedEndpoint(Object, { maxLimit: 4, defaultLimit: 3 })
  endpoint(@PaginationQuery() query: OffsetPaginationQuery) {
    see("endpoint", query);
    return { data: ITEMS.slice(0, query.limit), total: 42, page: query.page, limit: query.limit! };
  }

  /** `PaginationQuery()` on a route without pagination: a server bug. */
  @Get("unpaginated")
  unpaginated(@PaginationQuery() query: OffsetPaginationQuery) {
    return query;
  }

  /** A result whose `page` is not a safe integer. */
  @Get("unsafe")
  @Paginated()
  unsafe() {
    return { data: [1], total: 1, page: 2 ** 53 + 2, limit: 1 };
  }

  @Get("unsafe-cursor")
  @CursorPaginated()
  unsafeCursor() {
    return { data: [1], nextCursor: null, hasMore: false, limit: 1e309 };
  }
}

function appModule(options: SafeResponseModuleOptions): Type<unknown> {
  @Module({ imports: [SafeResponseModule.register(options)], controllers: [PagingController] })
  class PagingModule {}
  return PagingModule;
}

type Bag = Record<string, unknown>;
const paginationOf = (body: Bag) => (body.meta as { pagination: Bag }).pagination;

/** Requests answered 400 naming the parameter, whatever the route's handler. */
const BAD: ReadonlyArray<[string, "page" | "limit" | "cursor"]> = [
  ["/pq/offset?limit=-1", "limit"],
  ["/pq/offset?limit=0", "limit"],
  ["/pq/offset?limit=1e309", "limit"],
  ["/pq/offset?limit=2.5", "limit"],
  ["/pq/offset?limit=1&limit=2", "limit"],
  ["/pq/offset?page=9007199254740993", "page"],
  ["/pq/offset?page=0", "page"],
  ["/pq/cursor?limit=-1", "limit"],
  ["/pq/cursor?limit=1e309", "limit"],
  [`/pq/cursor?cursor=${"c".repeat(10 * 1024)}`, "cursor"],
  ["/pq/own-limit?limit=0", "limit"],
  ["/pq/own-limit?page=9007199254740993", "page"],
  ["/pq/free-parsed?limit=0", "limit"],
  ["/pq/free-parsed?page=9007199254740993", "page"],
];

for (const adapter of ADAPTERS) {
  for (const problem of [false, true]) {
    const mode = problem ? "problem details" : "envelope";
    describe(`pagination query (${adapter}, ${mode})`, () => {
      const options: SafeResponseModuleOptions = { problemDetails: problem };

      it("limit above maxLimit is clamped: the handler's items and the meta agree", async () => {
        const { url, close } = await boot(appModule(options), adapter);
        try {
          seen.clear();
          const { status, body } = await getJson(url, "/pq/offset?page=2&limit=1000000&q=x");
          assert.equal(status, 200);
          assert.deepEqual(seen.get("offset"), [{ kind: "offset", page: 2, limit: 5 }]);
          assert.deepEqual(body.data, [6, 7, 8, 9, 10]);
          const pagination = paginationOf(body);
          assert.equal(pagination.limit, 5);
          assert.equal(pagination.totalPages, 9);
          assert.equal((pagination.links as Bag).next, "/pq/offset?page=3&limit=5&q=x");
          const first = await getJson(url, "/pq/offset");
          assert.deepEqual(first.body.data, [1, 2, 3, 4, 5]); // default: maxLimit
          const cursor = await getJson(url, "/pq/cursor?cursor=40&limit=99");
          assert.deepEqual(cursor.body.data, [41, 42]);
          assert.equal(paginationOf(cursor.body).limit, 5);
          const start = await getJson(url, "/pq/cursor");
          assert.deepEqual(start.body.data, [1, 2]); // defaultLimit
          assert.deepEqual(seen.get("cursor"), [
            { kind: "cursor", cursor: "40", limit: 5 },
            { kind: "cursor", limit: 2 },
          ]);
        } finally {
          await close();
        }
      });

      it("bad page, limit or cursor: 400 naming the parameter, before the handler", async () => {
        const { url, close } = await boot(appModule(options), adapter);
        try {
          seen.clear();
          for (const [path, parameter] of BAD) {
            const { status, headers, body } = await getJson(url, path);
            const label = `${path.slice(0, 60)}: ${JSON.stringify(body).slice(0, 200)}`;
            assert.equal(status, 400, label);
            const message = problem ? body.detail : (body.error as Bag).message;
            const code = problem ? body.code : (body.error as Bag).code;
            assert.equal(code, "INVALID_PAGINATION_QUERY", label);
            assert.match(String(message), new RegExp(`^Query parameter \`${parameter}\` `), label);
            if (problem) {
              assert.match(headers.get("content-type") ?? "", /^application\/problem\+json/);
            }
          }
          assert.equal(seen.size, 0, `handlers ran: ${[...seen.keys()]}`);
        } finally {
          await close();
        }
      });
    });
  }

  describe(`pagination query and meta (${adapter})`, () => {
    it("more items or another limit than given: meta keeps the given limit, one warning", async () => {
      const logger = new CapturingLogger();
      const { url, close } = await boot(appModule({}), adapter, { logger });
      try {
        for (let round = 0; round < 2; round++) {
          const { status, body } = await getJson(url, "/pq/own-limit?limit=8");
          assert.equal(status, 200);
          assert.equal((body.data as unknown[]).length, 8);
          assert.equal(paginationOf(body).limit, 5);
          assert.equal(paginationOf(body).totalPages, 9);
        }
        const asked = await getJson(url, "/pq/own-limit?limit=2");
        assert.equal(paginationOf(asked.body).limit, 2);
        const other = await getJson(url, "/pq/own-limit"); // given 5 (maxLimit), returns limit 3
        assert.equal((other.body.data as unknown[]).length, 3);
        assert.equal(paginationOf(other.body).limit, 5);
        assert.equal(
          logger.find("warn", "PagingController.ownLimit: the handler returned").length,
          1,
        );
      } finally {
        await close();
      }
    });

    it("without maxLimit and defaultLimit the query is the handler's (today's behaviour)", async () => {
      const { url, close } = await boot(appModule({}), adapter);
      try {
        seen.clear();
        const { status, body } = await getJson(url, "/pq/free?page=3&limit=1000");
        assert.equal(status, 200);
        assert.deepEqual(seen.get("free"), [{ page: "3", limit: "1000" }]);
        assert.equal(paginationOf(body).limit, 1000);
        const odd = await getJson(url, "/pq/free?limit=%2B5&page=2.0"); // the parser refuses both
        assert.equal(odd.status, 200);
        assert.deepEqual(seen.get("free")?.[1], { page: "2.0", limit: "+5" });
        const parsed = await getJson(url, "/pq/free-parsed?limit=1000");
        assert.equal(paginationOf(parsed.body).limit, 1000);
        await getJson(url, "/pq/free-parsed");
        assert.deepEqual(seen.get("free-parsed"), [
          { kind: "offset", page: 1, limit: 1000 },
          { kind: "offset", page: 1 },
        ]);
      } finally {
        await close();
      }
    });

    it("the module's defaultLimit applies to routes without one, within their maxLimit", async () => {
      const { url, close } = await boot(appModule({ defaultLimit: 3 }), adapter);
      try {
        seen.clear();
        await getJson(url, "/pq/free-parsed");
        await getJson(url, "/pq/offset");
        await getJson(url, "/pq/cursor");
        await getJson(url, "/pq/endpoint?limit=9");
        assert.deepEqual(seen.get("free-parsed"), [{ kind: "offset", page: 1, limit: 3 }]);
        assert.deepEqual(seen.get("offset"), [{ kind: "offset", page: 1, limit: 3 }]);
        assert.deepEqual(seen.get("cursor"), [{ kind: "cursor", limit: 2 }]); // the route's own
        assert.deepEqual(seen.get("endpoint"), [{ kind: "offset", page: 1, limit: 4 }]);
        const small = await boot(appModule({ defaultLimit: 50 }), adapter);
        try {
          const { body } = await getJson(small.url, "/pq/offset");
          assert.equal(paginationOf(body).limit, 5); // clamped to the route's maxLimit
        } finally {
          await small.close();
        }
      } finally {
        await close();
      }
    });

    it("result numbers that are not safe integers, or PaginationQuery() without pagination: a logged 500", async () => {
      const logger = new CapturingLogger();
      const { url, close } = await boot(appModule({}), adapter, { logger });
      try {
        for (const path of ["/pq/unsafe", "/pq/unsafe-cursor", "/pq/free?page=9007199254740993"]) {
          const { status, body } = await getJson(url, path);
          assert.equal(status, 500, `${path}: ${JSON.stringify(body)}`);
          assert.equal((body.error as Bag).code, "INTERNAL_SERVER_ERROR");
          assert.equal(body.data, undefined);
        }
        assert.equal(logger.find("error", "PagingController.unsafe: ").length, 1);
        assert.equal(logger.find("error", "PagingController.unsafeCursor: ").length, 1);
        assert.equal(logger.find("error", "PagingController.free: ").length, 1);
        assert.deepEqual(logger.find("warn", "sent as plain data"), []);
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
