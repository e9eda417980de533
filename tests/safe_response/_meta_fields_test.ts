import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isContextFieldName } from "../../safe_response/_meta_fields.ts";

describe("isContextFieldName", () => {
  it("refuses the envelope's own meta fields and __proto__", () => {
    for (const name of ["pagination", "responseTime", "rateLimit", "apiVersion", "__proto__"]) {
      assert.equal(isContextFieldName(name), false, name);
    }
    for (const name of ["traceId", "tenant", "constructor"]) {
      assert.equal(isContextFieldName(name), true, name);
    }
  });
});
