import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  buildCursorPaginationMeta,
  buildPaginationMeta,
  clampLimit,
  cursorPaginationLinks,
  isCursorPaginatedResult,
  isFilterMap,
  isPaginatedResult,
  isSortInfo,
  offsetPaginationLinks,
} from "../../safe_response/mod.ts";

describe("pagination meta", () => {
  it("computes totalPages, hasNext and hasPrev with the clamped limit", () => {
    assert.deepEqual(
      buildPaginationMeta({ data: [], total: 95, page: 3, limit: 500 }, { maxLimit: 20 }),
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
    assert.equal(isPaginatedResult({ data: [], total: 0, page: 1, limit: 1 }), true);
    assert.equal(isPaginatedResult({ data: [], total: 0, page: 0, limit: 1 }), false);
    assert.equal(isPaginatedResult({ data: [], total: 1.5, page: 1, limit: 1 }), false);
    assert.equal(isPaginatedResult({ data: {}, total: 0, page: 1, limit: 1 }), false);
    assert.equal(
      isCursorPaginatedResult({ data: [], nextCursor: null, hasMore: false, limit: 5 }),
      true,
    );
    assert.equal(
      isCursorPaginatedResult({ data: [], nextCursor: 3, hasMore: false, limit: 5 }),
      false,
    );
    assert.equal(
      isCursorPaginatedResult({ data: [], nextCursor: null, hasMore: "no", limit: 5 }),
      false,
    );
    assert.equal(isSortInfo({ field: "a", order: "desc" }), true);
    assert.equal(isSortInfo({ field: "a", order: "DESC" }), false);
    assert.equal(isFilterMap({}), true);
    assert.equal(isFilterMap(null), false);
  });
});

describe("pagination links", () => {
  it("are relative, keep other parameters, replace page and limit, and encode values", () => {
    const links = offsetPaginationLinks(
      "/api/items?name=%C3%A9t%C3%A9&page=9&limit=1&x=a%26b",
      2,
      10,
      3,
    );
    assert.deepEqual(links, {
      self: "/api/items?name=%C3%A9t%C3%A9&page=2&limit=10&x=a%26b",
      first: "/api/items?name=%C3%A9t%C3%A9&page=1&limit=10&x=a%26b",
      prev: "/api/items?name=%C3%A9t%C3%A9&page=1&limit=10&x=a%26b",
      next: "/api/items?name=%C3%A9t%C3%A9&page=3&limit=10&x=a%26b",
      last: "/api/items?name=%C3%A9t%C3%A9&page=3&limit=10&x=a%26b",
    });
  });

  it("never point at another origin", () => {
    const cases: Array<[string, string]> = [
      ["//evil.example/x?page=1", "/evil.example/x?page=1&limit=10"],
      ["http://evil.example/x?page=1", "/x?page=1&limit=10"],
      ["http://:99999/x?page=1", "/x?page=1&limit=10"],
      ["/.//evil.example/x", "/evil.example/x?page=1&limit=10"],
    ];
    for (const [target, expected] of cases) {
      assert.equal(offsetPaginationLinks(target, 1, 10, 1).self, expected, target);
    }
  });

  it("use cursors for cursor pagination", () => {
    assert.deepEqual(cursorPaginationLinks("/feed?cursor=old&f=1", 20, "n x", "p"), {
      self: "/feed?cursor=old&f=1&limit=20",
      first: "/feed?f=1&limit=20",
      prev: "/feed?cursor=p&f=1&limit=20",
      next: "/feed?cursor=n+x&f=1&limit=20",
      last: null,
    });
  });
});
