import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { runInNewContext } from "node:vm";
import { isPlainObject } from "../../safe_response/_plain_object.ts";

describe("isPlainObject", () => {
  it("accepts object literals and null-prototype objects, of any realm", () => {
    for (const value of [{}, { a: 1 }, Object.create(null), runInNewContext("({ a: 1 })")]) {
      assert.equal(isPlainObject(value), true);
    }
  });

  it("refuses arrays, class instances, errors and primitives", () => {
    class Item {}
    const refused = [[], new Date(0), new Map(), new Item(), new Error("x"), null, "a", 1];
    for (const value of refused) assert.equal(isPlainObject(value), false, String(value));
  });

  it("refuses, never throws on, a revoked Proxy", () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    assert.equal(isPlainObject(proxy), false);
  });
});
