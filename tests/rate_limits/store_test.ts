import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { byKind, type RateLimitCounter } from "../../rate_limits/store.ts";

describe("byKind", () => {
  it("splits windows from credits and puts answers back in the order given", () => {
    const w = (name: string): RateLimitCounter => ({
      kind: "window",
      subject: "k",
      name,
      limit: 1,
      windowMs: 1_000,
      cost: 1,
    });
    const c = (name: string): RateLimitCounter => ({
      kind: "credit",
      subject: "k",
      name,
      cost: 1,
      initial: 1,
    });
    const { windows, credits, inOrder } = byKind([c("c1"), w("w1"), c("c2"), w("w2")]);
    assert.deepEqual(windows.map((x) => x.name), ["w1", "w2"]);
    assert.deepEqual(credits.map((x) => x.name), ["c1", "c2"]);
    assert.deepEqual(inOrder(["w1", "w2", "c1", "c2"]), ["c1", "w1", "c2", "w2"]);
  });
});
