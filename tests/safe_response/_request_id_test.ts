import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isSafeRequestId, resolveRequestId } from "../../safe_response/_request_id.ts";

describe("request ids", () => {
  it("reuses only 1 to 128 visible ASCII characters", () => {
    assert.equal(isSafeRequestId("a"), true);
    assert.equal(isSafeRequestId("~".repeat(128)), true);
    assert.equal(isSafeRequestId("a".repeat(129)), false);
    assert.equal(isSafeRequestId(""), false);
    assert.equal(isSafeRequestId("a b"), false);
    assert.equal(isSafeRequestId("é"), false);
    assert.equal(isSafeRequestId(["a"]), false);
    assert.equal(resolveRequestId("keep-me", () => "new"), "keep-me");
    assert.equal(resolveRequestId("bad\r\nid", () => "new"), "new");
    assert.match(resolveRequestId(undefined), /^[0-9a-f-]{36}$/);
  });

  it("keeps a generated id only when it is safe, else sends a random UUID", () => {
    assert.equal(resolveRequestId(undefined, () => "gen-1"), "gen-1");
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    for (const generated of ["bad\nid", 42, "x".repeat(100_000), "", undefined, ["id"]]) {
      assert.match(resolveRequestId("a b", () => generated), uuid, String(generated).slice(0, 9));
    }
  });
});
