import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isNullBodyStatus } from "../../safe_response/_null_body.ts";

describe("isNullBodyStatus", () => {
  it("is true for a 1xx, 204, 205 and 304 only", () => {
    for (const status of [100, 101, 103, 199, 204, 205, 304]) {
      assert.equal(isNullBodyStatus(status), true, String(status));
    }
    for (const status of [200, 201, 202, 206, 301, 302, 303, 307, 400, 404, 500]) {
      assert.equal(isNullBodyStatus(status), false, String(status));
    }
  });
});
