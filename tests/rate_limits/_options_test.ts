import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  assertKnownOptions,
  optionalBoolean,
  optionalFunction,
} from "../../rate_limits/_options.ts";

describe("assertKnownOptions", () => {
  it("accepts undefined and known options", () => {
    assert.doesNotThrow(() => assertKnownOptions(undefined, ["a"], "f"));
    assert.doesNotThrow(() => assertKnownOptions({ a: 1 }, ["a", "b"], "f"));
  });

  it("refuses an unknown option naming it, as SafeResponseModule does, and a non-object", () => {
    assert.throws(
      () => assertKnownOptions({ a: 1, rateLimit: 2 }, ["a", "b"], "createRateLimiter"),
      /^TypeError: createRateLimiter: unknown option `rateLimit` \(known: a, b\)$/,
    );
    assert.throws(() => assertKnownOptions([], ["a"], "f"), /f: options must be an object/);
    assert.throws(() => assertKnownOptions(null, ["a"], "f"), /f: options must be an object/);
  });
});

describe("optionalBoolean", () => {
  it("passes a boolean or undefined, refuses anything else naming the option", () => {
    assert.equal(optionalBoolean(false, "clustered", "f"), false);
    assert.equal(optionalBoolean(undefined, "clustered", "f"), undefined);
    assert.throws(
      () => optionalBoolean("false", "clustered", "f"),
      /^TypeError: f: clustered must be a boolean$/,
    );
  });
});

describe("optionalFunction", () => {
  it("passes a function or undefined, refuses anything else naming the option", () => {
    const logger = (_line: string) => {};
    assert.equal(optionalFunction(logger, "logger", "f"), logger);
    assert.equal(optionalFunction(undefined, "logger", "f"), undefined);
    for (const value of ["console.warn", 0, null, {}]) {
      assert.throws(
        () => optionalFunction(value, "logger", "f"),
        /^TypeError: f: logger must be a function$/,
      );
    }
  });
});
