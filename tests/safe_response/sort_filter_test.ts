import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isFilterMap, isSortInfo } from "../../safe_response/sort_filter.ts";

describe("sort and filter shapes", () => {
  it("accepts { field, order } with asc or desc only", () => {
    assert.equal(isSortInfo({ field: "a", order: "asc" }), true);
    assert.equal(isSortInfo({ field: "a", order: "up" }), false);
    assert.equal(isSortInfo(null), false);
  });

  it("accepts non-array objects as filter maps", () => {
    assert.equal(isFilterMap({}), true);
    assert.equal(isFilterMap([]), false);
    assert.equal(isFilterMap("a"), false);
  });
});
