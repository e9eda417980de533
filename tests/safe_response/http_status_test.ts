import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  DEFAULT_ERROR_CODES,
  DEFAULT_PROBLEM_TITLES,
  fallbackErrorCode,
  lookupErrorCode,
  lookupProblemTitle,
  problemTitle,
  reasonPhrase,
} from "../../safe_response/http_status.ts";

describe("error codes and problem titles", () => {
  it("maps the spec table", () => {
    assert.deepEqual(DEFAULT_ERROR_CODES, {
      400: "BAD_REQUEST",
      401: "UNAUTHORIZED",
      403: "FORBIDDEN",
      404: "NOT_FOUND",
      405: "METHOD_NOT_ALLOWED",
      409: "CONFLICT",
      422: "UNPROCESSABLE_ENTITY",
      429: "TOO_MANY_REQUESTS",
      500: "INTERNAL_SERVER_ERROR",
      502: "BAD_GATEWAY",
      503: "SERVICE_UNAVAILABLE",
    });
    const titles = new Map(Object.entries(DEFAULT_PROBLEM_TITLES));
    for (const [key, code] of Object.entries(DEFAULT_ERROR_CODES)) {
      const status = Number(key);
      assert.equal(lookupErrorCode(status), code);
      assert.equal(lookupProblemTitle(status), titles.get(key));
      assert.equal(titles.get(key), reasonPhrase(status));
    }
    assert.equal(titles.size, 11);
    assert.ok(Object.isFrozen(DEFAULT_ERROR_CODES));
  });

  it("returns undefined for unmapped statuses and inherited keys", () => {
    assert.equal(lookupErrorCode(410), undefined);
    assert.equal(lookupProblemTitle(418), undefined);
    assert.equal(lookupErrorCode("constructor" as unknown as number), undefined);
  });

  it("falls back to the upper-snake reason phrase, else HTTP_<status>", () => {
    assert.equal(fallbackErrorCode(410), "GONE");
    assert.equal(fallbackErrorCode(418), "I_AM_A_TEAPOT");
    assert.equal(fallbackErrorCode(505), "HTTP_VERSION_NOT_SUPPORTED");
    assert.equal(fallbackErrorCode(203), "NON_AUTHORITATIVE_INFORMATION");
    assert.equal(fallbackErrorCode(599), "HTTP_599");
    assert.equal(problemTitle(410), "Gone");
    assert.equal(problemTitle(404), "Not Found");
    assert.equal(problemTitle(599), "HTTP 599");
  });
});
