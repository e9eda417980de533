import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as core from "../../safe_response/mod.ts";

describe("./safe-response", () => {
  it("exports the responder, the builders and the tables", () => {
    for (const name of ["Responder", "buildSuccessBody", "resolveError", "DEFAULT_ERROR_CODES"]) {
      assert.ok(name in core, name);
    }
  });
});
