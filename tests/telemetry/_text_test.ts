import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { hasLoneSurrogate } from "../../telemetry/_text.ts";

describe("hasLoneSurrogate", () => {
  it("finds a high or low surrogate alone, at any place", () => {
    for (const text of ["\uD800", "\uDC00", "a\uD83D", "\uDE80b", "x\uDBFFy"]) {
      assert.equal(hasLoneSurrogate(text), true, JSON.stringify(text));
    }
  });

  it("passes well-formed text: ASCII, U+FFFD, a surrogate pair (an emoji), the empty string", () => {
    for (const text of ["", "acme", "\uFFFD", "deploy \uD83D\uDE80", "日本"]) {
      assert.equal(hasLoneSurrogate(text), false, JSON.stringify(text));
    }
  });

  it("is linear on long input", () => {
    const long = "\uD83D\uDE80".repeat(200_000) + "\uD800";
    const start = performance.now();
    assert.equal(hasLoneSurrogate(long), true);
    assert.ok(performance.now() - start < 2_000);
  });
});
