import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { errorNameOf } from "../../telemetry/_error_name.ts";

describe("errorNameOf", () => {
  it("an Error's name, another value's type, unknown when it cannot be read; never throws", () => {
    assert.equal(errorNameOf(new RangeError("secret message")), "RangeError");
    assert.equal(errorNameOf("down"), "string");
    assert.equal(errorNameOf(undefined), "undefined");
    assert.equal(errorNameOf({ name: "NotAnError" }), "object");
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    assert.equal(errorNameOf(proxy), "unknown");
    const error = new Error("x");
    Object.defineProperty(error, "name", {
      get() {
        throw new Error("getter");
      },
    });
    assert.equal(errorNameOf(error), "unknown");
  });
});
