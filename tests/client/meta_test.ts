import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  hasFieldSelection,
  hasFilters,
  hasRateLimit,
  hasResponseTime,
  hasSort,
  isDeprecated,
  isPaginated,
} from "../../client/meta.ts";
import { cursor, fullMeta, nonObjects, offset } from "./_fixtures.ts";

/** Each meta guard, the field it checks, values it accepts and values it rejects there. */
const cases: {
  guard: (meta: unknown) => boolean;
  field: string;
  good: unknown[];
  bad: unknown[];
}[] = [
  {
    guard: isPaginated,
    field: "pagination",
    good: [offset, cursor, { ...offset, type: undefined, links: undefined }],
    bad: [{}, { ...offset, type: "cursor" }, { ...cursor, type: "offset" }, {
      ...offset,
      hasNext: 1,
    }],
  },
  {
    guard: isDeprecated,
    field: "deprecation",
    good: [{ deprecated: true }, {
      deprecated: true,
      since: "a",
      sunset: "b",
      message: "c",
      link: "d",
    }],
    bad: [{ deprecated: false }, { deprecated: "true" }, { deprecated: true, sunset: 1 }, {
      deprecated: true,
      link: null,
    }],
  },
  {
    guard: hasResponseTime,
    field: "responseTime",
    good: [0, 0.01, 12.5, 60_000],
    bad: ["12", {}, -1, -0.01, NaN, Infinity, -Infinity],
  },
  {
    guard: hasSort,
    field: "sort",
    good: [{ field: "a", order: "asc" }, { field: "", order: "desc" }],
    bad: [{ field: "a" }, { field: "a", order: "ASC" }, { field: 1, order: "asc" }, "a:asc"],
  },
  {
    guard: hasFilters,
    field: "filters",
    good: [{}, { status: "open", tags: ["a"] }],
    bad: ["status=open", ["status"]],
  },
  {
    guard: hasFieldSelection,
    field: "fields",
    good: [["id"], ["id", "name"], []],
    bad: ["id", ["id", 1], [null], {}],
  },
  {
    guard: hasRateLimit,
    field: "rateLimit",
    good: [{ limit: 10, remaining: 0, reset: 30 }, {
      limit: 10,
      remaining: 0,
      reset: 30,
      retryAfter: 30,
    }],
    bad: [{ limit: 10, remaining: 0 }, { limit: "10", remaining: 0, reset: 1 }, {
      limit: 10,
      remaining: 0,
      reset: 1,
      retryAfter: "1",
    }],
  },
];

describe("hasRateLimit: the numbers the server sends", () => {
  const rate = { limit: 10, remaining: 0, reset: 30, retryAfter: 30 };

  it("accepts non-negative safe integers, 0 and Number.MAX_SAFE_INTEGER included", () => {
    for (const value of [0, 1, Number.MAX_SAFE_INTEGER]) {
      for (const key of Object.keys(rate)) {
        assert.equal(
          hasRateLimit({ rateLimit: { ...rate, [key]: value } }),
          true,
          `${key} ${value}`,
        );
      }
    }
  });

  it("rejects a negative, fractional, unsafe or infinite count or wait", () => {
    // `retryAfter: 1e308` reached `setTimeout(1e308 * 1000)`: Infinity, fired at once.
    for (const value of [-5, -1, 1.5, 2 ** 53, 1e308, -1e308, Infinity, NaN]) {
      for (const key of Object.keys(rate)) {
        assert.equal(
          hasRateLimit({ rateLimit: { ...rate, [key]: value } }),
          false,
          `${key} ${value}`,
        );
      }
    }
  });
});

for (const { guard, field, good, bad } of cases) {
  describe(guard.name, () => {
    it("accepts a meta whose field is well-formed", () => {
      assert.equal(guard(fullMeta), true);
      for (const value of good) {
        assert.equal(guard({ [field]: value }), true, JSON.stringify(value));
      }
    });

    it("rejects a meta whose field is malformed or missing", () => {
      for (const value of [...bad, null, true, "x"]) {
        assert.equal(guard({ ...fullMeta, [field]: value }), false, JSON.stringify(value));
      }
      assert.equal(guard({ ...fullMeta, [field]: undefined }), false);
      assert.equal(guard({}), false);
    });

    it("returns false for undefined and any non-object", () => {
      for (const value of nonObjects) assert.equal(guard(value), false, String(value));
    });

    it("looks only at its own field", () => {
      const meta = { ...fullMeta, message: 1, responseTime: "x", pagination: null, traceId: {} };
      const own = (fullMeta as Record<string, unknown>)[field];
      assert.equal(guard({ ...meta, [field]: own }), true);
    });
  });
}
