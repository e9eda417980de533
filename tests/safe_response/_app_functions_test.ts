import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { callAppFunction, describeThrown } from "../../safe_response/_app_functions.ts";

describe("application function calls", () => {
  it("returns the value, or a failure line for a throw or a promise", async () => {
    assert.deepEqual(callAppFunction("f", () => 1), { ok: true, value: 1 });
    assert.deepEqual(
      callAppFunction("f", () => {
        throw new TypeError("no");
      }),
      { ok: false, failure: "f threw (TypeError: no)" },
    );
    const rejected = callAppFunction("f", () => Promise.reject(new Error("later")));
    assert.deepEqual(rejected, {
      ok: false,
      failure: "f returned a promise; it must be synchronous",
    });
    await new Promise((resolve) => setTimeout(resolve, 0)); // no unhandled rejection
  });

  it("describes any thrown value without throwing", () => {
    assert.equal(describeThrown(null)[0], "Non-error thrown: null");
    const stackless = Object.assign(new Error("x"), { stack: 42 });
    assert.deepEqual(describeThrown(stackless), ["Error: x", undefined], "a stack not a string");
    const hostile = {
      toString() {
        throw new Error("x");
      },
    };
    assert.equal(describeThrown(hostile)[0], "Non-error thrown (not printable)");
  });
});
