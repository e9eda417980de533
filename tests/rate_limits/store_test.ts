import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MAX_SUBJECT_LENGTH } from "../../rate_limits/store.ts";

describe("store contract", () => {
  it("a subject is at most 512 characters (the bound the docs and every store key state)", () => {
    assert.equal(MAX_SUBJECT_LENGTH, 512);
  });
});
