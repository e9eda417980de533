import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { originForm } from "../../safe_response/_request_target.ts";

describe("originForm", () => {
  it("drops the scheme and authority of an absolute-form target", () => {
    assert.equal(originForm("http://:99999/items?page=2"), "/items?page=2");
    assert.equal(originForm("https://host?q=1"), "/?q=1");
    assert.equal(originForm("/items"), "/items");
    assert.equal(originForm("*"), "*");
  });
});
