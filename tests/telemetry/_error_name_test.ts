import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { errorMessageOf, errorNameOf, isBug } from "../../telemetry/_error_name.ts";

/** Values whose `field` cannot be read: a revoked `Proxy`, an `Error` whose getter throws. */
const unreadable = (field: "name" | "message"): unknown[] => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  const error = Object.defineProperty(new Error("x"), field, {
    get() {
      throw new Error("getter");
    },
  });
  return [proxy, error];
};

describe("errorNameOf", () => {
  it("an Error's name, another value's type, unknown when it cannot be read; never throws", () => {
    assert.equal(errorNameOf(new RangeError("secret message")), "RangeError");
    assert.equal(errorNameOf("down"), "string");
    assert.equal(errorNameOf(undefined), "undefined");
    assert.equal(errorNameOf({ name: "NotAnError" }), "object");
    assert.deepEqual(unreadable("name").map(errorNameOf), ["unknown", "unknown"]);
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
    assert.deepEqual(unreadable("message").map(errorMessageOf), ["unknown", "unknown"]);
    assert.equal(errorMessageOf(Object.create(null)), "unknown");
  });
});

describe("errorMessageOf: credentials", () => {
  it("hides a URL's user and password (a connection string pg cannot parse is quoted in its message), also when the message is cut inside them", () => {
    const url = "postgresql://app:s3cretPW@db.internal:99999/app";
    assert.equal(
      errorMessageOf(new TypeError(`Invalid URL: '${url}' with base 'postgres://base'`)),
      "Invalid URL: 'postgresql://***@db.internal:99999/app' with base 'postgres://base'",
    );
    assert.equal(
      errorMessageOf(`redis://:pw@h:1 and rediss://u:p@h2`),
      "redis://***@h:1 and rediss://***@h2",
    );
    const cut = errorMessageOf(new Error(`${"x".repeat(180)} postgresql://app:s3cretPW@db/app`));
    assert.ok(!cut.includes("s3cret"), cut);
    assert.ok(cut.length <= 200);
    // A URL without credentials, and text that only looks like one, unchanged.
    assert.equal(
      errorMessageOf(new Error("GET https://example.com/a@b")),
      "GET https://example.com/a@b",
    );
    assert.equal(errorMessageOf(new Error("user@example.com")), "user@example.com");
  });
});

describe("isBug", () => {
  it("a TypeError, RangeError, ReferenceError or SyntaxError (subclasses too) is a bug; any other value, or one that cannot be read, is not; never throws", () => {
    class StoreFault extends TypeError {}
    for (const bug of [TypeError, RangeError, ReferenceError, SyntaxError, StoreFault]) {
      assert.equal(isBug(new bug("x")), true, bug.name);
    }
    for (const other of [new Error("ECONNRESET"), new EvalError("x"), "TypeError", null, {}]) {
      assert.equal(isBug(other), false, String(other));
    }
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    assert.equal(isBug(proxy), false);
  });
});
