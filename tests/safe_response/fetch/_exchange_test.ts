import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  copyHeaders,
  FetchExchange,
  RequestContext,
  toResponse,
} from "../../../safe_response/fetch/_exchange.ts";

describe("FetchExchange and RequestContext", () => {
  it("reads the request and what the handler set", () => {
    const context = new RequestContext();
    const request = new Request("https://api.example/items?page=2", {
      method: "POST",
      headers: { "X-Request-Id": "r1" },
    });
    const before = new FetchExchange(request);
    assert.equal(before.method, "POST");
    assert.equal(before.target, "/items?page=2"); // origin form: never read from the Host
    assert.equal(before.requestHeader("x-request-id"), "r1");
    assert.equal(before.requestHeader("missing"), undefined);
    assert.equal(before.status, undefined);
    const exchange = new FetchExchange(request, context);
    assert.equal(context.touched, undefined);
    assert.equal(exchange.responseHeader("x-ratelimit-limit"), undefined);
    context.headers.set("X-RateLimit-Limit", "10");
    context.status = 201;
    assert.equal(exchange.responseHeader("x-ratelimit-limit"), "10");
    assert.equal(exchange.status, 201);
  });

  it("throws a TypeError for pagination on a route without it, else reads the parser", () => {
    const context = new RequestContext();
    assert.throws(() => context.pagination, TypeError);
    context.bindPagination(() => ({ kind: "offset", page: 1, limit: 20 }));
    assert.deepEqual(context.pagination, { kind: "offset", page: 1, limit: 20 });
  });
});

describe("toResponse", () => {
  it("sends a wrapped body as JSON with the handler's and the reply's headers", async () => {
    const context = new RequestContext();
    context.headers.set("X-Handler", "h");
    const response = toResponse(
      {
        status: 404,
        headers: [["X-Request-Id", "r1"]],
        body: { success: false },
        wrapped: true,
        nullBody: false,
      },
      context,
    );
    assert.equal(response.status, 404);
    assert.equal(response.headers.get("content-type"), "application/json; charset=utf-8");
    assert.equal(response.headers.get("x-handler"), "h");
    assert.equal(response.headers.get("x-request-id"), "r1");
    assert.deepEqual(await response.json(), { success: false });
  });

  it("keeps a reply's own content type, and sends unwrapped bodies as they are", async () => {
    const problem = toResponse({
      status: 400,
      headers: [["Content-Type", "application/problem+json"]],
      body: { status: 400 },
      wrapped: true,
      nullBody: false,
    }, undefined);
    assert.equal(problem.headers.get("content-type"), "application/problem+json");
    const text = toResponse({
      status: 200,
      headers: [],
      body: "plain",
      wrapped: false,
      nullBody: false,
    }, undefined);
    assert.equal(text.headers.get("content-type"), "text/plain;charset=UTF-8");
    assert.equal(await text.text(), "plain");
    const empty = toResponse({
      status: 204,
      headers: [],
      body: null,
      wrapped: false,
      nullBody: true,
    }, undefined);
    assert.equal(empty.body, null);
    const json = toResponse({
      status: 200,
      headers: [],
      body: [1],
      wrapped: false,
      nullBody: false,
    }, undefined);
    assert.equal(json.headers.get("content-type"), "application/json; charset=utf-8");
    assert.throws(() =>
      toResponse(
        { status: 200, headers: [], body: { n: 1n }, wrapped: false, nullBody: false },
        undefined,
      )
    );
  });

  it("keeps every Set-Cookie of a handler's Response and of its context", () => {
    const context = new RequestContext();
    context.headers.append("Set-Cookie", "session=abc; HttpOnly");
    const own = new Headers();
    own.append("Set-Cookie", "csrf=def");
    own.append("Set-Cookie", "theme=dark");
    const response = toResponse(
      {
        status: 200,
        headers: [],
        body: new Response("ok", { headers: own }),
        wrapped: false,
        nullBody: false,
      },
      context,
    );
    assert.deepEqual(response.headers.getSetCookie(), [
      "session=abc; HttpOnly",
      "csrf=def",
      "theme=dark",
    ]);
  });

  it("sends 204, 205 and 304 with no body and no JSON type, keeping the other headers", () => {
    for (const status of [204, 205, 304]) {
      const context = new RequestContext();
      context.headers.set("RateLimit", '"demo";r=9;t=60');
      for (const handlerSet of [undefined, context]) {
        const response = toResponse({
          status,
          headers: [["X-Request-Id", "r1"], ["Deprecation", "@1735689600"]],
          body: { success: true, statusCode: status },
          wrapped: true,
          nullBody: true,
        }, handlerSet);
        assert.equal(response.status, status);
        assert.equal(response.body, null);
        assert.equal(response.headers.get("content-type"), null);
        assert.equal(response.headers.get("x-request-id"), "r1");
        assert.equal(response.headers.get("deprecation"), "@1735689600");
        if (handlerSet) assert.equal(response.headers.get("ratelimit"), '"demo";r=9;t=60');
      }
      const raw = toResponse(
        { status, headers: [], body: "text", wrapped: false, nullBody: true },
        undefined,
      );
      assert.equal(raw.body, null, `raw ${status}`);
    }
  });

  it("keeps a handler's Response status, adding the context's and the reply's headers", () => {
    const context = new RequestContext();
    context.headers.set("X-Handler", "h");
    const response = toResponse({
      status: 200,
      headers: [["X-Request-Id", "r1"]],
      body: new Response("raw", { status: 418, headers: { "X-Own": "o" } }),
      wrapped: false,
      nullBody: false,
    }, context);
    assert.equal(response.status, 418);
    assert.deepEqual(
      [...response.headers].filter(([name]) => name.startsWith("x-")),
      [["x-handler", "h"], ["x-own", "o"], ["x-request-id", "r1"]],
    );
  });
});

describe("copyHeaders", () => {
  it("replaces a field of the same name, but adds every Set-Cookie", () => {
    const into = new Headers([["X-One", "old"], ["Set-Cookie", "a=1"]]);
    const from = new Headers([["X-One", "new"], ["Set-Cookie", "b=2"], ["Set-Cookie", "c=3"]]);
    copyHeaders(into, from);
    assert.equal(into.get("x-one"), "new");
    assert.deepEqual(into.getSetCookie(), ["a=1", "b=2", "c=3"]);
  });
});
