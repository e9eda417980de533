import "reflect-metadata";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Get } from "@nestjs/common";
import { resolveSettings, Responder } from "../../../safe_response/mod.ts";
import { RawResponse } from "../../../safe_response/nest/mod.ts";
import {
  exchangeOf,
  markPhase,
  phaseOf,
  routeOf,
  setHeaders,
} from "../../../safe_response/nest/_http.ts";

describe("Nest exchange view", () => {
  it("reads Express and Fastify requests and responses", () => {
    const headers = new Map<string, unknown>([["x-ratelimit-limit", "5"]]);
    const response = {
      statusCode: 201,
      getHeader: (name: string) => headers.get(name.toLowerCase()),
      header: (name: string, value: string) => headers.set(name.toLowerCase(), value),
    };
    const exchange = exchangeOf(
      { method: "POST", originalUrl: "/a?b=1", url: "/b", headers: { "x-id": ["1", "2"] } },
      response,
    );
    assert.equal(exchange.method, "POST");
    assert.equal(exchange.target, "/a?b=1");
    assert.equal(exchange.status, 201);
    assert.equal(exchange.requestHeader("X-Id"), "1");
    assert.equal(exchange.responseHeader("X-RateLimit-Limit"), "5");
    setHeaders(response, [["X-Out", "v"]]);
    assert.equal(headers.get("x-out"), "v");
  });

  it("plans a route once per handler and records the handler phase", () => {
    class Routes {
      list() {}
    }
    Get()(Routes.prototype, "list", Object.getOwnPropertyDescriptor(Routes.prototype, "list")!);
    const responder = new Responder(resolveSettings());
    const first = routeOf(responder, Routes, Routes.prototype.list, undefined);
    assert.equal(routeOf(responder, Routes, Routes.prototype.list, undefined), first);
    assert.equal(first.plan.route, "Routes.list");
    // Two controllers sharing an inherited handler: a plan each, from its own decorators.
    class A extends Routes {}
    class B extends Routes {}
    RawResponse()(B);
    const [a, b] = [A, B].map((c) => routeOf(responder, c, Routes.prototype.list, undefined));
    assert.deepEqual([a.plan.raw, b.plan.raw], [false, true], "B's @RawResponse, not A's plan");
    assert.equal(routeOf(responder, B, Routes.prototype.list, undefined), b);
    const request = {};
    assert.equal(phaseOf(request), undefined);
    markPhase(request, { plan: first.plan });
    assert.equal(phaseOf(request)?.plan, first.plan);
  });
});
