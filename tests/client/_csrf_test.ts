/** The admin routes' CSRF header: one default for the handler, the element and the document. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { CSRF_HEADER, CSRF_METHODS, csrfOf } from "../../client/_csrf.ts";

describe("csrfOf", () => {
  it("reads the default, a header of the app's (lower case), or none with false", () => {
    assert.deepEqual(CSRF_HEADER, ["X-Requested-With", "api-keys-manager"]);
    assert.deepEqual(csrfOf(undefined), { header: "x-requested-with", value: "api-keys-manager" });
    assert.deepEqual(csrfOf({ header: "X-Csrf" }), { header: "x-csrf", value: "api-keys-manager" });
    assert.equal(csrfOf(false), null);
    assert.deepEqual([...CSRF_METHODS], ["POST", "PATCH", "DELETE"]);
  });

  it("refuses a bad header name or value", () => {
    for (const bad of [{ header: "bad header" }, { header: "" }, { value: 1 }]) {
      assert.throws(() => csrfOf(bad as never), TypeError);
    }
  });
});
