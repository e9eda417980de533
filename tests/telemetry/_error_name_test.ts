import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { errorMessageOf, errorNameOf } from "../../telemetry/_error_name.ts";

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

describe("errorMessageOf", () => {
  it("a value's message, else its code, else the value as text, at most 200 characters; unknown when it cannot be read; never throws", () => {
    assert.equal(errorMessageOf(new RangeError("down")), "down");
    assert.equal(
      errorMessageOf(Object.assign(new Error(""), { code: "ECONNREFUSED" })),
      "ECONNREFUSED",
    );
    assert.equal(errorMessageOf("down"), "down");
    assert.equal(errorMessageOf(undefined), "undefined");
    assert.equal(errorMessageOf(new Error("x".repeat(300))), "x".repeat(200));
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    assert.equal(errorMessageOf(proxy), "unknown");
    const error = new Error("x");
    Object.defineProperty(error, "message", {
      get() {
        throw new Error("getter");
      },
    });
    assert.equal(errorMessageOf(error), "unknown");
    assert.equal(errorMessageOf(Object.create(null)), "unknown");
  });
});
