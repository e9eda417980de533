import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { unref } from "../../api_keys/_unref.ts";

describe("unref", () => {
  it("calls a timer object's unref (Node's Timeout)", () => {
    let called = 0;
    const timer = { unref: () => called++ } as unknown as ReturnType<typeof setTimeout>;
    unref(timer);
    assert.equal(called, 1);
  });

  it("leaves a real timer unable to hold the process (Node: hasRef() is false)", () => {
    const timer = setTimeout(() => {}, 60_000);
    try {
      unref(timer);
      const node = timer as unknown as { hasRef?: () => boolean };
      if (typeof node.hasRef === "function") assert.equal(node.hasRef(), false);
      else assert.equal(typeof timer, "number"); // Deno: a timer id, given to Deno.unrefTimer
    } finally {
      clearTimeout(timer);
    }
  });

  it("never throws for a timer of neither kind", () => {
    assert.doesNotThrow(() => unref({} as ReturnType<typeof setTimeout>));
  });
});
