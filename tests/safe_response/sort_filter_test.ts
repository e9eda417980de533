import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { runInNewContext } from "node:vm";
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

  it("refuses what JSON would not send field by field: arrays, class instances, toJSON", () => {
    class Sort {
      field = "a";
      order = "asc";
    }
    const refused = [
      Object.assign([], { field: "a", order: "asc" }), // sent as []
      Object.assign(new Date(0), { field: "a", order: "asc" }), // sent as a string
      new Sort(),
      { field: "a", order: "asc", toJSON: () => [] },
    ];
    for (const value of refused) assert.equal(isSortInfo(value), false, String(value));
    const bare = Object.assign(Object.create(null), { field: "a", order: "desc" });
    assert.equal(isSortInfo(bare), true);
    assert.equal(isSortInfo(runInNewContext('({ field: "a", order: "asc" })')), true);
  });

  it("accepts only plain objects as filter maps", () => {
    const refused = [
      new Date(0), // sent as a string
      new Map([["a", 1]]), // sent as {}
      new URLSearchParams("a=1"), // sent as {}
      Object.assign([], { a: 1 }),
      { a: 1, toJSON: () => "a" },
    ];
    for (const value of refused) assert.equal(isFilterMap(value), false, String(value));
    assert.equal(isFilterMap(Object.assign(Object.create(null), { a: 1 })), true);
    assert.equal(isFilterMap(runInNewContext("({ a: 1 })")), true);
  });

  it("refuses, never throws on, a value that throws when read", () => {
    const { proxy, revoke } = Proxy.revocable({ field: "a", order: "asc" }, {});
    revoke();
    const hostile = {
      get field(): string {
        throw new Error("getter");
      },
      order: "asc",
    };
    assert.equal(isSortInfo(proxy), false);
    assert.equal(isSortInfo(hostile), false);
    assert.equal(isFilterMap(proxy), false);
  });
});
