import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  createDispatcher,
  failureLine,
  freezePayload,
  warnOnce,
  warnPerOutage,
} from "../../api_keys/_sinks.ts";
import { generateKey } from "../../api_keys/key_format.ts";

describe("sinks", () => {
  const warn = console.warn;
  let warnings: string[] = [];
  beforeEach(() => {
    warnings = [];
    console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(" "));
  });
  afterEach(() => {
    console.warn = warn;
  });

  it("a failure line names the function and the error's name only, redacted", () => {
    const key = generateKey({ environment: "live" }).raw;
    assert.equal(
      failureLine("onMetric", new TypeError(key)),
      "api-keys: onMetric failed (TypeError)",
    );
    assert.equal(failureLine(key, "x"), "api-keys: [REDACTED_API_KEY] failed (string)");
  });

  it("warnOnce logs the first failure and swallows the rest", () => {
    const report = warnOnce("onAuthFailed");
    report(new Error("a"));
    report(new Error("b"));
    assert.deepEqual(warnings, [
      "api-keys: onAuthFailed failed (Error); further failures are not logged",
    ]);
  });

  it("warnPerOutage logs the first failure of each outage and its recovery", () => {
    const info = console.info;
    console.info = (...args: unknown[]) => warnings.push(args.map(String).join(" "));
    try {
      const report = warnPerOutage("credits write-back");
      report.succeeded();
      for (const outage of [1, 2]) {
        for (let pass = 0; pass < 3; pass++) report.failed(new RangeError(`pass ${pass}`));
        report.succeeded();
        report.succeeded();
        assert.equal(warnings.length, 2 * outage);
      }
      assert.equal(
        warnings[0],
        "api-keys: credits write-back failed (RangeError); further failures are not logged until it recovers",
      );
      assert.match(
        warnings[1],
        /^api-keys: credits write-back recovered after 3 failed pass\(es\) since \d{4}-\d\d-\d\dT/,
      );
    } finally {
      console.info = info;
    }
  });

  it("a dispatcher sends sink failures to onError, and onError's own once to the console", () => {
    assert.equal(createDispatcher(undefined, undefined, "onEvent"), undefined);
    const seen: [unknown, number][] = [];
    const dispatch = createDispatcher(
      (n: number) => {
        if (n > 1) throw new Error(`sink ${n}`);
      },
      (error, n) => {
        seen.push([(error as Error).message, n]);
        if (n > 2) throw new Error("handler");
      },
      "onEvent",
    )!;
    for (const n of [1, 2, 3, 4]) dispatch(n);
    assert.deepEqual(seen, [["sink 2", 2], ["sink 3", 3], ["sink 4", 4]]);
    assert.deepEqual(warnings, [
      "api-keys: onEventError failed (Error); further failures are not logged",
    ]);
  });
});

describe("freezePayload", () => {
  it("freezes the payload and its arrays and plain objects, not its dates or class instances", () => {
    const at = new Date(5);
    const error = new Error("x");
    const payload = { at, scopes: ["a:read"], nested: { list: [1] }, error };
    assert.equal(freezePayload(payload), payload);
    for (const part of [payload, payload.scopes, payload.nested, payload.nested.list]) {
      assert.ok(Object.isFrozen(part));
    }
    assert.equal(Object.isFrozen(at), false);
    assert.equal(Object.isFrozen(error), false);
    assert.throws(() => payload.scopes.push("b:write"), TypeError);
  });

  it("a dispatcher built with freeze hands the sink a frozen payload; without, as given", () => {
    const seen: object[] = [];
    createDispatcher((p: object) => seen.push(p), undefined, "onEvent", true)!({ a: [1] });
    createDispatcher((p: object) => seen.push(p), undefined, "onMetric")!({ b: 2 });
    assert.deepEqual(seen.map((p) => Object.isFrozen(p)), [true, false]);
  });
});
