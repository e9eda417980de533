import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { LIBRARY_ERROR } from "../../safe_response/_library_error.ts";
import { resolveError } from "../../safe_response/error_resolution.ts";

describe("library error brand", () => {
  it("is the registered symbol every copy shares, and lets a coded error through", () => {
    assert.equal(LIBRARY_ERROR, Symbol.for("saferoute.api-kit.error"));
    const branded = Object.assign(new Error("Gone"), {
      [LIBRARY_ERROR]: true,
      code: "X",
      status: 410,
    });
    assert.equal(resolveError(branded).statusCode, 410);
    const foreign = Object.assign(new Error("Gone"), { code: "X", status: 410 });
    assert.equal(resolveError(foreign).statusCode, 500);
  });
});
