import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isCursorPagination, isOffsetPagination } from "../../client/pagination.ts";
import { cursor, links, nonObjects, offset, withField } from "./_fixtures.ts";

describe("isOffsetPagination", () => {
  it("accepts offset pagination with or without type and links", () => {
    assert.equal(isOffsetPagination(offset), true);
    assert.equal(isOffsetPagination(withField(offset, "type", undefined)), true);
    assert.equal(isOffsetPagination(withField(offset, "links", undefined)), true);
  });

  it("rejects cursor pagination and non-objects", () => {
    for (const value of [...nonObjects, cursor]) assert.equal(isOffsetPagination(value), false);
  });

  it("checks every field", () => {
    for (const key of ["page", "limit", "total", "totalPages", "hasNext", "hasPrev"]) {
      assert.equal(isOffsetPagination(withField(offset, key, undefined)), false, key);
      assert.equal(isOffsetPagination(withField(offset, key, "1")), false, key);
    }
    assert.equal(isOffsetPagination(withField(offset, "type", "cursor")), false);
    assert.equal(isOffsetPagination(withField(offset, "type", null)), false);
    assert.equal(isOffsetPagination(withField(offset, "links", "/items")), false);
    assert.equal(isOffsetPagination(withField(offset, "links", { ...links, self: null })), false);
    assert.equal(isOffsetPagination(withField(offset, "links", { ...links, next: 2 })), false);
  });
});

describe("isCursorPagination", () => {
  it("accepts cursor pagination with or without the optional fields", () => {
    assert.equal(isCursorPagination(cursor), true);
    assert.equal(isCursorPagination(withField(cursor, "totalCount", undefined)), true);
    assert.equal(isCursorPagination(withField(cursor, "links", undefined)), true);
    assert.equal(isCursorPagination({ ...cursor, nextCursor: null, previousCursor: "p" }), true);
  });

  it("rejects offset pagination and non-objects", () => {
    for (const value of [...nonObjects, offset]) assert.equal(isCursorPagination(value), false);
  });

  it("checks every field, type included", () => {
    const wrong = {
      type: "offset",
      nextCursor: 7,
      previousCursor: false,
      hasMore: "yes",
      limit: "20",
    };
    for (const [key, value] of Object.entries(wrong)) {
      assert.equal(isCursorPagination(withField(cursor, key, undefined)), false, key);
      assert.equal(isCursorPagination(withField(cursor, key, value)), false, key);
    }
    assert.equal(isCursorPagination(withField(cursor, "hasMore", "true")), false);
    assert.equal(isCursorPagination(withField(cursor, "totalCount", "41")), false);
    assert.equal(
      isCursorPagination(withField(cursor, "links", { ...links, first: undefined })),
      false,
    );
  });
});
