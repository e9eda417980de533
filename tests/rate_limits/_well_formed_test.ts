import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { answersWellFormed, isWellFormed } from "../../rate_limits/_well_formed.ts";
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";

describe("answersWellFormed / isWellFormed", () => {
  it("marks one function, not another of the same text; the library's memory store is marked", () => {
    const marked = () => [];
    const other = () => [];
    assert.equal(isWellFormed(marked), false);
    answersWellFormed(marked);
    assert.equal(isWellFormed(marked), true);
    assert.equal(isWellFormed(other), false);
    assert.equal(isWellFormed(undefined), false);
    assert.equal(isWellFormed(createMemoryRateLimitStore().checkNow), true);
  });
});
