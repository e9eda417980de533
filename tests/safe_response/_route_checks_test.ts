import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fullFormats } from "ajv-formats/dist/formats.js";
import {
  httpStatusOption,
  nonEmptyOption,
  problemTypeOption,
} from "../../safe_response/_route_checks.ts";
import {
  ProblemType,
  ResponseMessage,
  SuccessCode,
} from "../../safe_response/nest/safe_response.decorators.ts";

describe("route option checks", () => {
  it("pass good values through", () => {
    assert.equal(httpStatusOption(204, "X"), 204);
    assert.equal(nonEmptyOption("done", "X: `m`"), "done");
    assert.equal(problemTypeOption("urn:problem:x", "X: `t`"), "urn:problem:x");
  });

  it("refuse bad ones naming where they were given", () => {
    assert.throws(() => httpStatusOption(600, "X"), /^TypeError: X: `statusCode` must be an HTTP/);
    assert.equal(httpStatusOption(101, "X"), 101); // 100 to 599 unless a binding says otherwise
    assert.throws(() => httpStatusOption(101, "X", 200), /must be an HTTP status \(200-599\)$/);
    assert.throws(() => nonEmptyOption("", "X: `m`"), /^TypeError: X: `m` must be a non-empty/);
    assert.throws(() => problemTypeOption("a b", "X: `t`"), /^TypeError: X: `t` must be a URI$/);
  });

  it("are what the Nest decorators check (their messages unchanged)", () => {
    assert.throws(
      () => ResponseMessage(""),
      /^TypeError: ResponseMessage: `message` must be a non/,
    );
    assert.throws(() => SuccessCode(""), /^TypeError: SuccessCode: `code` must be a non-empty/);
    assert.throws(() => ProblemType(" "), /^TypeError: ProblemType: `typeUri` must be a URI$/);
  });
});

describe("problemTypeOption: an RFC 3986 URI reference (the documented `format: uri-reference`)", () => {
  const uriReference = fullFormats["uri-reference"] as RegExp;
  const good = [
    "about:blank",
    "urn:problem:x",
    "/problems/payment",
    "payment-declined",
    "https://errors.example.com/zahlung-abgelehnt-%C3%A4?lang=de#top",
    "https://user@[::1]:8443/p;v=1/a(b)*",
  ];
  const bad = [
    "https://errors.example.com/zahlung-abgelehnt-ä",
    "https://errors.example.com/{payment}|declined",
    "https://errors.example.com/%zz",
    "https://errors.example.com/a#b#c",
    "https://errors.example.com/a[1]",
    "https://errors.example.com/a\\b",
  ];

  it("accepts a URI reference, as Ajv's uri-reference does", () => {
    for (const value of good) {
      assert.equal(problemTypeOption(value, "X: `t`"), value);
      assert.ok(uriReference.test(value), value);
    }
  });

  it("refuses what is not one (non-ASCII, characters a URI cannot hold), as Ajv does", () => {
    for (const value of bad) {
      assert.throws(() => problemTypeOption(value, "X: `t`"), /^TypeError: X: `t` must be a URI$/);
      assert.equal(uriReference.test(value), false, value);
    }
    // Stricter than Ajv: a relative reference's first segment holds no `:` (RFC 3986 §4.2), and
    // `"` is no URI character.
    for (const value of ["1a:b", ":b", 'https://errors.example.com/"x"']) {
      assert.throws(() => problemTypeOption(value, "X: `t`"), /must be a URI$/, value);
    }
    assert.throws(
      () => ProblemType("https://errors.example.com/{payment}"),
      /^TypeError: ProblemType: `typeUri` must be a URI$/,
    );
  });
});
