import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { flattenScopes, scopeSatisfies } from "../../api_keys/scopes.ts";

describe("scopes", () => {
  it("flattens to resource:level, deduped in first-seen order", () => {
    assert.deepEqual(
      flattenScopes([
        { resource: "orders", level: "write" },
        { resource: "a.b-c_1", level: "read" },
        { resource: "orders", level: "write" },
      ]),
      ["orders:write", "a.b-c_1:read"],
    );
  });

  it("rejects bad resources and levels with a TypeError", () => {
    for (const resource of ["Orders", "or:ders", "", "ä", "a b"]) {
      assert.throws(() => flattenScopes([{ resource, level: "read" }]), /scope resource/);
    }
    assert.throws(() => flattenScopes([{ resource: "a", level: "admin" as "read" }]), /level/);
  });

  it("seed 0.4: a resource is 1 to 128 characters", () => {
    const longest = "r".repeat(128);
    assert.deepEqual(flattenScopes([{ resource: longest, level: "read" }]), [`${longest}:read`]);
    assert.throws(
      () => flattenScopes([{ resource: "r".repeat(129), level: "read" }]),
      /scope resource "r{10}.*" must be at most 128 characters/,
    );
  });

  it("write implies read; resources match exactly", () => {
    assert.equal(scopeSatisfies(["orders:write"], "orders", "read"), true);
    assert.equal(scopeSatisfies(["orders:write"], "orders", "write"), true);
    assert.equal(scopeSatisfies(["orders:read"], "orders", "read"), true);
    assert.equal(scopeSatisfies(["orders:read"], "orders", "write"), false);
    assert.equal(scopeSatisfies(["orders:write"], "order", "read"), false);
    assert.equal(scopeSatisfies(["orders.items:write"], "orders", "read"), false);
    assert.equal(scopeSatisfies([], "orders", "read"), false);
  });

  it("throws a TypeError for an unknown required level instead of granting anything", () => {
    for (const level of ["Write", "admin", "READ", "", undefined, null, 1]) {
      assert.throws(
        () => scopeSatisfies(["orders:write", "orders:read"], "orders", level as "read"),
        (error) => error instanceof TypeError && /level/.test(error.message),
        String(level),
      );
    }
  });
});
