import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as core from "../../safe_response/mod.ts";

describe("./safe-response", () => {
  it("exports the responder, the builders and the tables", () => {
    for (const name of ["Responder", "buildSuccessBody", "resolveError", "DEFAULT_ERROR_CODES"]) {
      assert.ok(name in core, name);
    }
  });

  it("no longer exports the names removed from the public surface in 0.2.0", () => {
    const removed = [
      "buildCursorPaginationMeta",
      "clampLimit",
      "CURSOR_QUERY_PARAM",
      "cursorPaginationLinks",
      "DEFAULT_REQUEST_ID_HEADER",
      "deprecationLinkHeaderValue",
      "isCursorPaginatedResult",
      "isFilterMap",
      "isPaginatedResult",
      "isSafeRequestId",
      "MAX_VALIDATION_DETAIL_LENGTH",
      "parseRetryAfter",
      "resolveRequestId",
      "VALIDATION_ERROR_MESSAGE",
    ];
    assert.deepEqual(removed.filter((name) => name in core), []);
  });
});
