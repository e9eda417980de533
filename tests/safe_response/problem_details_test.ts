import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  buildProblemDetails,
  PROBLEM_JSON_CONTENT_TYPE,
  problemTypeUri,
} from "../../safe_response/problem_details.ts";

describe("problem details", () => {
  it("defaults type to about:blank and title to the status title", () => {
    const body = buildProblemDetails({ status: 410, code: "GONE", detail: "x", instance: "/a" });
    assert.deepEqual(body, {
      type: "about:blank",
      title: "Gone",
      status: 410,
      detail: "x",
      instance: "/a",
      code: "GONE",
    });
    assert.equal(PROBLEM_JSON_CONTENT_TYPE, "application/problem+json");
  });

  it("derives type URIs from a base URL and a code", () => {
    assert.equal(problemTypeUri("https://e.com/p//", "NOT_FOUND"), "https://e.com/p/not-found");
    assert.equal(problemTypeUri("https://e.com", "A B"), "https://e.com/a%20b");
  });
});
