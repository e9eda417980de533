import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isError, isProblemDetailsResponse, isSuccess } from "../../client/responses.ts";
import { failure, fullMeta, nonObjects, problem, success, withField } from "./_fixtures.ts";

/** An HTTP status is an integer from 100 to 599: every other number is refused, JSON's or not. */
const statuses = {
  good: [100, 200, 201, 404, 599],
  bad: [200.5, 99, 600, 0, -200, 1e308, NaN, Infinity, -Infinity, Number.MAX_SAFE_INTEGER + 2],
};

/** A response time is a finite number of milliseconds, never negative. */
const responseTimes = { good: [0, 0.01, 12.5, 60_000], bad: [-1, -0.01, NaN, Infinity, -Infinity] };

describe("isSuccess", () => {
  it("accepts a full and a minimal success envelope", () => {
    assert.equal(isSuccess(success), true);
    assert.equal(isSuccess({ success: true, statusCode: 201, data: null }), true);
    assert.equal(isSuccess({ success: true, statusCode: 200, data: 0, extra: 1 }), true);
  });

  it("rejects non-objects, error envelopes and problem details", () => {
    for (const value of [...nonObjects, failure, problem]) assert.equal(isSuccess(value), false);
  });

  it("requires success: true, a numeric statusCode and data", () => {
    assert.equal(isSuccess(withField(success, "success", "true")), false);
    assert.equal(isSuccess(withField(success, "success", false)), false);
    assert.equal(isSuccess(withField(success, "success", undefined)), false);
    assert.equal(isSuccess(withField(success, "statusCode", "200")), false);
    assert.equal(isSuccess(withField(success, "statusCode", undefined)), false);
    assert.equal(isSuccess(withField(success, "data", undefined)), false);
  });

  it("statusCode: an integer from 100 to 599", () => {
    for (const status of statuses.good) {
      assert.equal(isSuccess(withField(success, "statusCode", status)), true, String(status));
    }
    for (const status of statuses.bad) {
      assert.equal(isSuccess(withField(success, "statusCode", status)), false, String(status));
    }
  });

  it("meta.responseTime: a finite number of at least 0", () => {
    for (const time of responseTimes.good) {
      const body = { ...success, meta: { ...fullMeta, responseTime: time } };
      assert.equal(isSuccess(body), true, String(time));
    }
    for (const time of responseTimes.bad) {
      const body = { ...success, meta: { ...fullMeta, responseTime: time } };
      assert.equal(isSuccess(body), false, String(time));
    }
  });

  it("checks the type of every optional field", () => {
    for (const key of ["code", "requestId", "timestamp", "path"]) {
      assert.equal(isSuccess(withField(success, key, 1)), false, key);
      assert.equal(isSuccess(withField(success, key, undefined)), true, key);
    }
    for (const meta of [null, [], "m", { responseTime: "1" }]) {
      assert.equal(isSuccess(withField(success, "meta", meta)), false, JSON.stringify(meta));
    }
  });

  it("checks meta in full, nested shapes included", () => {
    const broken: Record<string, unknown> = {
      pagination: { ...fullMeta.pagination, page: "2" },
      message: 1,
      responseTime: "1",
      sort: { field: "name", order: "up" },
      filters: ["status"],
      deprecation: { deprecated: false },
      rateLimit: { limit: 1, remaining: 1 },
      apiVersion: 2,
      fields: ["id", 2],
    };
    for (const [key, value] of Object.entries(broken)) {
      assert.equal(isSuccess({ ...success, meta: { ...fullMeta, [key]: value } }), false, key);
    }
    assert.equal(isSuccess({ ...success, meta: { traceId: 7 } }), true, "extra fields are free");
  });
});

describe("isError", () => {
  it("accepts a full and a minimal error envelope", () => {
    assert.equal(isError(failure), true);
    assert.equal(
      isError({ success: false, statusCode: 500, error: { code: "X", message: "" } }),
      true,
    );
  });

  it("rejects non-objects, success envelopes and problem details", () => {
    for (const value of [...nonObjects, success, problem]) assert.equal(isError(value), false);
  });

  it("requires success: false, a numeric statusCode and error.code / error.message strings", () => {
    assert.equal(isError(withField(failure, "success", 0)), false);
    assert.equal(isError(withField(failure, "statusCode", null)), false);
    assert.equal(isError(withField(failure, "error", undefined)), false);
    assert.equal(isError(withField(failure, "error", "NOT_FOUND")), false);
    assert.equal(isError(withField(failure, "error", { code: "X" })), false);
    assert.equal(isError(withField(failure, "error", { code: 404, message: "m" })), false);
    assert.equal(isError(withField(failure, "error", { code: "X", message: null })), false);
  });

  it("statusCode: an integer from 100 to 599; meta.responseTime: a finite number of at least 0", () => {
    for (const status of statuses.good) {
      assert.equal(isError(withField(failure, "statusCode", status)), true, String(status));
    }
    for (const status of statuses.bad) {
      assert.equal(isError(withField(failure, "statusCode", status)), false, String(status));
    }
    for (const time of responseTimes.good) {
      assert.equal(isError(withField(failure, "meta", { responseTime: time })), true, String(time));
    }
    for (const time of responseTimes.bad) {
      assert.equal(
        isError(withField(failure, "meta", { responseTime: time })),
        false,
        String(time),
      );
    }
  });

  it("checks the optional fields and the error meta", () => {
    for (const key of ["requestId", "timestamp", "path"]) {
      assert.equal(isError(withField(failure, key, false)), false, key);
    }
    assert.equal(isError(withField(failure, "meta", { rateLimit: { limit: 1 } })), false);
    assert.equal(isError(withField(failure, "meta", { deprecation: { deprecated: 1 } })), false);
    assert.equal(isError(withField(failure, "meta", { apiVersion: 1 })), false);
    assert.equal(isError(withField(failure, "meta", { responseTime: null })), false);
    assert.equal(isError(withField(failure, "meta", { correlationId: "c" })), true);
  });
});

describe("isProblemDetailsResponse", () => {
  it("accepts a full and a minimal problem-details body", () => {
    assert.equal(isProblemDetailsResponse(problem), true);
    const minimal = { type: "about:blank", title: "T", status: 400, detail: "", instance: "/" };
    assert.equal(isProblemDetailsResponse(minimal), true);
  });

  it("rejects non-objects and envelopes", () => {
    for (const value of [...nonObjects, success, failure]) {
      assert.equal(isProblemDetailsResponse(value), false);
    }
  });

  it("requires each member with its type", () => {
    for (const key of ["type", "title", "detail", "instance", "status"]) {
      assert.equal(isProblemDetailsResponse(withField(problem, key, undefined)), false, key);
      const wrong = key === "status" ? "404" : 404;
      assert.equal(isProblemDetailsResponse(withField(problem, key, wrong)), false, key);
    }
  });

  it("status: an integer from 100 to 599; meta.responseTime: a finite number of at least 0", () => {
    for (const status of statuses.good) {
      assert.equal(isProblemDetailsResponse(withField(problem, "status", status)), true);
    }
    for (const status of statuses.bad) {
      const body = withField(problem, "status", status);
      assert.equal(isProblemDetailsResponse(body), false, String(status));
    }
    for (const time of responseTimes.bad) {
      const body = withField(problem, "meta", { responseTime: time });
      assert.equal(isProblemDetailsResponse(body), false, String(time));
    }
    const timed = withField(problem, "meta", { responseTime: 0 });
    assert.equal(isProblemDetailsResponse(timed), true);
  });

  it("checks the extensions", () => {
    assert.equal(isProblemDetailsResponse(withField(problem, "code", 1)), false);
    assert.equal(isProblemDetailsResponse(withField(problem, "requestId", [])), false);
    assert.equal(isProblemDetailsResponse(withField(problem, "meta", 1)), false);
    assert.equal(isProblemDetailsResponse(withField(problem, "details", null)), true);
  });
});
