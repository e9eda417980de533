import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { buildErrorBody, buildSuccessBody } from "../../safe_response/envelope.ts";
import { isSuccess } from "../../client/responses.ts";
import { buildProblemDetails, problemTypeUri } from "../../safe_response/problem_details.ts";

describe("body builders", () => {
  it("builds success and error envelopes in field order, leaving out undefined fields", () => {
    const success = buildSuccessBody({
      statusCode: 200,
      data: [1],
      requestId: "r",
      code: undefined,
      path: "/x",
    });
    assert.deepEqual(Object.keys(success), ["success", "statusCode", "requestId", "data", "path"]);
    const error = buildErrorBody({
      statusCode: 404,
      code: "NOT_FOUND",
      message: "Not Found",
      details: ["d"],
    });
    assert.deepEqual(error, {
      success: false,
      statusCode: 404,
      error: { code: "NOT_FOUND", message: "Not Found", details: ["d"] },
    });
  });

  it("builds problem details with about:blank and the status title by default", () => {
    assert.deepEqual(
      buildProblemDetails({ status: 410, code: "GONE", detail: "Removed", instance: "/a" }),
      {
        type: "about:blank",
        title: "Gone",
        status: 410,
        detail: "Removed",
        instance: "/a",
        code: "GONE",
      },
    );
    assert.equal(
      problemTypeUri("https://x.example/p//", "api_key_invalid"),
      "https://x.example/p/api-key-invalid",
    );
  });
});

describe("buildSuccessBody with no handler result", () => {
  it("sends data as null, so the body keeps its required data field", () => {
    const body = buildSuccessBody({ statusCode: 204, data: undefined });
    assert.equal(body.data, null);
    assert.ok("data" in JSON.parse(JSON.stringify(body)));
  });

  it("sends a result JSON has no value for (a function, a symbol, a toJSON answering nothing) as null; the client's guard accepts every body", () => {
    const results: unknown[] = [() => 1, Symbol("s"), { toJSON: () => undefined }, {
      toJSON: () => () => 1,
    }];
    for (const data of results) {
      const sent = JSON.parse(JSON.stringify(buildSuccessBody({ statusCode: 200, data })));
      assert.equal(sent.data, null, String(typeof data));
      assert.equal(isSuccess(sent), true);
    }
    const date = new Date(0);
    assert.equal(buildSuccessBody({ statusCode: 200, data: date }).data, date, "kept as given");
  });
});
