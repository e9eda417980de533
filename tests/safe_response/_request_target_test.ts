import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { requestPath } from "../../safe_response/_request_target.ts";

describe("requestPath", () => {
  it("is the target's path, the same string when it cannot leave this origin", () => {
    assert.equal(requestPath("/items?page=2"), "/items");
    assert.equal(requestPath("/a%20b/ü"), "/a%20b/ü");
    assert.equal(requestPath("http://host/items/9?x"), "/items/9");
    assert.equal(requestPath("*"), "*");
  });

  it("never a network-path reference: leading slashes, backslashes, tabs and line breaks collapse", () => {
    const base = "https://api.example.com/";
    for (
      const target of [
        "//evil.example/login",
        "/\\evil.example/login",
        "\\\\evil.example/login",
        "/\t/evil.example/login",
        "/\n/evil.example/login",
        "///evil.example/login?x=1",
        "http://h//evil.example/login",
      ]
    ) {
      const path = requestPath(target);
      assert.equal(
        new URL(path, base).host,
        "api.example.com",
        `${JSON.stringify(target)}: ${path}`,
      );
      assert.equal(path, "/evil.example/login", JSON.stringify(target));
    }
  });
});
