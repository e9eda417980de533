/** The one test of an upgrade response, which the Fetch wrappers send as they are. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isUpgradeResponse } from "../../../api_keys/fetch/_upgrade.ts";

describe("isUpgradeResponse", () => {
  it("is a 101 (switching protocols) only", () => {
    // A 101 cannot be made with `new Response` (status 200 to 599): read as Deno's upgrade answers.
    const switching = Object.defineProperty(new Response(null), "status", { value: 101 });
    assert.equal(isUpgradeResponse(switching), true);
    for (const status of [200, 204, 304, 426, 500]) {
      const body = status === 204 || status === 304 ? null : "x";
      assert.equal(isUpgradeResponse(new Response(body, { status })), false, String(status));
    }
  });
});
