import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  countFrom,
  isBoolean,
  isDuration,
  isHttpStatus,
  isRecord,
  isString,
  isStringArray,
  isStringOrNull,
  oneOf,
  ownValue,
  shape,
} from "../../client/_check.ts";

describe("client/_check.ts", () => {
  it("ownValue reads a table's own keys only", () => {
    const table = { a: 1 };
    assert.equal(ownValue(table, "a"), 1);
    for (const key of ["b", "constructor", "__proto__", "toString", "hasOwnProperty"]) {
      assert.equal(ownValue(table, key), undefined, key);
    }
  });

  it("checks primitives", () => {
    assert.deepEqual([isString("a"), isString(1)], [true, false]);
    assert.deepEqual([isBoolean(false), isBoolean(0)], [true, false]);
    assert.deepEqual([isStringOrNull(null), isStringOrNull(undefined)], [true, false]);
    assert.deepEqual([isStringArray(["a"]), isStringArray(["a", 1]), isStringArray("a")], [
      true,
      false,
      false,
    ]);
    assert.deepEqual([isRecord({}), isRecord(null), isRecord([])], [true, false, false]);
    assert.deepEqual([oneOf("a", 1)(1), oneOf("a", 1)("b")], [true, false]);
  });

  it("isStringArray refuses holes: a sparse array of length 2^32 - 1 at once, not walked", () => {
    // deno-lint-ignore no-sparse-arrays
    assert.deepEqual([["a", , "b"], new Array(2)].map(isStringArray), [false, false]);
    const start = performance.now();
    assert.equal(isStringArray(new Array(2 ** 32 - 1)), false);
    const last = new Array(2 ** 32 - 1);
    last[2 ** 32 - 2] = "a";
    assert.equal(isStringArray(last), false);
    assert.ok(performance.now() - start < 1_000, `${performance.now() - start} ms`);
  });

  it("countFrom: safe integers from min to max (else to 2^53 - 1)", () => {
    assert.deepEqual([0, 1, Number.MAX_SAFE_INTEGER].map(countFrom(0)), [true, true, true]);
    assert.deepEqual([-1, 0.5, 2 ** 53, NaN, "1"].map(countFrom(0)), [
      false,
      false,
      false,
      false,
      false,
    ]);
    assert.deepEqual([1, 3, 4, 0].map(countFrom(1, 3)), [true, true, false, false]);
  });

  it("isHttpStatus: integers from 100 to 599", () => {
    for (const status of [100, 200, 599]) assert.equal(isHttpStatus(status), true, String(status));
    for (const status of [99, 600, 200.5, 1e308, NaN, Infinity, -200, "200", null]) {
      assert.equal(isHttpStatus(status), false, String(status));
    }
  });

  it("isDuration: finite numbers of at least 0", () => {
    for (const time of [0, -0, 0.01, 12.5, Number.MAX_VALUE]) {
      assert.equal(isDuration(time), true, String(time));
    }
    for (const time of [-1, -0.01, NaN, Infinity, -Infinity, "1", null]) {
      assert.equal(isDuration(time), false, String(time));
    }
  });

  it("shape: required fields must pass, optional ones may be absent, others are allowed", () => {
    const check = shape({ id: isString }, { count: countFrom(0) });
    assert.equal(check({ id: "x" }), true);
    assert.equal(check({ id: "x", count: 2, extra: true }), true);
    assert.equal(check({ id: "x", count: "2" }), false);
    assert.equal(check({ count: 2 }), false);
    assert.equal(check(null), false);
  });

  it("shape: a throwing getter or a revoked Proxy is refused (false), never thrown", () => {
    const check = shape({ id: isString }, { count: countFrom(0) });
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const throwing = new Proxy({}, {
      get() {
        throw new Error("boom");
      },
    });
    const getter = Object.defineProperty({ id: "x" }, "count", {
      get() {
        throw new Error("boom");
      },
    });
    for (const value of [revoked.proxy, throwing, getter, { id: "x", count: revoked.proxy }]) {
      assert.equal(check(value), false);
    }
    assert.equal(shape({ inner: check })({ inner: throwing }), false);
  });
});
