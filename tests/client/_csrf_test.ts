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

  it("refuses a value no header carries as written: empty, spaces around, a line break, non-ASCII", () => {
    for (const value of ["", " v", "v ", "a\nb", "a\rb", "a\0b", "caf\u00e9", "\u{1f511}"]) {
      assert.throws(() => csrfOf({ value }), TypeError, JSON.stringify(value));
    }
    assert.deepEqual(csrfOf({ value: "a b;c=1" }), {
      header: "x-requested-with",
      value: "a b;c=1",
    });
  });

  it("refuses a name a cross-site page sends without a preflight (CORS-safelisted), or a page cannot set (forbidden)", () => {
    const safelisted = ["Accept", "accept-language", "Content-Language", "CONTENT-TYPE", "Range"];
    // Chromium's extra safelisted names (`IsCorsSafelistedHeader`): sent cross-site, no preflight.
    const chromium = [
      "Intervention",
      "Save-Data",
      "Device-Memory",
      "DPR",
      "Width",
      "Viewport-Width",
      "X-DevTools-Emulate-Network-Conditions-Client-Id",
    ];
    const forbidden = [
      "Accept-Charset",
      "Accept-Encoding",
      "Access-Control-Request-Headers",
      "Access-Control-Request-Method",
      "Connection",
      "Content-Length",
      "Cookie",
      "Cookie2",
      "Date",
      "DNT",
      "Expect",
      "Host",
      "Keep-Alive",
      "Origin",
      "Referer",
      "Set-Cookie",
      "TE",
      "Trailer",
      "Transfer-Encoding",
      "Upgrade",
      "Via",
      "Proxy-Authorization",
      "Sec-Fetch-Site",
      "sec-x",
      "X-HTTP-Method",
      "X-HTTP-Method-Override",
      "X-Method-Override",
    ];
    for (const header of [...safelisted, ...chromium, ...forbidden]) {
      assert.throws(() => csrfOf({ header }), TypeError, header);
    }
    for (const header of ["X-Csrf", "Accepts", "Secret", "Proxy", "Rangefinder", "X-Range"]) {
      assert.equal(csrfOf({ header })?.header, header.toLowerCase(), header);
    }
  });
});
