import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { isPaginated } from "../../client/meta.ts";
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

  it("accepts links that are paths (what the server builds), refuses any link that may leave the API's origin", () => {
    const hostile = [
      "javascript:alert(document.cookie)",
      "https://evil.example/steal",
      "//evil.example/next",
      "/\\evil.example/next",
      // A URL parser removes tabs and line breaks first: each of these is `//evil.example`.
      "/\t/evil.example/next",
      "/\n/evil.example/next",
      "/\r\\evil.example/next",
      "data:text/html,<script>1</script>",
      "items?page=2",
      "",
    ];
    for (const link of hostile) {
      for (const key of ["self", "first", "prev", "next", "last"]) {
        const bad = { ...links, [key]: link };
        assert.equal(isOffsetPagination(withField(offset, "links", bad)), false, `${key}: ${link}`);
        assert.equal(isCursorPagination(withField(cursor, "links", bad)), false, `${key}: ${link}`);
      }
    }
    const paths = { ...links, self: "/items?q=a+b", next: "/v1/items?page=3&limit=10" };
    assert.equal(isOffsetPagination(withField(offset, "links", paths)), true);
  });
});

describe("isOffsetPagination: the numbers the server sends", () => {
  it("accepts pages from 1, a limit from 1, totals from 0, up to Number.MAX_SAFE_INTEGER", () => {
    const edges = { page: 1, limit: 1, total: 0, totalPages: 0 };
    assert.equal(isOffsetPagination({ ...offset, ...edges }), true);
    for (const key of Object.keys(edges)) {
      const big = withField(offset, key, Number.MAX_SAFE_INTEGER);
      assert.equal(isOffsetPagination(big), true, key);
    }
  });

  it("rejects a page or limit below 1, a negative total, a fraction or an unsafe number", () => {
    const bad: Array<[string, number]> = [
      ["page", -3],
      ["page", 0],
      ["page", 1.5],
      ["limit", 0],
      ["limit", 0.5],
      ["limit", -1],
      ["total", -1],
      ["total", 2.5],
      ["totalPages", 1e308],
      ["totalPages", -1],
      ["totalPages", 2 ** 53],
      ["page", Infinity],
    ];
    for (const [key, value] of bad) {
      assert.equal(isOffsetPagination(withField(offset, key, value)), false, `${key} ${value}`);
    }
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

describe("isCursorPagination: the numbers the server sends", () => {
  it("accepts a limit from 1 and a totalCount from 0, up to Number.MAX_SAFE_INTEGER", () => {
    assert.equal(isCursorPagination({ ...cursor, limit: 1, totalCount: 0 }), true);
    const big = Number.MAX_SAFE_INTEGER;
    assert.equal(isCursorPagination({ ...cursor, limit: big, totalCount: big }), true);
  });

  it("rejects a limit below 1, a negative totalCount, a fraction or an unsafe number", () => {
    const bad: Array<[string, number]> = [
      ["limit", -1],
      ["limit", 0],
      ["limit", 0.5],
      ["limit", 1e308],
      ["totalCount", -1],
      ["totalCount", 1.5],
      ["totalCount", 2 ** 53],
    ];
    for (const [key, value] of bad) {
      assert.equal(isCursorPagination(withField(cursor, key, value)), false, `${key} ${value}`);
    }
  });
});

describe("isCursorPagination's @example", () => {
  it("puts the cursor in a query the server reads back unchanged (encoded: + / = &)", () => {
    const source = readFileSync(new URL("../../client/pagination.ts", import.meta.url), "utf8");
    const doc = source.slice(0, source.indexOf("export function isCursorPagination"));
    const example = doc.slice(doc.lastIndexOf("```ts") + 5, doc.lastIndexOf("```"))
      .split("\n").map((line) => line.replace(/^\s*\* ?/, ""))
      .filter((line) => !/^(import|declare) /.test(line)).join("\n");
    const nextCursor = "+/+=&x=1";
    const printed: string[] = [];
    new Function("isPaginated", "isCursorPagination", "meta", "console", example)(
      isPaginated,
      isCursorPagination,
      { pagination: { ...cursor, nextCursor, hasMore: true } },
      { log: (line: string) => printed.push(line) },
    );
    assert.equal(printed.length, 1, example);
    const query = printed[0].slice(printed[0].indexOf("?"));
    assert.equal(new URLSearchParams(query).get("cursor"), nextCursor, printed[0]);
  });
});
