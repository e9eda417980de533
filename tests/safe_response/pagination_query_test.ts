/**
 * `parsePaginationQuery`: examples, the error it throws, and properties over
 * random queries (total: a parsed query or a `PaginationQueryError`, nothing
 * else; agrees with a BigInt oracle; never above `maxLimit`).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { resolveError } from "../../safe_response/error_resolution.ts";
import { MAX_CURSOR_LENGTH } from "../../safe_response/pagination_links.ts";
import {
  PaginationQueryError,
  type PaginationQueryOptions,
  parsePaginationQuery,
  readPaginationQuery,
} from "../../safe_response/pagination_query.ts";
import { resolvePagination } from "../../safe_response/pagination.ts";

const parse = (query: string, options: PaginationQueryOptions = {}) =>
  parsePaginationQuery(new URLSearchParams(query), options);

/** The parameter named by the `PaginationQueryError` that `run` throws. */
function refused(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof PaginationQueryError, String(error));
    return error.parameter;
  }
  assert.fail("no PaginationQueryError");
}

describe("parsePaginationQuery", () => {
  it("parses offset queries: page defaults to 1, limit is clamped and defaulted", () => {
    assert.deepEqual(parse("page=3&limit=20&q=x"), { kind: "offset", page: 3, limit: 20 });
    assert.deepEqual(parse(""), { kind: "offset", page: 1 });
    assert.deepEqual(parse("limit=1000000", { maxLimit: 50 }), {
      kind: "offset",
      page: 1,
      limit: 50,
    });
    assert.deepEqual(parse("", { maxLimit: 50 }), { kind: "offset", page: 1, limit: 50 });
    assert.deepEqual(parse("", { maxLimit: 50, defaultLimit: 10 }), {
      kind: "offset",
      page: 1,
      limit: 10,
    });
    assert.deepEqual(parse("limit=007"), { kind: "offset", page: 1, limit: 7 });
    assert.deepEqual(parse("page=9007199254740991"), {
      kind: "offset",
      page: Number.MAX_SAFE_INTEGER,
    });
  });

  it("parses cursor queries: an empty cursor is the first page", () => {
    assert.deepEqual(parse("cursor=abc&limit=5&page=x", { kind: "cursor" }), {
      kind: "cursor",
      cursor: "abc",
      limit: 5,
    });
    assert.deepEqual(parse("cursor=", { kind: "cursor", defaultLimit: 2 }), {
      kind: "cursor",
      limit: 2,
    });
    const longest = "c".repeat(MAX_CURSOR_LENGTH);
    assert.deepEqual(parse(`cursor=${longest}`, { kind: "cursor" }), {
      kind: "cursor",
      cursor: longest,
    });
  });

  it("reads parsed query objects (Express's req.query)", () => {
    assert.deepEqual(parsePaginationQuery({ page: "2", limit: "9" }, { maxLimit: 5 }), {
      kind: "offset",
      page: 2,
      limit: 5,
    });
    assert.equal(refused(() => parsePaginationQuery({ limit: ["1", "2"] })), "limit");
    assert.equal(refused(() => parsePaginationQuery({ page: { $gt: "1" } })), "page");
    assert.deepEqual(
      parsePaginationQuery({ page: 2, limit: 10 }),
      { kind: "offset", page: 2, limit: 10 },
      "numbers of a schema's coercion (Fastify's querystring schema)",
    );
    for (const limit of [0, -1, 2.5, NaN, Infinity, 2 ** 53, 5n]) {
      assert.equal(refused(() => parsePaginationQuery({ limit })), "limit", String(limit));
    }
    assert.equal(
      refused(() => parsePaginationQuery({ cursor: ["a"] }, { kind: "cursor" })),
      "cursor",
    );
    const inherited = Object.create({ page: "0" });
    assert.deepEqual(parsePaginationQuery(inherited), { kind: "offset", page: 1 });
  });

  it("refuses page and limit that are not integers from 1 to MAX_SAFE_INTEGER, and long cursors", () => {
    for (const value of ["-1", "0", "1e309", "1e3", "2.5", "", " 1", "+1", "0x10", "９", "NaN"]) {
      assert.equal(refused(() => parse(`limit=${encodeURIComponent(value)}`)), "limit", value);
      assert.equal(refused(() => parse(`page=${encodeURIComponent(value)}`)), "page", value);
    }
    assert.equal(refused(() => parse("page=9007199254740992")), "page");
    assert.equal(refused(() => parse("page=9007199254740993")), "page");
    assert.equal(refused(() => parse(`limit=${"9".repeat(10_000)}`)), "limit");
    assert.equal(refused(() => parse("limit=1&limit=1")), "limit");
    assert.equal(refused(() => parse("page=1&page=2")), "page");
    assert.equal(
      refused(() => parse(`cursor=${"c".repeat(MAX_CURSOR_LENGTH + 1)}`, { kind: "cursor" })),
      "cursor",
    );
    assert.equal(
      refused(() => parse(`cursor=${"c".repeat(10 * 1024)}`, { kind: "cursor" })),
      "cursor",
    );
    assert.equal(refused(() => parse("cursor=a&cursor=b", { kind: "cursor" })), "cursor");
    assert.equal(refused(() => parse("limit=0", { kind: "cursor", maxLimit: 5 })), "limit");
  });

  it("throws a branded 400 that error resolution sends with its message", () => {
    let error: unknown;
    try {
      parse("limit=1e309");
    } catch (thrown) {
      error = thrown;
    }
    assert.ok(error instanceof PaginationQueryError);
    assert.equal(error.status, 400);
    assert.deepEqual(resolveError(error), {
      statusCode: 400,
      code: "INVALID_PAGINATION_QUERY",
      message: "Query parameter `limit` must be an integer from 1 to 9007199254740991",
      unexpected: false,
    });
  });

  it("refuses invalid options with a TypeError", () => {
    assert.throws(() => parse("", { maxLimit: 0 }), TypeError);
    assert.throws(() => parse("", { defaultLimit: 1.5 }), TypeError);
    assert.throws(
      () => parse("", { maxLimit: 5, defaultLimit: 6 }),
      /`defaultLimit` must be at most/,
    );
    const loose = (options: object) => options as { kind?: "offset" };
    assert.throws(
      () => parse("cursor=abc", loose({ kind: "Cursor" })),
      /parsePaginationQuery: `kind` must be "offset" or "cursor"/,
    );
    assert.throws(() => parse("", loose({ maxLimt: 5 })), /unknown option `maxLimt`/);
    assert.throws(
      () => resolvePagination("pages" as "offset", {}, "route"),
      /route: `kind` must be "offset" or "cursor"/,
    );
  });
});

describe("readPaginationQuery", () => {
  it("reads a route's resolved setting as parsePaginationQuery reads the same options", () => {
    const setting = resolvePagination("cursor", { maxLimit: 50, defaultLimit: 20 }, "route");
    for (const query of ["", "cursor=abc&limit=500", "limit=7"]) {
      assert.deepEqual(
        readPaginationQuery(new URLSearchParams(query), setting),
        parse(query, { kind: "cursor", maxLimit: 50, defaultLimit: 20 }),
      );
    }
    assert.equal(
      refused(() => readPaginationQuery(new URLSearchParams("limit=0"), setting)),
      "limit",
    );
  });
});

describe("parsePaginationQuery: a defaultLimit without a maxLimit", () => {
  it("bounds the page size a request asks for to 100, or to defaultLimit when larger", () => {
    const huge = `limit=${Number.MAX_SAFE_INTEGER}`;
    assert.deepEqual(parse(huge, { kind: "cursor", defaultLimit: 20 }), {
      kind: "cursor",
      limit: 100,
    });
    assert.equal(parse(huge, { defaultLimit: 500 }).limit, 500);
    assert.equal(parse("limit=70", { defaultLimit: 20 }).limit, 70);
    assert.equal(parse(huge, { maxLimit: 1_000, defaultLimit: 20 }).limit, 1_000);
    assert.deepEqual(resolvePagination("offset", { defaultLimit: 20 }, "route"), {
      kind: "offset",
      maxLimit: 100,
      defaultLimit: 20,
      links: false,
    });
  });
});

describe("parsePaginationQuery properties", () => {
  const options = fc.record({
    kind: fc.constantFrom("offset" as const, "cursor" as const),
    maxLimit: fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }),
    defaultLimit: fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }),
  }).map((o) =>
    o.maxLimit !== undefined && o.defaultLimit !== undefined && o.defaultLimit > o.maxLimit
      ? { ...o, defaultLimit: o.maxLimit }
      : o
  );
  /** Values near the boundaries, digits, and anything. */
  const value = fc.oneof(
    fc.string(),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.stringMatching(/^[0-9]{1,20}$/),
    fc.bigInt({ min: -10n, max: 2n ** 54n }).map(String),
    fc.constantFrom("1e309", "9007199254740993", "9007199254740991", "0", "-1", "c".repeat(513)),
  );
  const query = fc.oneof(
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.array(fc.tuple(fc.constantFrom("page", "limit", "cursor", "q"), value), { maxLength: 5 })
      .map((pairs) => new URLSearchParams(pairs).toString()),
  );

  /** A decimal count from 1 to MAX_SAFE_INTEGER written in at most 16 digits. */
  const oracleCount = (text: string) =>
    /^[0-9]{1,16}$/.test(text) && BigInt(text) >= 1n &&
    BigInt(text) <= BigInt(Number.MAX_SAFE_INTEGER);

  it("is total: a parsed query or a PaginationQueryError, and agrees with the oracle", () => {
    fc.assert(
      fc.property(query, options, (text, opts) => {
        const params = new URLSearchParams(text);
        const one = (name: string) => {
          const all = params.getAll(name);
          return all.length > 1 ? null : all[0];
        };
        let parsed;
        try {
          parsed = parsePaginationQuery(params, opts);
        } catch (error) {
          assert.ok(error instanceof PaginationQueryError, String(error));
          assert.equal(error.status, 400);
          assert.ok(error.message.startsWith(`Query parameter \`${error.parameter}\` `));
          const raw = one(error.parameter);
          const bad = raw === null ||
            (error.parameter === "cursor"
              ? raw!.length > MAX_CURSOR_LENGTH
              : raw !== undefined && !oracleCount(raw));
          assert.ok(bad, `${error.parameter}=${raw} refused`);
          return;
        }
        const limit = one("limit");
        assert.ok(limit === undefined || oracleCount(limit!), `limit=${limit} accepted`);
        // A default page size without a largest one bounds it too: max(100, defaultLimit).
        const max = opts.maxLimit ??
          (opts.defaultLimit === undefined ? Infinity : Math.max(100, opts.defaultLimit));
        const expected = limit === undefined
          ? opts.defaultLimit ?? opts.maxLimit
          : Math.min(Number(limit), max);
        assert.equal(parsed.limit, expected);
        if (parsed.kind === "offset") {
          const page = one("page");
          assert.ok(page === undefined || oracleCount(page!), `page=${page} accepted`);
          assert.equal(parsed.page, page === undefined ? 1 : Number(page));
        } else {
          const cursor = one("cursor");
          assert.equal(parsed.cursor, cursor === "" ? undefined : cursor);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("is total over parsed query objects of any values", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom("page", "limit", "cursor", "q"), fc.anything()),
        options,
        (record, opts) => {
          try {
            const parsed = parsePaginationQuery(record, opts);
            if (parsed.limit !== undefined && opts.maxLimit !== undefined) {
              assert.ok(parsed.limit <= opts.maxLimit);
            }
          } catch (error) {
            assert.ok(error instanceof PaginationQueryError, String(error));
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
