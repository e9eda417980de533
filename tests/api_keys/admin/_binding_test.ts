import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { pathOfSegments, routeMethod } from "../../../api_keys/admin/_binding.ts";

describe("api_keys/admin/_binding.ts", () => {
  it("routeMethod: HEAD is answered as GET, every other method as itself", () => {
    assert.equal(routeMethod("HEAD"), "GET");
    for (const method of ["GET", "POST", "PATCH", "DELETE", "PUT", "head"]) {
      assert.equal(routeMethod(method), method);
    }
  });

  it("pathOfSegments: decoded segments joined; one holding a / is no route", () => {
    assert.equal(pathOfSegments(["", "keys", "legacy key:1+é"]), "/keys/legacy key:1+é");
    assert.equal(pathOfSegments(["", "keys", "k/usage"]), undefined);
    assert.equal(pathOfSegments(["", "keys", "k", "rotate"]), "/keys/k/rotate");
  });
});
