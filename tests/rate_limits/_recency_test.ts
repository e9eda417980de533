import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Recency, type RecencyNode } from "../../rate_limits/_recency.ts";

const node = (key: string): RecencyNode => ({ key, older: undefined, newer: undefined });

describe("Recency", () => {
  it("keeps nodes in order of use; the oldest goes first", () => {
    const recency = new Recency();
    for (const key of ["a", "b", "c"]) recency.add(node(key));
    assert.equal(recency.use("a")?.key, "a");
    assert.equal(recency.oldest?.key, "b");
    recency.remove(recency.oldest!);
    assert.equal(recency.oldest?.key, "c");
    assert.equal(recency.size, 2);
    recency.remove(recency.peek("a")!);
    recency.remove(recency.peek("c")!);
    assert.equal(recency.oldest, undefined);
    assert.equal(recency.use("a"), undefined);
  });

  it("peek leaves the order unchanged", () => {
    const recency = new Recency();
    recency.add(node("a"));
    recency.add(node("b"));
    recency.peek("a");
    assert.equal(recency.oldest?.key, "a");
  });
});
