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
      assert.throws(() => flattenScopes([{ resource, level: "read" }]), /scopes\[0\]\.resource/);
    }
    assert.throws(() => flattenScopes([{ resource: "a", level: "admin" as "read" }]), /level/);
  });

  it("never echoes a pasted key, a secret or a huge value in the error", () => {
    const key = `ak_live_RxW362tsMpEt_${"ZAdubzpYrcSIlbc3MgEzr14jQ3xJE4e50Er3St"}`;
    const cases: [string, string][] = [
      [key, "read"],
      ["orders", key.slice(0, 32)],
      ["x".repeat(200_000), "read"],
      [`orders${"ZAdubzpYrcSIlbc3"}`, "read"],
    ];
    for (const [resource, level] of cases) {
      let message = "";
      try {
        flattenScopes([{ resource: "ok", level: "read" }, { resource, level: level as "read" }]);
      } catch (error) {
        message = String((error as Error).message);
      }
      assert.match(message, /scopes\[1\]/, "the entry is named by its index");
      assert.ok(!message.includes("ZAdubzpYrcS") && !message.includes("RxW362"), message);
      assert.ok(message.length < 200, `${message.length} characters`);
    }
    assert.throws(
      () => flattenScopes([{ resource: "a", level: "Read" as "read" }]),
      /scopes\[0\]\.level "Read" must be "read" or "write"/,
      "a word is shown",
    );
  });

  it("seed 0.4: a resource is 1 to 128 characters", () => {
    const longest = "r".repeat(128);
    assert.deepEqual(flattenScopes([{ resource: longest, level: "read" }]), [`${longest}:read`]);
    assert.throws(
      () => flattenScopes([{ resource: "r".repeat(129), level: "read" }]),
      /scopes\[0\]\.resource must be 1-128 characters of \[a-z0-9_.-\]/,
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
