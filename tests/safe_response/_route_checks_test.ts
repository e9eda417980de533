import { describe, it } from "node:test";
import assert from "node:assert/strict";
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
