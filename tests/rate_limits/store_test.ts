import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { assertSubject, MAX_SUBJECT_LENGTH } from "../../rate_limits/store.ts";

describe("assertSubject", () => {
  it("accepts 1 to 512 printable characters", () => {
    assert.equal(assertSubject("key:0190{x}"), "key:0190{x}");
    assert.equal(assertSubject("k".repeat(MAX_SUBJECT_LENGTH)).length, 512);
  });
  it("refuses empty, too long, non-string and control characters", () => {
    for (const bad of ["", "k".repeat(513), 1, "a\nb", "a\u0000b", "a\u007fb"]) {
      assert.throws(() => assertSubject(bad), TypeError, String(bad));
    }
  });
});
