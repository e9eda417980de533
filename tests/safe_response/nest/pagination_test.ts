import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Controller, Get, Module, Query } from "@nestjs/common";
import {
  CursorPaginated,
  FilterMeta,
  Paginated,
  SafeResponseModule,
  SortMeta,
} from "../../../safe_response/nest/mod.ts";
import {
  SafeCursorPaginatedEndpoint,
  SafePaginatedEndpoint,
} from "../../../safe_response/openapi/mod.ts";
import { ADAPTERS, boot, CapturingLogger, getJson } from "./helpers.ts";

const ITEMS = Array.from({ length: 42 }, (_, index) => `item-${index + 1}`);

@Controller("pg")
class PagingController {
  @Get("offset")
  @Paginated({ maxLimit: 20, links: true })
  offset(@Query("page") page = "1", @Query("limit") limit = "10") {
    const size = Math.min(Number(limit), 20);
    const start = (Number(page) - 1) * size;
    return {
      data: ITEMS.slice(start, start + size),
      total: ITEMS.length,
      page: Number(page),
      limit: Number(limit),
    };
  }

  @Get("overflow")
  @Paginated({ maxLimit: 5 })
  overflow() {
    return { data: ITEMS.slice(0, 8), total: 42, page: 1, limit: 8 };
  }

  @Get("nolinks")
  @Paginated()
  nolinks() {
    return { data: [], total: 0, page: 1, limit: 10 };
  }

  @Get("cursor")
  @CursorPaginated({ links: true, maxLimit: 3 })
  cursor(@Query("cursor") cursor?: string) {
    return {
      data: ["x", "y", "z"],
      nextCursor: "c:next/1",
      previousCursor: cursor ?? null,
      hasMore: true,
      limit: 50,
      totalCount: 99,
    };
  }

  @Get("sorted")
  @Paginated()
  @SortMeta()
  @FilterMeta()
  sorted() {
    return {
      data: [1, 2],
      total: 2,
      page: 1,
      limit: 10,
      sort: { field: "name", order: "desc" },
      filters: { status: "active" },
    };
  }

  @Get("plain-sorted")
  @SortMeta()
  plainSorted() {
    return { data: ["a"], sort: { field: "id", order: "asc" } };
  }

  @Get("mismatch")
  @Paginated()
  @SortMeta()
  @FilterMeta()
  mismatch() {
    return ["not", "paginated"];
  }

  @Get("endpoint")
  @SafePaginatedEndpoint(Object, { maxLimit: 2, links: true, sort: true, message: "Listed" })
  endpoint() {
    return { data: ["a", "b"], total: 4, page: 2, limit: 2, sort: { field: "a", order: "asc" } };
  }

  @Get("cursor-endpoint")
  @SafeCursorPaginatedEndpoint(Object, { filter: true })
  cursorEndpoint() {
    return { data: [], nextCursor: null, hasMore: false, limit: 10, filters: { q: "x" } };
  }
}

@Module({ imports: [SafeResponseModule.register()], controllers: [PagingController] })
class PagingModule {}

@Module({
  imports: [SafeResponseModule.register({ suppressWarnings: true })],
  controllers: [PagingController],
})
class QuietModule {}

for (const adapter of ADAPTERS) {
  describe(`pagination, sort and filter meta (${adapter})`, () => {
    it("computes offset meta with relative links that keep other query parameters", async () => {
      const { url, close } = await boot(PagingModule, adapter);
      try {
        const { body } = await getJson(url, "/pg/offset?q=a%20b%26c&page=2&limit=10&tag=x&tag=y", {
          headers: { host: "evil.example.com" },
        });
        assert.deepEqual(body.data, ITEMS.slice(10, 20));
        assert.deepEqual((body.meta as Record<string, unknown>).pagination, {
          type: "offset",
          page: 2,
          limit: 10,
          total: 42,
          totalPages: 5,
          hasNext: true,
          hasPrev: true,
          links: {
            self: "/pg/offset?q=a+b%26c&page=2&limit=10&tag=x&tag=y",
            first: "/pg/offset?q=a+b%26c&page=1&limit=10&tag=x&tag=y",
            prev: "/pg/offset?q=a+b%26c&page=1&limit=10&tag=x&tag=y",
            next: "/pg/offset?q=a+b%26c&page=3&limit=10&tag=x&tag=y",
            last: "/pg/offset?q=a+b%26c&page=5&limit=10&tag=x&tag=y",
          },
        });
        const clamped = await getJson(url, "/pg/offset?limit=500");
        const pagination =
          (clamped.body.meta as { pagination: Record<string, unknown> }).pagination;
        assert.equal(pagination.limit, 20);
        assert.equal(pagination.totalPages, 3);
        assert.equal(pagination.hasPrev, false);
        assert.equal((pagination.links as { next: string }).next, "/pg/offset?limit=20&page=2");
        assert.equal((pagination.links as { prev: null }).prev, null);
        const none = await getJson(url, "/pg/nolinks");
        assert.deepEqual((none.body.meta as { pagination: unknown }).pagination, {
          type: "offset",
          page: 1,
          limit: 10,
          total: 0,
          totalPages: 0,
          hasNext: false,
          hasPrev: false,
        });
      } finally {
        await close();
      }
    });

    it("computes cursor meta with cursor links and the clamped limit", async () => {
      const { url, close } = await boot(PagingModule, adapter);
      try {
        const { body } = await getJson(url, "/pg/cursor?cursor=c%3Aprev&q=1");
        assert.deepEqual(body.meta, {
          pagination: {
            type: "cursor",
            nextCursor: "c:next/1",
            previousCursor: "c:prev",
            hasMore: true,
            limit: 3,
            totalCount: 99,
            links: {
              self: "/pg/cursor?cursor=c%3Aprev&q=1&limit=3",
              first: "/pg/cursor?q=1&limit=3",
              prev: "/pg/cursor?cursor=c%3Aprev&q=1&limit=3",
              next: "/pg/cursor?cursor=c%3Anext%2F1&q=1&limit=3",
              last: null,
            },
          },
        });
      } finally {
        await close();
      }
    });

    it("adds sort and filter meta, on paginated and plain routes and through the composites", async () => {
      const { url, close } = await boot(PagingModule, adapter);
      try {
        const sorted = await getJson(url, "/pg/sorted");
        assert.deepEqual(sorted.body.data, [1, 2]);
        const meta = sorted.body.meta as Record<string, unknown>;
        assert.deepEqual(meta.sort, { field: "name", order: "desc" });
        assert.deepEqual(meta.filters, { status: "active" });
        const plain = await getJson(url, "/pg/plain-sorted");
        assert.deepEqual(plain.body.data, ["a"]);
        assert.deepEqual(plain.body.meta, { sort: { field: "id", order: "asc" } });
        const endpoint = await getJson(url, "/pg/endpoint?page=2");
        const endpointMeta = endpoint.body.meta as Record<string, Record<string, unknown>>;
        assert.equal(endpointMeta.message as unknown, "Listed");
        assert.deepEqual(endpointMeta.sort, { field: "a", order: "asc" });
        assert.equal(endpointMeta.pagination.totalPages, 2);
        assert.equal((endpointMeta.pagination.links as { next: unknown }).next, null);
        const cursor = await getJson(url, "/pg/cursor-endpoint");
        assert.deepEqual((cursor.body.meta as Record<string, unknown>).filters, { q: "x" });
        assert.equal(
          (cursor.body.meta as Record<string, Record<string, unknown>>).pagination.links,
          undefined,
        );
      } finally {
        await close();
      }
    });

    it("passes mismatched shapes through as data and warns once per route", async () => {
      const logger = new CapturingLogger();
      const { url, close } = await boot(PagingModule, adapter, { logger });
      try {
        for (let round = 0; round < 3; round++) {
          const { body } = await getJson(url, "/pg/mismatch");
          assert.deepEqual(body.data, ["not", "paginated"]);
          assert.equal(body.meta, undefined);
        }
        assert.equal(
          logger.find("warn", "PagingController.mismatch: decorated for pagination").length,
          1,
        );
        assert.equal(
          logger.find("warn", "PagingController.mismatch: decorated for sort").length,
          1,
        );
        assert.equal(
          logger.find("warn", "PagingController.mismatch: decorated for filters").length,
          1,
        );
        await getJson(url, "/pg/overflow");
        await getJson(url, "/pg/overflow");
        const overflow = logger.find(
          "warn",
          "PagingController.overflow: the handler returned 8 items and limit 8 for a page size of 5",
        );
        assert.equal(overflow.length, 1);
      } finally {
        await close();
      }
    });

    it("stays silent with suppressWarnings", async () => {
      const logger = new CapturingLogger();
      const { url, close } = await boot(QuietModule, adapter, { logger });
      try {
        assert.deepEqual((await getJson(url, "/pg/mismatch")).body.data, ["not", "paginated"]);
        await getJson(url, "/pg/overflow");
        assert.equal(logger.entries.filter((entry) => entry.level === "warn").length, 0);
      } finally {
        await close();
      }
    });
  });
}
