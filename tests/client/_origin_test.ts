import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mayLeaveOrigin } from "../../client/_origin.ts";

describe("client/_origin.ts", () => {
  it("a path a URL parser reads as another host may leave the origin; one it keeps may not", () => {
    const base = "https://api.example";
    for (const path of ["//evil.example/x", "/\\evil.example/x", "/\t/evil.example/x"]) {
      assert.equal(new URL(path, base).origin, "https://evil.example", path);
      assert.equal(mayLeaveOrigin(path), true, path);
    }
    for (const path of ["/\n/evil.example/x", "/\r\\evil.example/x", "/a\\b", "/a\tb"]) {
      assert.equal(mayLeaveOrigin(path), true, JSON.stringify(path));
    }
    for (const path of ["/", "/items?page=2&limit=10", "/v1/items?q=a%5Cb", "/a/b/"]) {
      assert.equal(new URL(path, base).origin, base, path);
      assert.equal(mayLeaveOrigin(path), false, path);
    }
  });
});
