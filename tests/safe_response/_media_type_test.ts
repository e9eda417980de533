/** The one test of a JSON media type. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isJsonMediaType, JSON_CONTENT_TYPE } from "../../safe_response/_media_type.ts";

describe("isJsonMediaType", () => {
  it("is application/json and +json types, whatever their parameters and case", () => {
    for (
      const type of [
        JSON_CONTENT_TYPE,
        "application/json; charset=utf-8",
        " Application/JSON ",
        "application/problem+json; charset=utf-8",
        "application/vnd.api+json",
      ]
    ) {
      assert.equal(isJsonMediaType(type), true, type);
    }
  });

  it("is not any other type", () => {
    for (
      const type of ["text/html; charset=utf-8", "text/csv", "text/javascript", "+json", "", "json"]
    ) {
      assert.equal(isJsonMediaType(type), false, type);
    }
  });
});
