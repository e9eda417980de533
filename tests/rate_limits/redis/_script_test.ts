import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { CHANGE_SCRIPT, CHECK_SCRIPT } from "../../../rate_limits/redis/_script.ts";

// Behaviour is proven on real Redis (tests/limits/); here, the rules the script keeps.
describe("CHECK_SCRIPT and CHANGE_SCRIPT", () => {
  it("read only the server's clock and touch only the keys they are given", () => {
    for (const script of [CHECK_SCRIPT, CHANGE_SCRIPT]) {
      assert.match(script, /redis\.call\('TIME'\)/);
      const calls = [...script.matchAll(/redis\.call\('(\w+)', (\w+)/g)].map((m) => m[2]);
      assert.ok(calls.length > 1);
      assert.ok(calls.every((target) => ["log", "tot", "key"].includes(target)), calls.join());
    }
  });
});
