import { describe, it } from "node:test";
import assert from "node:assert/strict";
import * as fetchBinding from "../../../safe_response/fetch/mod.ts";

describe("safe_response/fetch/mod.ts", () => {
  it("exports the binding's public runtime names", () => {
    assert.deepEqual(Object.keys(fetchBinding).sort(), [
      "RequestBodyError",
      "createSafeFetch",
      "readJsonBody",
    ]);
  });
});
