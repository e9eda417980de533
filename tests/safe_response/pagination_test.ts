import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  buildCursorPaginationMeta,
  buildPaginationMeta,
  clampLimit,
  paginatedResultFault,
  resolvePagination,
} from "../../safe_response/pagination.ts";
import { isFilterMap, isSortInfo } from "../../safe_response/sort_filter.ts";

describe("pagination meta", () => {
  it("computes totalPages, hasNext and hasPrev with the page's own limit, else the one given", () => {
    assert.equal(
      buildPaginationMeta({ data: [], total: 95, page: 3, limit: 20 }, { limit: 5 }).limit,
      20,
    );
    assert.throws(() => buildPaginationMeta({ data: [], total: 95, page: 3 }), TypeError);
    assert.equal(paginatedResultFault("offset", { data: [], total: 95, page: 3 }), undefined);
    assert.equal(
      paginatedResultFault("offset", { data: [], total: 9, page: 3, limit: "9" }),
      "shape",
    );
    assert.deepEqual(
      buildPaginationMeta({ data: [], total: 95, page: 3 }, { limit: 20 }),
      {
        type: "offset",
        page: 3,
        limit: 20,
        total: 95,
        totalPages: 5,
        hasNext: true,
        hasPrev: true,
      },
    );
    const last = buildPaginationMeta({ data: [], total: 95, page: 5, limit: 20 });
    assert.equal(last.hasNext, false);
    assert.equal(clampLimit(10, 20), 10);
    assert.equal(clampLimit(30, 20), 20);
  });

  it("builds cursor meta with a null previous cursor by default", () => {
    assert.deepEqual(
      buildCursorPaginationMeta({ data: [1], nextCursor: "n", hasMore: true, limit: 1 }),
      {
        type: "cursor",
        nextCursor: "n",
        previousCursor: null,
        hasMore: true,
        limit: 1,
      },
    );
  });

  it("checks result shapes", () => {
    assert.equal(
      paginatedResultFault("offset", { data: [], total: 0, page: 1, limit: 1 }),
      undefined,
    );
    assert.equal(paginatedResultFault("offset", { data: [], total: 0, page: 0, limit: 1 }), "page");
    assert.equal(
      paginatedResultFault("offset", { data: [], total: 1.5, page: 1, limit: 1 }),
      "total",
    );
    assert.equal(
      paginatedResultFault("offset", { data: {}, total: 0, page: 1, limit: 1 }),
      "shape",
    );
    assert.equal(
      paginatedResultFault("cursor", { data: [], nextCursor: null, hasMore: false, limit: 5 }),
      undefined,
    );
    assert.equal(
      paginatedResultFault("cursor", { data: [], nextCursor: 3, hasMore: false, limit: 5 }),
      "shape",
    );
    assert.equal(
      paginatedResultFault("cursor", { data: [], nextCursor: null, hasMore: "no", limit: 5 }),
      "shape",
    );
    assert.equal(isSortInfo({ field: "a", order: "desc" }), true);
    assert.equal(isSortInfo({ field: "a", order: "DESC" }), false);
    assert.equal(isFilterMap({}), true);
    assert.equal(isFilterMap(null), false);
  });
});

describe("pagination links of a long path", () => {
  it("are built of a request path of at most 2,048 characters; a longer one gets none (each link would echo it)", () => {
    const at = (length: number) => `/${"p".repeat(length - 1)}?q=1`;
    const offset = (target: string) =>
      buildPaginationMeta({ data: [], total: 95, page: 2, limit: 20 }, { requestTarget: target });
    const cursor = (target: string) =>
      buildCursorPaginationMeta({ data: [], nextCursor: "n", hasMore: true, limit: 5 }, {
        requestTarget: target,
      });
    assert.equal(offset(at(2_048)).links?.next, `${at(2_048).split("?")[0]}?q=1&page=3&limit=20`);
    assert.ok(cursor(at(2_048)).links !== undefined);
    assert.equal(offset(at(2_049)).links, undefined);
    assert.equal(cursor(at(2_049)).links, undefined);
  });
});

describe("resolvePagination: unknown options", () => {
  it("refuses an unknown option, naming the caller, the option and the known ones", () => {
    assert.throws(
      () => resolvePagination("offset", { maxLimt: 100 } as never, "items"),
      /^TypeError: items: unknown option `maxLimt` \(known: maxLimit, defaultLimit, links\)$/,
    );
    assert.throws(
      () => resolvePagination("cursor", "20" as never, "items"),
      /^TypeError: items: options must be an object$/,
    );
    assert.deepEqual(resolvePagination("cursor", undefined as never, "items"), {
      kind: "cursor",
      links: false,
    });
  });

  it("accepts the further names its caller reads itself, and lists them", () => {
    const options = { maxLimit: 5, linkHeader: true } as never;
    assert.deepEqual(resolvePagination("offset", options, "Paginated", ["linkHeader"]), {
      kind: "offset",
      links: false,
      maxLimit: 5,
    });
    assert.throws(
      () => resolvePagination("offset", { linkHeadr: true } as never, "Paginated", ["linkHeader"]),
      /unknown option `linkHeadr` \(known: maxLimit, defaultLimit, links, linkHeader\)$/,
    );
  });
});
