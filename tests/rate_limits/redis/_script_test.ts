import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { CHECK_SCRIPT } from "../../../rate_limits/redis/_script.ts";

// Behaviour is proven on real Redis (tests/limits/); here, the rules the script keeps.
describe("CHECK_SCRIPT", () => {
  it("reads only the server's clock and touches only the keys it is given", () => {
    assert.match(CHECK_SCRIPT, /redis\.call\('TIME'\)/);
    const calls = [...CHECK_SCRIPT.matchAll(/redis\.call\('(\w+)', (\w+)/g)].map((m) => m[2]);
    assert.ok(calls.length > 5);
    assert.ok(calls.every((target) => target === "log" || target === "tot"), calls.join());
  });
});
