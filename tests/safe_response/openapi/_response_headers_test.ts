import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  documentHeaders,
  HEADERS,
  STATUS_HEADERS,
} from "../../../safe_response/openapi/_response_headers.ts";

describe("documented response headers", () => {
  it("adds a status's headers where missing, as copies, never over one documented", () => {
    const own = { description: "mine", schema: { type: "string" } };
    const response = { description: "401", headers: { "X-Mine": own } };
    documentHeaders(response, [...STATUS_HEADERS[401], "X-Mine"]);
    assert.deepEqual(response.headers, {
      "X-Mine": own,
      "WWW-Authenticate": HEADERS["WWW-Authenticate"],
    });
    assert.notEqual(
      (response.headers as Record<string, unknown>)["WWW-Authenticate"],
      HEADERS["WWW-Authenticate"],
    );
    const ref = { $ref: "#/components/responses/E" };
    documentHeaders(ref, STATUS_HEADERS[429]);
    assert.deepEqual(ref, { $ref: "#/components/responses/E" });
  });
});
