import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as client from "../../client/mod.ts";

describe("client/mod.ts", () => {
  it("exports the guards and nothing else at runtime (the types are type-only)", () => {
    assert.deepEqual(Object.keys(client).sort(), [
      "hasFieldSelection",
      "hasFilters",
      "hasRateLimit",
      "hasResponseTime",
      "hasSort",
      "isCursorPagination",
      "isDeprecated",
      "isError",
      "isOffsetPagination",
      "isPaginated",
      "isProblemDetailsResponse",
      "isSuccess",
    ]);
  });
});
