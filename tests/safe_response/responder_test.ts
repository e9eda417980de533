/**
 * The core responder without any framework: every meta feature, both error
 * formats, the handler-phase rules, request ids and the containment of the
 * application's functions.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { generateKey } from "../../api_keys/mod.ts";
import { isError, isProblemDetailsResponse } from "../../client/mod.ts";
import { resolveDeprecation } from "../../safe_response/deprecation_headers.ts";
import { defineErrors, SafeException } from "../../safe_response/error_catalog.ts";
import type { SafeResponseModuleOptions } from "../../safe_response/options.ts";
import { resolvePagination } from "../../safe_response/pagination.ts";
import { PaginationQueryError } from "../../safe_response/pagination_query.ts";
import {
  beginPagination,
  type HttpExchange,
  paginationQueryOf,
  type Reply,
  type RequestPhase,
  Responder,
  type ResponderLogger,
  type RoutePlan,
} from "../../safe_response/responder.ts";
import { resolveSettings } from "../../safe_response/settings.ts";

type Bag = Record<string, unknown>;

/** An exchange over plain maps (lower-case header names). */
function exchange(
  target: string,
  init: {
    request?: Bag;
    response?: Bag;
    status?: number;
    method?: string;
  } = {},
): HttpExchange {
  const request = new Map(Object.entries(init.request ?? {}));
  const response = new Map(Object.entries(init.response ?? {}));
  return {
    method: init.method ?? "GET",
    target,
    status: init.status,
    requestHeader: (name) => request.get(name.toLowerCase()) as string | undefined,
    responseHeader: (name) => response.get(name.toLowerCase()),
    request: { i18nLang: "fr" },
  };
}

class Logs implements ResponderLogger {
  readonly warnings: string[] = [];
  readonly errors: string[] = [];
  warn(message: string): void {
    this.warnings.push(message);
  }
  error(message: string): void {
    this.errors.push(message);
  }
}

function responder(options: SafeResponseModuleOptions = {}, store?: Bag) {
  const logs = new Logs();
  const instance = new Responder(
    resolveSettings({ timestamp: false, ...options }),
    { logger: logs, store: store && (() => store) },
  );
  return { responder: instance, logs };
}

const bodyOf = (value: unknown) => value as Bag & { meta?: Bag; error?: Bag };

describe("Responder.success", () => {
  it("wraps a result with the route's status, code and path", () => {
    const { responder: r } = responder({ successCodeMapper: (status) => `S_${status}` });
    const plan = r.plan({ statusCode: 201 });
    const reply = r.success({ id: 1 }, exchange("/items?x=1"), { plan });
    assert.equal(reply.status, 201);
    assert.equal(reply.wrapped, true);
    assert.deepEqual(reply.body, {
      success: true,
      statusCode: 201,
      code: "S_201",
      data: { id: 1 },
      path: "/items",
    });
    const moved = r.success(1, exchange("/items", { status: 202 }), { plan });
    assert.equal(bodyOf(moved.body).code, "S_202");
    const fixed = r.plan({ successCode: "MADE" });
    assert.equal(bodyOf(r.success(1, exchange("/"), { plan: fixed }).body).code, "MADE");
  });

  it("replies with the status sent, saying whether it has a body", () => {
    const { responder: r } = responder({ successCodeMapper: (status) => `S_${status}` });
    const plan = r.plan({ statusCode: 204 });
    const routes = r.success(1, exchange("/"), { plan });
    assert.deepEqual([routes.status, routes.nullBody, routes.wrapped], [204, true, true]);
    const handlers = r.success(1, exchange("/", { status: 205 }), { plan });
    assert.deepEqual([handlers.status, handlers.nullBody], [205, true]);
    assert.equal(bodyOf(handlers.body).code, "S_205");
    // A 200 set on the response is a status like any other: sent, and the envelope's
    const sent = r.success(1, exchange("/", { status: 200 }), { plan });
    assert.deepEqual([sent.status, sent.nullBody], [200, false]);
    assert.deepEqual([bodyOf(sent.body).statusCode, bodyOf(sent.body).code], [200, "S_200"]);
    const raw = r.success("x", exchange("/", { status: 304 }), {
      plan: r.plan({ raw: true }),
    });
    assert.deepEqual([raw.status, raw.nullBody, raw.body], [304, true, "x"]);
    assert.equal(r.error(new Error("x"), exchange("/", { status: 204 })).nullBody, false);
  });

  it("sends raw routes and binary results as they are, with the deprecation headers", () => {
    const { responder: r } = responder();
    const deprecation = resolveDeprecation({ since: "2026-01-01T00:00:00Z" });
    const raw = r.success("plain", exchange("/"), { plan: r.plan({ raw: true, deprecation }) });
    assert.deepEqual(raw, {
      status: 200,
      headers: [["Deprecation", "@1767225600"]],
      body: "plain",
      wrapped: false,
      nullBody: false,
    });
    const bytes = new Uint8Array([1]);
    assert.equal(r.success(bytes, exchange("/"), { plan: r.plan({}) }).body, bytes);
  });

  it("sends a result as it is when the route set a non-JSON Content-Type", () => {
    const { responder: r } = responder({ requestId: true });
    const deprecation = resolveDeprecation({ since: "2026-01-01T00:00:00Z" });
    const plan = r.plan({ deprecation });
    for (const type of ["text/html; charset=utf-8", "text/csv", "TEXT/JavaScript"]) {
      const page = r.success("<p>", exchange("/", { response: { "content-type": type } }), {
        plan,
      });
      assert.deepEqual([page.wrapped, page.body, page.status], [false, "<p>", 200], type);
      assert.equal(page.headers[0][0], "Deprecation", type);
      assert.equal(page.headers.at(-1)![0], "X-Request-Id", type);
    }
    for (const type of ["application/json", "application/vnd.api+json; charset=utf-8"]) {
      const json = r.success({ a: 1 }, exchange("/", { response: { "content-type": type } }), {
        plan,
      });
      assert.equal(json.wrapped, true, type);
    }
  });

  it("computes offset and cursor pagination with links, sort and filters", () => {
    const { responder: r, logs } = responder();
    const plan = r.plan({
      pagination: resolvePagination("offset", { links: true, maxLimit: 5 }, "test"),
      sort: true,
      filter: true,
    });
    const result = {
      data: [1, 2],
      total: 12,
      page: 2,
      limit: 5,
      sort: { field: "id", order: "desc" },
      filters: { q: "a" },
    };
    const meta = bodyOf(r.success(result, exchange("/items?page=2&q=a"), { plan }).body).meta!;
    assert.deepEqual(meta.sort, { field: "id", order: "desc" });
    assert.deepEqual(meta.filters, { q: "a" });
    const pagination = meta.pagination as Bag;
    assert.equal(pagination.limit, 5);
    assert.equal(pagination.totalPages, 3);
    assert.equal((pagination.links as Bag).next, "/items?page=3&q=a&limit=5");
    const cursor = r.plan({ pagination: resolvePagination("cursor", {}, "test") });
    const page = r.success(
      { data: ["a"], nextCursor: "n", hasMore: true, limit: 1 },
      exchange("/feed"),
      { plan: cursor },
    );
    assert.deepEqual(bodyOf(page.body).data, ["a"]);
    assert.equal((bodyOf(page.body).meta!.pagination as Bag).type, "cursor");
    assert.deepEqual(logs.warnings, []);
  });

  it("sends pagination links in a Link header with linkHeader, appended to any Link set", () => {
    const { responder: r } = responder();
    const result = { data: [1], total: 30, page: 2, limit: 10 };
    const offset = (links: boolean) => resolvePagination("offset", { links }, "test");
    const both = r.success(result, exchange("/items?page=2"), {
      plan: r.plan({ pagination: offset(true), linkHeader: true }),
    });
    const header = '</items?page=1&limit=10>; rel="first", </items?page=1&limit=10>; rel="prev", ' +
      '</items?page=3&limit=10>; rel="next", </items?page=3&limit=10>; rel="last"';
    assert.deepEqual(both.headers, [["Link", header]]);
    assert.equal(
      ((bodyOf(both.body).meta!.pagination as Bag).links as Bag).next,
      "/items?page=3&limit=10",
    );
    // "only": the header without body links; links: false with linkHeader: true, the same.
    for (
      const plan of [
        r.plan({ pagination: offset(true), linkHeader: "only" }),
        r.plan({ pagination: offset(false), linkHeader: true }),
      ]
    ) {
      const reply = r.success(result, exchange("/items?page=2"), { plan });
      assert.deepEqual(reply.headers, [["Link", header]]);
      assert.equal((bodyOf(reply.body).meta!.pagination as Bag).links, undefined);
    }
    // Another middleware's Link (one value or several lines) and the deprecation links are kept.
    const deprecation = resolveDeprecation({ link: "/docs/v2", sunsetLink: "/sunset" });
    const plan = r.plan({ pagination: offset(false), linkHeader: "only", deprecation });
    const appended = r.success(
      result,
      exchange("/items?page=2", { response: { link: ['</a>; rel="alternate"', "</b>; rel=up"] } }),
      { plan },
    );
    assert.deepEqual(appended.headers.find(([name]) => name === "Link"), [
      "Link",
      '</a>; rel="alternate", </b>; rel=up, </docs/v2>; rel="deprecation", ' +
      `</sunset>; rel="sunset", ${header}`,
    ]);
    // A value already on the response (set for this request before) is not repeated.
    const again = r.success(result, exchange("/items?page=2", { response: { link: header } }), {
      plan: r.plan({ pagination: offset(false), linkHeader: true }),
    });
    assert.deepEqual(again.headers, [["Link", header]]);
    // Errors keep another middleware's Link too.
    const error = r.error(
      new Error("x"),
      exchange("/", { response: { link: '</a>; rel="alternate"' } }),
      { plan },
    );
    assert.deepEqual(error.headers.find(([name]) => name === "Link"), [
      "Link",
      '</a>; rel="alternate", </docs/v2>; rel="deprecation", </sunset>; rel="sunset"',
    ]);
  });

  it("takes linkHeader from the module option unless the route sets it", () => {
    const { responder: r } = responder({ linkHeader: "only" });
    const pagination = resolvePagination("cursor", { links: true }, "test");
    const result = { data: ["a"], nextCursor: "n", hasMore: true, limit: 1 };
    const moduleWide = r.success(result, exchange("/feed"), { plan: r.plan({ pagination }) });
    assert.deepEqual(moduleWide.headers, [[
      "Link",
      '</feed?limit=1>; rel="first", </feed?cursor=n&limit=1>; rel="next"',
    ]]);
    assert.equal((bodyOf(moduleWide.body).meta!.pagination as Bag).links, undefined);
    const off = r.success(result, exchange("/feed"), {
      plan: r.plan({ pagination, linkHeader: false }),
    });
    assert.deepEqual(off.headers, []);
    assert.notEqual((bodyOf(off.body).meta!.pagination as Bag).links, undefined);
  });

  it("warns once per route when a result does not fit its decorators", () => {
    const { responder: r, logs } = responder();
    const plan = r.plan({
      route: "Items.list",
      pagination: resolvePagination("offset", {}, "test"),
      sort: true,
    });
    r.success([1], exchange("/"), { plan });
    r.success([1], exchange("/"), { plan });
    assert.equal(logs.warnings.length, 2); // pagination and sort, once each
    assert.match(logs.warnings[0], /^Items\.list: decorated for pagination/);
    const quiet = responder({ suppressWarnings: true });
    quiet.responder.success([1], exchange("/"), { plan: quiet.responder.plan({ sort: true }) });
    assert.deepEqual(quiet.logs.warnings, []);
  });

  it("selects fields from the request target", () => {
    const { responder: r } = responder({ fieldSelection: true });
    const reply = r.success(
      { id: 1, name: "a", secret: "s" },
      exchange("/u?fields=id&fields=name"),
      { plan: r.plan({}) },
    );
    assert.deepEqual(bodyOf(reply.body).data, { id: 1, name: "a" });
    assert.deepEqual(bodyOf(reply.body).meta!.fields, ["id", "name"]);
    const off = r.plan({ fieldSelection: false });
    assert.equal(
      bodyOf(r.success({ id: 1 }, exchange("/u?fields=x"), { plan: off }).body).meta,
      undefined,
    );
  });

  it("assembles message, response time, deprecation, API version, rate limit and context", () => {
    const { responder: r } = responder(
      {
        responseTime: true,
        rateLimit: true,
        version: "2024-01-01",
        context: { fields: { traceId: "trace" }, resolver: (store) => ({ tenant: store.tenant }) },
        i18n: {
          translate: (key, options) => `${options?.lang}:${key}`,
          resolveLanguage: () => "fr",
        },
      },
      { trace: "t-1", tenant: "acme" },
    );
    const deprecation = resolveDeprecation({});
    const plan = r.plan({ message: "Listed", deprecation });
    const reply = r.success(
      1,
      exchange("/", { response: { "x-ratelimit-limit": "10", "x-ratelimit-remaining": "9" } }),
      { plan, start: r.start() },
    );
    const meta = bodyOf(reply.body).meta!;
    assert.equal(meta.message, "fr:Listed");
    assert.equal(typeof meta.responseTime, "number");
    assert.deepEqual(meta.deprecation, { deprecated: true });
    assert.equal(meta.apiVersion, "2024-01-01");
    assert.deepEqual(meta.rateLimit, { limit: 10, remaining: 9, reset: 0 });
    assert.equal(meta.traceId, "t-1");
    assert.equal(meta.tenant, "acme");
    assert.deepEqual(reply.headers, [["Deprecation", "@0"]]);
    const chosen = r.success(1, exchange("/"), { plan, apiVersion: "2" });
    assert.equal(bodyOf(chosen.body).meta!.apiVersion, "2");
    assert.equal(
      bodyOf(r.success(1, exchange("/"), { plan: r.plan({ apiVersion: "3" }) }).body)
        .meta!.apiVersion,
      "3",
    );
  });

  it("mirrors the IETF RateLimit fields with rateLimit.standard, X-RateLimit-* first", () => {
    const { responder: r } = responder({ rateLimit: { standard: true } });
    const plan = r.plan({});
    const standard = { ratelimit: '"burst";r=4;t=9', "ratelimit-policy": '"burst";q=5;w=10' };
    const meta = (response: Bag) =>
      bodyOf(r.success(1, exchange("/", { response }), { plan }).body).meta?.rateLimit;
    assert.deepEqual(meta(standard), { limit: 5, remaining: 4, reset: 9 });
    assert.deepEqual(meta({ ...standard, "x-ratelimit-remaining": "1" }), {
      limit: 0,
      remaining: 1,
      reset: 0,
    });
    const error = r.error(new Error("x"), exchange("/", { response: standard }));
    assert.deepEqual(bodyOf(error.body).meta?.rateLimit, { limit: 5, remaining: 4, reset: 9 });
  });

  it("mirrors Retry-After alone only on a 429 (a 503 or a 202's Retry-After is no rate limit)", () => {
    const { responder: r } = responder({ rateLimit: true });
    const retry = { "retry-after": "120" };
    const thrown = (status: number) =>
      Object.assign(new Error("x"), { getStatus: () => status, getResponse: () => "x" });
    const limited = r.error(thrown(429), exchange("/", { response: retry }));
    assert.deepEqual(bodyOf(limited.body).meta?.rateLimit, {
      limit: 0,
      remaining: 0,
      reset: 120,
      retryAfter: 120,
    });
    const down = r.error(thrown(503), exchange("/", { response: retry }));
    assert.equal(down.status, 503);
    assert.equal(bodyOf(down.body).meta?.rateLimit, undefined);
    const accepted = r.success(1, exchange("/", { response: retry, status: 202 }), {
      plan: r.plan({}),
    });
    assert.equal(accepted.status, 202);
    assert.equal(bodyOf(accepted.body).meta?.rateLimit, undefined);
    const counted = r.error(
      thrown(503),
      exchange("/", { response: { ...retry, "x-ratelimit-remaining": "3" } }),
    );
    assert.deepEqual(bodyOf(counted.body).meta?.rateLimit, {
      limit: 0,
      remaining: 3,
      reset: 120,
      retryAfter: 120,
    });
  });

  it("formats the timestamp with dateFormatter", () => {
    const r = new Responder(resolveSettings({ dateFormatter: () => "T" }));
    assert.equal(bodyOf(r.success(1, exchange("/"), { plan: r.plan({}) }).body).timestamp, "T");
  });

  it("throws when a required application function fails", () => {
    const { responder: r } = responder({
      transformResponse: () => {
        throw new Error("bad transform");
      },
    });
    assert.throws(
      () => r.success(1, exchange("/"), { plan: r.plan({}) }),
      /option `transformResponse` threw \(Error: bad transform\)/,
    );
  });
});

describe("Responder.error", () => {
  it("never throws for an Error whose stack is not a string: a generic 500, logged without it", () => {
    const { responder: r, logs } = responder();
    for (const stack of [42, { frames: [] }, null]) {
      const thrown = Object.assign(new Error("db down"), { stack });
      const reply = r.error(thrown, exchange("/x"));
      assert.equal(reply.status, 500);
    }
    assert.equal(logs.errors.length, 3);
    assert.ok(logs.errors.every((line) => line.includes("db down")));
  });

  it("sends the error envelope with the resolved code and message", () => {
    const { responder: r } = responder({ errorCodes: { 404: "MISSING" } });
    const thrown = Object.assign(new Error("x"), {
      getStatus: () => 404,
      getResponse: () => ({ message: "No item" }),
    });
    const reply = r.error(thrown, exchange("/items/9?a=1"));
    assert.equal(reply.status, 404);
    assert.deepEqual(reply.body, {
      success: false,
      statusCode: 404,
      error: { code: "MISSING", message: "No item" },
      path: "/items/9",
    });
  });

  it("sends problem details with the route's type from the handler phase on", () => {
    const { responder: r } = responder({
      problemDetails: { baseUrl: "https://example.com/p" },
      responseTime: true,
    });
    const plan = r.plan({ problemType: "https://example.com/p/custom" });
    const inHandler = r.error(new SafeException("GONE"), exchange("/x"), {
      plan,
      start: r.start(),
    });
    assert.equal(inHandler.status, 500); // no catalog: a 500
    assert.deepEqual(inHandler.headers, [[
      "Content-Type",
      "application/problem+json; charset=utf-8",
    ]]);
    const body = bodyOf(inHandler.body);
    assert.equal(body.type, "https://example.com/p/custom");
    assert.equal(body.instance, "/x");
    assert.equal(typeof body.meta?.responseTime, "number");
    const guard = bodyOf(r.error(new Error("secret"), exchange("/x")).body);
    assert.equal(guard.type, "https://example.com/p/internal-server-error");
    assert.equal(guard.detail, "Internal Server Error");
    assert.equal(guard.meta, undefined);
  });

  it("leaves deprecation and response time out before the handler phase (spec rule 3)", () => {
    const { responder: r } = responder({ responseTime: true, version: "v1" });
    const plan = r.plan({ deprecation: resolveDeprecation({}) });
    const inHandler = r.error(new Error("x"), exchange("/"), { plan, start: r.start() });
    assert.deepEqual(inHandler.headers, [["Deprecation", "@0"]]);
    assert.deepEqual(Object.keys(bodyOf(inHandler.body).meta!).sort(), [
      "apiVersion",
      "deprecation",
      "responseTime",
    ]);
    const before = r.error(new Error("x"), exchange("/"));
    assert.deepEqual(before.headers, []);
    assert.deepEqual(bodyOf(before.body).meta, { apiVersion: "v1" });
  });

  it("logs unexpected values with API keys redacted, never sending them", () => {
    const { responder: r, logs } = responder();
    const { raw, secret } = generateKey({ environment: "live" });
    const reply = r.error(new Error(`failed for ${raw}`), exchange("/"));
    assert.equal(bodyOf(reply.body).error!.message, "Internal Server Error");
    assert.equal(logs.errors.length, 1);
    assert.equal(logs.errors[0].includes(secret), false);
    assert.match(logs.errors[0], /^Error: failed for /);
  });

  it("answers a generic 500 when building the body fails", () => {
    const { responder: r, logs } = responder({
      timestamp: true,
      dateFormatter: () => {
        throw new Error("no clock");
      },
    });
    const reply = r.error(new Error("x"), exchange("/"));
    assert.deepEqual(reply, {
      status: 500,
      headers: [],
      body: {
        success: false,
        statusCode: 500,
        error: { code: "INTERNAL_SERVER_ERROR", message: "Internal Server Error" },
      },
      wrapped: true,
      nullBody: false,
    });
    assert.ok(logs.errors.some((line) => line.includes("option `dateFormatter` threw")));
  });
  /** Options whose error reply cannot be built: in the envelope its timestamp, in problem details its type URI. */
  const UNBUILDABLE: Record<"envelope" | "problem details", SafeResponseModuleOptions> = {
    envelope: {
      timestamp: true,
      dateFormatter: () => {
        throw new Error("no clock");
      },
    },
    "problem details": {
      problemDetails: { baseUrl: "https://api.example.com/problems" },
      errorCodeMapper: (_error, { defaultCode }) => `${defaultCode}\uD800`, // encodeURIComponent throws
    },
  };

  for (const [format, options] of Object.entries(UNBUILDABLE)) {
    it(`${format}: the last-resort 500 carries the request id, in the format's media type`, () => {
      const { responder: r, logs } = responder({ ...options, requestId: true });
      const missing = Object.assign(new Error("x"), {
        getStatus: () => 404,
        getResponse: () => "Not here",
      });
      const reply = r.error(missing, exchange("/items", { request: { "x-request-id": "req-1" } }));
      assert.equal(logs.errors.length, 1);
      assert.equal(reply.status, 500);
      if (format === "envelope") {
        assert.deepEqual(reply.headers, [["X-Request-Id", "req-1"]]);
        assert.deepEqual(reply.body, {
          success: false,
          statusCode: 500,
          requestId: "req-1",
          error: { code: "INTERNAL_SERVER_ERROR", message: "Internal Server Error" },
        });
        assert.equal(isError(reply.body), true);
      } else {
        assert.deepEqual(reply.headers, [
          ["X-Request-Id", "req-1"],
          ["Content-Type", "application/problem+json; charset=utf-8"],
        ]);
        assert.deepEqual(reply.body, {
          type: "https://api.example.com/problems/internal-server-error",
          title: "Internal Server Error",
          status: 500,
          detail: "Internal Server Error",
          instance: "/items",
          code: "INTERNAL_SERVER_ERROR",
          requestId: "req-1",
        });
        assert.equal(isProblemDetailsResponse(reply.body), true);
      }
      const echoed = r.error(missing, exchange("/", { response: { "x-request-id": "set" } }));
      assert.deepEqual(echoed.headers.filter(([name]) => name === "X-Request-Id"), []);
      assert.equal(bodyOf(echoed.body).requestId, "set", "the id already on the response");
    });
  }

  it("answers a generic 500 when dateFormatter or successCodeMapper returns a non-string", () => {
    const cases: Array<[string, SafeResponseModuleOptions]> = [
      ["dateFormatter", { timestamp: true, dateFormatter: () => 17 as unknown as string }],
      ["successCodeMapper", { successCodeMapper: () => 200 as unknown as string }],
    ];
    for (const [name, options] of cases) {
      const { responder: r, logs } = responder(options);
      let reply: Reply;
      try {
        reply = r.success(1, exchange("/"), { plan: r.plan({}) });
      } catch (thrown) {
        reply = r.error(thrown, exchange("/")); // what every binding does with a throw
      }
      assert.equal(reply.status, 500, name);
      assert.ok(logs.errors.some((line) => line.includes(`option \`${name}\` returned`)), name);
    }
  });
});

describe("Responder request ids, versions and plans", () => {
  it("reuses the echoed id, else a safe incoming one, else generates one", () => {
    const { responder: r } = responder({ requestId: { generator: () => "gen" } });
    assert.deepEqual(r.requestId(exchange("/", { response: { "x-request-id": "echoed" } })), {
      id: "echoed",
    });
    assert.deepEqual(r.requestId(exchange("/", { request: { "x-request-id": "in-1" } })), {
      id: "in-1",
      header: ["X-Request-Id", "in-1"],
    });
    assert.deepEqual(r.requestId(exchange("/", { request: { "x-request-id": "a b" } })), {
      id: "gen",
      header: ["X-Request-Id", "gen"],
    });
    const reply = r.success(1, exchange("/"), { plan: r.plan({}) });
    assert.equal(bodyOf(reply.body).requestId, "gen");
    assert.deepEqual(reply.headers, [["X-Request-Id", "gen"]]);
    assert.equal(responder().responder.requestId(exchange("/")), undefined);
  });

  it("sends a random UUID when the generator throws, returns a promise or an unsafe id", () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const generators: Array<[() => unknown, string | undefined]> = [
      [() => "bad\nid", undefined],
      [() => 42, undefined],
      [() => "x".repeat(100_000), undefined],
      [() => {
        throw new Error("boom");
      }, "option `requestId.generator` threw (Error: boom)"],
      [() => Promise.resolve("later"), "option `requestId.generator` returned a promise"],
    ];
    for (const [generator, logged] of generators) {
      const { responder: r, logs } = responder({
        requestId: { generator: generator as () => string },
      });
      const reply = r.success(1, exchange("/"), { plan: r.plan({}) });
      assert.equal(reply.status, 200);
      const id = bodyOf(reply.body).requestId as string;
      assert.match(id, uuid);
      assert.deepEqual(reply.headers, [["X-Request-Id", id]]);
      if (logged === undefined) assert.deepEqual(logs.errors, []);
      else assert.ok(logs.errors.some((line) => line.includes(logged)), logs.errors.join("\n"));
      const failed = r.error(new Error("x"), exchange("/"));
      assert.match(bodyOf(failed.body).requestId as string, uuid);
    }
  });

  it("calls a version function with the binding's context, containing its failures", () => {
    const { responder: r, logs } = responder({
      version: (context: unknown) => {
        if (context === "bad") throw new Error("boom");
        return context as string;
      },
    });
    assert.equal(r.versionOf("v2"), "v2");
    assert.equal(r.versionOf(""), undefined);
    assert.equal(r.versionOf("bad"), undefined);
    assert.equal(logs.errors.length, 1);
  });

  it("warns once when a route's problemDetails flag differs from the module option", () => {
    const { responder: r, logs } = responder();
    r.plan({ route: "A.b", problemDetails: true });
    r.plan({ route: "A.c", problemDetails: false });
    assert.equal(logs.warnings.length, 1);
    assert.match(logs.warnings[0], /^A\.b: the endpoint's problemDetails \(true\)/);
  });
});

describe("Responder: paginated results with numbers out of range", () => {
  it("throws (the binding answers a logged 500) instead of sending plain data", () => {
    const { responder: r, logs } = responder();
    const offset = r.plan({
      route: "Items.list",
      pagination: resolvePagination("offset", {}, "t"),
    });
    const cursor = r.plan({ route: "Feed.list", pagination: resolvePagination("cursor", {}, "t") });
    const cases: Array<[typeof offset, Bag, RegExp]> = [
      [offset, { data: [1], total: 1, page: 2 ** 53 + 2, limit: 1 }, /: Items\.list: .*`page`/],
      [offset, { data: [1], total: 1, page: 1, limit: 0 }, /`limit`/],
      [offset, { data: [1], total: -1, page: 1, limit: 1 }, /`total`/],
      [offset, { data: [1], total: NaN, page: 1, limit: 1 }, /`total`/],
      [
        cursor,
        { data: [], nextCursor: null, hasMore: false, limit: 1e309 },
        /: Feed\.list: .*`limit`/,
      ],
      [
        cursor,
        { data: [], nextCursor: null, hasMore: false, limit: 1, totalCount: 0.5 },
        /`totalCount`/,
      ],
    ];
    for (const [plan, result, message] of cases) {
      let thrown: unknown;
      assert.throws(() => {
        try {
          r.success(result, exchange("/items"), { plan });
        } catch (error) {
          thrown = error;
          throw error;
        }
      }, message);
      const reply = r.error(thrown, exchange("/items"), { plan });
      assert.equal(reply.status, 500);
      assert.equal(bodyOf(reply.body).data, undefined);
    }
    assert.equal(logs.errors.length, cases.length);
    assert.deepEqual(logs.warnings, []);
  });
});

describe("Responder: the pagination query", () => {
  const target = (query: string) => exchange(`/items?${query}`);

  it("parses on routes with a limit when the handler phase begins; meta reports the page sent", () => {
    const { responder: r, logs } = responder();
    const plan = r.plan({
      route: "Items.list",
      pagination: resolvePagination("offset", { maxLimit: 5, links: true }, "t"),
    });
    const phase: RequestPhase & { plan: RoutePlan } = { plan };
    beginPagination(target("page=2&limit=900"), phase);
    assert.deepEqual(phase.pagination, { kind: "offset", page: 2, limit: 5 });
    assert.equal(paginationQueryOf(target("page=7"), phase), phase.pagination); // recorded
    const reply = r.success(
      { data: [1, 2, 3, 4, 5, 6, 7], total: 42, page: 2, limit: 7 },
      target("page=2&limit=900"),
      phase,
    );
    const pagination = bodyOf(reply.body).meta!.pagination as Bag;
    assert.equal(pagination.limit, 7);
    assert.equal(pagination.totalPages, 6);
    assert.equal((pagination.links as Bag).next, "/items?page=3&limit=7");
    assert.deepEqual(logs.warnings, [
      "Items.list: the handler returned limit 7 for a page size of 5; meta describes the page " +
      "sent (limit 7); take the page size from PaginationQuery() / context.pagination",
    ]);
    assert.throws(() => beginPagination(target("limit=0"), { plan }), PaginationQueryError);
  });

  it("parses in success when the binding did not begin, so meta still tells the truth", () => {
    const { responder: r } = responder();
    const plan = r.plan({ pagination: resolvePagination("cursor", { defaultLimit: 3 }, "t") });
    const reply = r.success(
      { data: [1, 2, 3], nextCursor: null, hasMore: false, limit: 3 },
      exchange("/feed?cursor=x"),
      { plan },
    );
    assert.equal((bodyOf(reply.body).meta!.pagination as Bag).limit, 3);
    assert.throws(
      () =>
        r.success({ data: [], nextCursor: null, hasMore: false, limit: 3 }, target("limit=x"), {
          plan,
        }),
      PaginationQueryError,
    );
  });

  it("leaves routes without limits to the handler: nothing parsed at the start, meta from the result", () => {
    const { responder: r } = responder();
    const plan = r.plan({ pagination: resolvePagination("offset", {}, "t") });
    const phase: RequestPhase & { plan: RoutePlan } = { plan };
    beginPagination(target("limit=-1"), phase);
    assert.equal(phase.pagination, undefined);
    assert.deepEqual(paginationQueryOf(target("limit=900"), phase), {
      kind: "offset",
      page: 1,
      limit: 900,
    });
    assert.equal(phase.pagination, undefined);
    assert.throws(() => paginationQueryOf(target("limit=-1"), phase), PaginationQueryError);
    const reply = r.success(
      { data: [1], total: 1, page: 1, limit: 30 },
      target("limit=900"),
      phase,
    );
    assert.equal((bodyOf(reply.body).meta!.pagination as Bag).limit, 30);
    assert.throws(() => paginationQueryOf(target(""), { plan: r.plan({}) }), TypeError);
    beginPagination(target("limit=-1"), { plan: r.plan({}) }); // not paginated: nothing
  });

  it("answers a bad value with a 400 naming the parameter, in either error format", () => {
    for (const problemDetails of [false, true]) {
      const { responder: r } = responder({ problemDetails });
      const plan = r.plan({ pagination: resolvePagination("cursor", { maxLimit: 5 }, "t") });
      for (const query of ["limit=1e309", `cursor=${"c".repeat(10 * 1024)}`]) {
        let thrown: unknown;
        try {
          beginPagination(target(query), { plan });
        } catch (error) {
          thrown = error;
        }
        const reply = r.error(thrown, target(query), { plan });
        const body = bodyOf(reply.body);
        assert.equal(reply.status, 400);
        assert.equal(problemDetails ? body.code : body.error!.code, "INVALID_PAGINATION_QUERY");
        const message = String(problemDetails ? body.detail : body.error!.message);
        assert.match(message, new RegExp(`^Query parameter \`${query.split("=")[0]}\` `));
      }
    }
  });

  it("describes the page the handler produced: the result's own limit, warned once when it differs", () => {
    const { responder: r, logs } = responder({ linkHeader: true });
    const plan = r.plan({
      route: "Items.list",
      pagination: resolvePagination("offset", { maxLimit: 100, links: true }, "t"),
    });
    const items = Array.from({ length: 20 }, (_, i) => i);
    for (let request = 0; request < 2; request++) {
      const reply = r.success(
        { data: items, total: 100, page: 2, limit: 20 },
        target("page=2"),
        { plan },
      );
      const pagination = bodyOf(reply.body).meta!.pagination as Bag;
      assert.deepEqual(
        [pagination.limit, pagination.totalPages, pagination.hasNext],
        [20, 5, true],
      );
      assert.equal((pagination.links as Bag).next, "/items?page=3&limit=20");
      assert.match(String(new Map(reply.headers).get("Link")), /page=3&limit=20>; rel="next"/);
    }
    assert.equal(logs.warnings.length, 1);
    assert.match(logs.warnings[0], /^Items\.list: .*limit 20.*page size of 100/);

    const feed = r.plan({
      route: "Feed.list",
      pagination: resolvePagination("cursor", { defaultLimit: 25, links: true }, "t"),
    });
    const cursor = r.success(
      { data: [1], nextCursor: "n", hasMore: true, limit: 10 },
      exchange("/feed"),
      { plan: feed },
    );
    const meta = bodyOf(cursor.body).meta!.pagination as Bag;
    assert.equal(meta.limit, 10);
    assert.equal((meta.links as Bag).next, "/feed?cursor=n&limit=10");
    const unstated = r.success({ data: [1], nextCursor: null, hasMore: false }, exchange("/feed"), {
      plan: feed,
    });
    assert.equal((bodyOf(unstated.body).meta!.pagination as Bag).limit, 25);
  });

  it("keeps a page with more items than its limit whole, with a warning", () => {
    const { responder: r, logs } = responder();
    const plan = r.plan({ route: "Items.all", pagination: resolvePagination("offset", {}, "t") });
    const reply = r.success({ data: [1, 2, 3], total: 3, page: 1, limit: 2 }, target(""), { plan });
    assert.deepEqual(bodyOf(reply.body).data, [1, 2, 3]);
    assert.equal((bodyOf(reply.body).meta!.pagination as Bag).limit, 2);
    assert.equal(logs.warnings.length, 1);
    assert.match(logs.warnings[0], /^Items\.all: .*3 items.*limit 2/);
  });

  it("applies the module's defaultLimit to routes without one, within their maxLimit", () => {
    const { responder: r } = responder({ defaultLimit: 30 });
    const own = r.plan({ pagination: resolvePagination("offset", { defaultLimit: 4 }, "t") });
    const capped = r.plan({ pagination: resolvePagination("offset", { maxLimit: 10 }, "t") });
    const open = r.plan({ pagination: resolvePagination("cursor", {}, "t") });
    assert.equal(own.pagination?.defaultLimit, 4);
    assert.equal(capped.pagination?.defaultLimit, 10);
    assert.equal(paginationQueryOf(target(""), { plan: open }).limit, 30);
    // The module's default page size bounds a route without a maxLimit: max(100, it).
    const huge = `limit=${Number.MAX_SAFE_INTEGER}`;
    assert.equal(paginationQueryOf(target(huge), { plan: open }).limit, 100);
    const { responder: large } = responder({ defaultLimit: 250 });
    const wide = large.plan({ pagination: resolvePagination("offset", {}, "t") });
    assert.equal(paginationQueryOf(target(huge), { plan: wide }).limit, 250);
  });
});

describe("Responder: every meta feature, in both error formats", () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const i18n = {
    translate: (key: string, options?: { lang?: string }) => `${options?.lang}:${key}`,
    resolveLanguage: (request: unknown) => (request as { i18nLang?: string }).i18nLang,
  };
  /** Every meta feature on; the two formats differ only in `problemDetails`. */
  const setup = (problemDetails: boolean) =>
    responder({
      problemDetails,
      responseTime: true,
      rateLimit: true,
      version: "2024-01-01",
      requestId: { generator: () => "gen" },
      context: { fields: { traceId: "trace" }, resolver: (store) => ({ tenant: store.tenant }) },
      fieldSelection: true,
      i18n,
    }, { trace: "t-1", tenant: "acme" });
  const RATE = {
    "x-ratelimit-limit": "10",
    "x-ratelimit-remaining": "9",
    "x-ratelimit-reset": "30",
  };
  const deprecation = resolveDeprecation({ since: "2026-01-01T00:00:00Z", link: "/docs/v2" });
  /** `meta` without `responseTime`, after checking it is a number. */
  const timed = (meta: Bag | undefined) => {
    assert.equal(typeof meta?.responseTime, "number");
    const { responseTime: _, ...rest } = meta!;
    return rest;
  };
  const COMMON = {
    deprecation: {
      deprecated: true,
      since: "2026-01-01T00:00:00.000Z",
      link: "/docs/v2",
    },
    apiVersion: "2024-01-01",
    rateLimit: { limit: 10, remaining: 9, reset: 30 },
    traceId: "t-1",
    tenant: "acme",
  };

  for (const problemDetails of [false, true]) {
    const format = problemDetails ? "problem details" : "envelope";

    it(`${format}: an offset page carries links, sort, filters, fields, message and the rest`, () => {
      const { responder: r, logs } = setup(problemDetails);
      const plan = r.plan({
        message: "Listed",
        pagination: resolvePagination("offset", { links: true, maxLimit: 5 }, "t"),
        sort: true,
        filter: true,
        deprecation,
      });
      const result = {
        data: [{ id: 1, name: "a" }, { id: 2, name: "b" }],
        total: 12,
        page: 2,
        limit: 5,
        sort: { field: "id", order: "desc" },
        filters: { q: "a" },
      };
      const reply = r.success(
        result,
        exchange("/items?page=2&fields=id", { response: RATE, request: {} }),
        { plan, start: r.start() },
      );
      const body = bodyOf(reply.body);
      assert.equal(body.success, true); // successes are envelopes in both formats
      assert.equal(body.requestId, "gen");
      assert.deepEqual(body.data, [{ id: 1 }, { id: 2 }]);
      const at = (page: number) => `/items?page=${page}&fields=id&limit=5`;
      assert.deepEqual(timed(body.meta), {
        pagination: {
          type: "offset",
          page: 2,
          limit: 5,
          total: 12,
          totalPages: 3,
          hasNext: true,
          hasPrev: true,
          links: { self: at(2), first: at(1), prev: at(1), next: at(3), last: at(3) },
        },
        sort: { field: "id", order: "desc" },
        filters: { q: "a" },
        fields: ["id"],
        message: "fr:Listed",
        ...COMMON,
      });
      assert.deepEqual(reply.headers, [
        ["Deprecation", "@1767225600"],
        ["Link", '</docs/v2>; rel="deprecation"'],
        ["X-Request-Id", "gen"],
      ]);
      assert.deepEqual(logs.warnings, []);
      assert.deepEqual(logs.errors, []);
    });

    it(`${format}: a cursor page carries its cursors, links and clamped limit`, () => {
      const { responder: r } = setup(problemDetails);
      const plan = r.plan({
        pagination: resolvePagination("cursor", { links: true, maxLimit: 3 }, "t"),
      });
      const reply = r.success(
        {
          data: ["x"],
          nextCursor: "c:n/1",
          previousCursor: "c:p",
          hasMore: true,
          limit: 3,
          totalCount: 99,
        },
        exchange("/feed?cursor=c%3Ap&q=1&limit=50"),
        { plan },
      );
      const { pagination } = bodyOf(reply.body).meta!;
      assert.deepEqual(pagination, {
        type: "cursor",
        nextCursor: "c:n/1",
        previousCursor: "c:p",
        hasMore: true,
        limit: 3,
        totalCount: 99,
        links: {
          self: "/feed?cursor=c%3Ap&q=1&limit=3",
          first: "/feed?q=1&limit=3",
          prev: "/feed?cursor=c%3Ap&q=1&limit=3",
          next: "/feed?cursor=c%3An%2F1&q=1&limit=3",
          last: null,
        },
      });
    });

    it(`${format}: a handler's error carries the translated message and every error meta`, () => {
      const { responder: r } = setup(problemDetails);
      const plan = r.plan({ message: "Listed", deprecation, sort: true });
      const thrown = Object.assign(new Error("x"), {
        getStatus: () => 404,
        getResponse: () => ({ message: "messages.missing" }),
      });
      const reply = r.error(thrown, exchange("/items/9", { response: RATE }), {
        plan,
        start: r.start(),
      });
      assert.equal(reply.status, 404);
      const body = bodyOf(reply.body);
      assert.deepEqual(timed(body.meta), COMMON); // no success meta (message, sort) on errors
      assert.equal(body.requestId, "gen");
      assert.equal(problemDetails ? body.detail : body.error!.message, "fr:messages.missing");
      assert.equal(problemDetails ? body.code : body.error!.code, "NOT_FOUND");
      assert.deepEqual(reply.headers, [
        ["Deprecation", "@1767225600"],
        ["Link", '</docs/v2>; rel="deprecation"'],
        ["X-Request-Id", "gen"],
        ...(problemDetails ? [["Content-Type", "application/problem+json; charset=utf-8"]] : []),
      ]);
    });

    it(`${format}: an error before the handler carries the request's meta only`, () => {
      const { responder: r } = setup(problemDetails);
      const reply = r.error(
        new SafeException("DENIED", {
          catalog: defineErrors({ DENIED: { status: 403, message: "messages.denied" } }),
        }),
        exchange("/items", { response: { ...RATE, "x-request-id": "echoed" } }),
      );
      const body = bodyOf(reply.body);
      const { deprecation: _, ...meta } = COMMON;
      assert.deepEqual(body.meta, meta);
      assert.equal(body.requestId, "echoed");
      assert.equal(problemDetails ? body.detail : body.error!.message, "fr:messages.denied");
      assert.equal(reply.headers.some(([name]) => name === "X-Request-Id"), false);
    });
  }

  it("adds sort and filters on a route without pagination, from the result's fields", () => {
    const { responder: r, logs } = responder();
    const plan = r.plan({ route: "A.b", sort: true, filter: true });
    const reply = r.success(
      { data: ["a"], sort: { field: "id", order: "asc" }, filters: { s: "on" } },
      exchange("/"),
      { plan },
    );
    assert.deepEqual(bodyOf(reply.body).data, ["a"]);
    assert.deepEqual(bodyOf(reply.body).meta, {
      sort: { field: "id", order: "asc" },
      filters: { s: "on" },
    });
    r.success(["a"], exchange("/"), { plan });
    assert.deepEqual(logs.warnings.map((line) => line.split(" but ")[0]), [
      "A.b: decorated for sort",
      "A.b: decorated for filters",
    ]);
  });

  it("sends sort and filters only as plain objects: anything else is the mismatch, warned", () => {
    const { responder: r, logs } = responder();
    const plan = r.plan({ route: "A.b", sort: true, filter: true });
    const reply = r.success(
      { data: ["a"], sort: Object.assign([], { field: "id", order: "asc" }), filters: new Date(0) },
      exchange("/"),
      { plan },
    );
    assert.equal(bodyOf(reply.body).meta, undefined);
    assert.deepEqual(logs.warnings.map((line) => line.split(" but ")[0]), [
      "A.b: decorated for sort",
      "A.b: decorated for filters",
    ]);
  });

  it("generates a UUID per request by default, under a custom header name when given", () => {
    const { responder: r } = responder({ requestId: true });
    const plan = r.plan({});
    const ids = [1, 2].map(() => bodyOf(r.success(1, exchange("/"), { plan }).body).requestId);
    for (const id of ids) assert.match(String(id), UUID);
    assert.notEqual(ids[0], ids[1]);
    const custom = responder({ requestId: { headerName: "X-Correlation-Id" } }).responder;
    const reply = custom.success(1, exchange("/", { request: { "x-correlation-id": "corr-1" } }), {
      plan: custom.plan({}),
    });
    assert.equal(bodyOf(reply.body).requestId, "corr-1");
    assert.deepEqual(reply.headers, [["X-Correlation-Id", "corr-1"]]);
  });

  it("gives resolveLanguage the binding's request object", () => {
    const seen: unknown[] = [];
    const { responder: r } = responder({
      i18n: {
        translate: (key) => key,
        resolveLanguage: (request) => {
          seen.push(request);
          return undefined;
        },
      },
    });
    const view = exchange("/");
    r.success(1, view, { plan: r.plan({ message: "m" }) });
    assert.deepEqual(seen, [view.request]);
  });

  it("mirrors no rate limit without the option, and Retry-After on a 429", () => {
    const off = responder().responder;
    assert.equal(
      bodyOf(off.success(1, exchange("/", { response: RATE }), { plan: off.plan({}) }).body).meta,
      undefined,
    );
    const { responder: r } = responder({ rateLimit: { standard: true } });
    const limited = r.error(
      Object.assign(new Error("x"), { getStatus: () => 429, getResponse: () => "Slow down" }),
      exchange("/", {
        response: {
          ratelimit: '"burst";r=0;t=12',
          "ratelimit-policy": '"burst";q=100;w=60',
          "retry-after": "12",
        },
      }),
    );
    assert.equal(limited.status, 429);
    assert.deepEqual(bodyOf(limited.body).meta?.rateLimit, {
      limit: 100,
      remaining: 0,
      reset: 12,
      retryAfter: 12,
    });
  });

  it("never lets a context field override meta the pipeline set", () => {
    const { responder: r } = responder(
      {
        context: {
          fields: { traceId: "trace" },
          resolver: (store) => ({ pagination: store.tenant }),
        },
      },
      { tenant: "acme", trace: "t-1" },
    );
    const plan = r.plan({ pagination: resolvePagination("offset", {}, "t") });
    const reply = r.success({ data: [], total: 0, page: 1, limit: 5 }, exchange("/"), { plan });
    const meta = bodyOf(reply.body).meta!;
    assert.equal((meta.pagination as Bag).type, "offset");
    assert.equal(meta.traceId, "t-1");
  });
  it("leaves out a resolver's field named after a built-in meta field or __proto__", () => {
    const { responder: r } = responder(
      {
        context: {
          resolver: (store) =>
            JSON.parse(
              `{"responseTime":"${store.trace}","apiVersion":2,"__proto__":{"x":1},"tenant":"acme"}`,
            ),
        },
      },
      { trace: "t-1" },
    );
    const meta = bodyOf(r.success(1, exchange("/"), { plan: r.plan({}) }).body).meta!;
    assert.deepEqual(Object.keys(meta), ["tenant"]);
    assert.equal(Object.getPrototypeOf(meta), Object.prototype);
  });
});

describe("Responder: the route's field selection", () => {
  const USER = Object.freeze({
    id: 1,
    name: "Ada",
    address: Object.freeze({ city: "London", zip: "N1" }),
  });

  it("applies to the items of a paginated route", () => {
    const { responder: r } = responder({ fieldSelection: true });
    const plan = r.plan({ pagination: resolvePagination("offset", {}, "t") });
    const reply = r.success(
      { data: [USER, { id: 2, name: "Grace" }], total: 2, page: 1, limit: 10 },
      exchange("/users?fields=name"),
      { plan },
    );
    assert.deepEqual(bodyOf(reply.body).data, [{ name: "Ada" }, { name: "Grace" }]);
    assert.deepEqual(bodyOf(reply.body).meta!.fields, ["name"]);
    assert.equal((bodyOf(reply.body).meta!.pagination as Bag).total, 2);
  });

  it("takes the route's options over the module's, and turns on for one route", () => {
    const on = responder({ fieldSelection: true }).responder;
    const custom = on.plan({ fieldSelection: { queryParam: "select", maxDepth: 1 } });
    assert.deepEqual(
      bodyOf(on.success(USER, exchange("/u?fields=id"), { plan: custom }).body).data,
      USER,
    );
    const reply = on.success(USER, exchange("/u?select=id,address.city"), { plan: custom });
    assert.deepEqual(bodyOf(reply.body).data, { id: 1, address: USER.address }); // maxDepth 1
    assert.deepEqual(bodyOf(reply.body).meta!.fields, ["id", "address"]);
    const off = responder().responder; // module option off
    assert.deepEqual(
      bodyOf(off.success(USER, exchange("/u?fields=id"), { plan: off.plan({}) }).body).data,
      USER,
    );
    const optIn = off.success(USER, exchange("/u?fields=id"), {
      plan: off.plan({ fieldSelection: {} }),
    });
    assert.deepEqual(bodyOf(optIn.body).data, { id: 1 });
    assert.deepEqual(bodyOf(optIn.body).meta, { fields: ["id"] });
  });

  it("leaves raw routes alone", () => {
    const { responder: r } = responder({ fieldSelection: true });
    const reply = r.success(USER, exchange("/u?fields=id"), { plan: r.plan({ raw: true }) });
    assert.equal(reply.body, USER);
  });
});

describe("Responder: the envelope's options", () => {
  it("stamps an ISO timestamp and the path by default, leaves them out when off, sends undefined as null", () => {
    const r = new Responder(resolveSettings());
    const body = bodyOf(r.success(undefined, exchange("/e?q=1"), { plan: r.plan({}) }).body);
    assert.deepEqual(Object.keys(body), ["success", "statusCode", "data", "timestamp", "path"]);
    assert.equal(body.data, null);
    assert.equal(new Date(body.timestamp as string).toISOString(), body.timestamp);
    assert.equal(body.path, "/e");
    // A target that parses as a network-path reference stays on this origin, as links do.
    for (const target of ["//evil.example/e", "/\\evil.example/e", "/\t/evil.example/e"]) {
      const echoed = bodyOf(r.success(1, exchange(target), { plan: r.plan({}) }).body);
      assert.equal(echoed.path, "/evil.example/e", JSON.stringify(target));
      const problem = new Responder(resolveSettings({ problemDetails: true }), {
        logger: new Logs(),
      });
      const failed = bodyOf(problem.error(new Error("x"), exchange(`${target}?q=1`)).body);
      assert.equal(failed.instance, "/evil.example/e", JSON.stringify(target));
    }
    const bare = new Responder(resolveSettings({ timestamp: false, path: false }), {
      logger: new Logs(),
    });
    assert.deepEqual(bare.success(3, exchange("/e"), { plan: bare.plan({}) }).body, {
      success: true,
      statusCode: 200,
      data: 3,
    });
    assert.deepEqual(bare.error(new Error("x"), exchange("/e")).body, {
      success: false,
      statusCode: 500,
      error: { code: "INTERNAL_SERVER_ERROR", message: "Internal Server Error" },
    });
  });

  it("transforms the result before pagination reads it", () => {
    const { responder: r } = responder({
      transformResponse: (data) => {
        const value = data as { items: unknown[]; count: number };
        return { data: value.items, total: value.count, page: 1, limit: 10 };
      },
    });
    const plan = r.plan({ pagination: resolvePagination("offset", {}, "t") });
    const reply = r.success({ items: ["a", "b"], count: 2 }, exchange("/"), { plan });
    assert.deepEqual(bodyOf(reply.body).data, ["a", "b"]);
    assert.equal((bodyOf(reply.body).meta!.pagination as Bag).total, 2);
  });
});

describe("Responder: catalog errors", () => {
  const Errors = defineErrors({
    USER_NOT_FOUND: { status: 404, message: "User not found" },
    EMAIL_TAKEN: { status: 409, message: "Email already registered", details: { field: "email" } },
  });

  it("sends a key's status, message and details as the error envelope", () => {
    const { responder: r } = responder({ errorCatalog: Errors, path: false });
    const reply = r.error(
      Errors.exception("EMAIL_TAKEN", { message: "a@b.c is taken" }),
      exchange("/c"),
    );
    assert.equal(reply.status, 409);
    assert.deepEqual(reply.body, {
      success: false,
      statusCode: 409,
      error: { code: "EMAIL_TAKEN", message: "a@b.c is taken", details: { field: "email" } },
    });
  });

  it("sends problem details with the type derived from the key and the mapper's code", () => {
    const { responder: r } = responder({
      errorCatalog: Errors,
      problemDetails: { baseUrl: "https://api.example.com/problems" },
      errorCodeMapper: (_thrown, { defaultCode }) =>
        defaultCode === "EMAIL_TAKEN" ? "EMAIL_CONFLICT" : undefined,
    });
    assert.deepEqual(r.error(new SafeException("USER_NOT_FOUND"), exchange("/c/u")).body, {
      type: "https://api.example.com/problems/user-not-found",
      title: "Not Found",
      status: 404,
      detail: "User not found",
      instance: "/c/u",
      code: "USER_NOT_FOUND",
    });
    const taken = bodyOf(r.error(new SafeException("EMAIL_TAKEN"), exchange("/c")).body);
    assert.equal(taken.code, "EMAIL_CONFLICT");
    assert.deepEqual(taken.details, { field: "email" });
  });

  it("logs the cause of a 5xx key (API keys redacted), never sending it; a 4xx's is not logged", () => {
    const Outage = defineErrors({ DB_DOWN: { status: 503, message: "Try again later" } });
    const { responder: r, logs } = responder({ errorCatalog: Errors });
    const { raw, secret } = generateKey({ environment: "live" });
    const cause = new Error(`ECONNREFUSED 10.0.0.5:5432 for ${raw}`);
    const reply = r.error(Outage.exception("DB_DOWN", { cause }), exchange("/"));
    assert.equal(reply.status, 503);
    assert.equal(JSON.stringify(reply.body).includes("ECONNREFUSED"), false);
    assert.equal(logs.errors.length, 1);
    assert.match(logs.errors[0], /^SafeException DB_DOWN \(503\), caused by Error: ECONNREFUSED/);
    assert.equal(logs.errors[0].includes(secret), false);
    r.error(Outage.exception("DB_DOWN"), exchange("/"));
    r.error(Errors.exception("USER_NOT_FOUND", { cause }), exchange("/"));
    assert.equal(logs.errors.length, 1, "no cause, or a 4xx: nothing logged");
  });

  it("answers a key in no catalog with a generic 500 and logs why", () => {
    const { responder: r, logs } = responder({ errorCatalog: Errors });
    const reply = r.error(new SafeException("GHOST_KEY"), exchange("/"));
    assert.equal(reply.status, 500);
    assert.equal(JSON.stringify(reply.body).includes("GHOST"), false);
    assert.equal(
      logs.errors.filter((line) => line.includes("`GHOST_KEY` is not in the error catalog")).length,
      1,
    );
  });
});

describe("Responder: application functions that throw or return a promise", () => {
  const SECRET = "callback-internal-4f1d.db.local";
  const KINDS = ["throws", "rejects with an Error", "rejects with a non-Error"] as const;
  /** A function failing as `kind` (a rejected promise is a failure: they must be synchronous). */
  const failing = (kind: (typeof KINDS)[number]) => (): never => {
    if (kind === "throws") throw new TypeError(SECRET);
    return Promise.reject(kind === "rejects with an Error" ? new Error(SECRET) : SECRET) as never;
  };
  /** Lets a rejection nobody handled surface (the test run fails on one). */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 10));
  const generic500 = (reply: { status: number; body: unknown }) => {
    assert.equal(reply.status, 500);
    assert.deepEqual(bodyOf(reply.body).error, {
      code: "INTERNAL_SERVER_ERROR",
      message: "Internal Server Error",
    });
    assert.equal(JSON.stringify(reply.body).includes(SECRET), false);
  };

  for (const kind of KINDS) {
    it(`the envelope's options ${kind}: the binding's generic 500, logged`, async () => {
      const fail = failing(kind);
      const cases: Array<[string, SafeResponseModuleOptions, (r: Responder) => Reply]> = [
        [
          "successCodeMapper",
          { successCodeMapper: (status) => status === 200 ? "OK" : fail() },
          (r) => {
            const plan = r.plan({}); // the mapper's code of 200, read at plan time
            return r.success(1, exchange("/", { status: 202 }), { plan }); // read again for 202
          },
        ],
        [
          "dateFormatter",
          { timestamp: true, dateFormatter: fail },
          (r) => r.success(1, exchange("/"), { plan: r.plan({}) }),
        ],
        [
          "transformResponse",
          { transformResponse: fail },
          (r) => r.success(1, exchange("/"), { plan: r.plan({}) }),
        ],
        [
          "errorCodeMapper",
          { errorCodeMapper: fail },
          (r) =>
            r.error(
              Object.assign(new Error("x"), { getStatus: () => 404, getResponse: () => "No" }),
              exchange("/"),
            ),
        ],
      ];
      for (const [name, options, run] of cases) {
        const { responder: r, logs } = responder(options);
        let reply: Reply;
        try {
          reply = run(r);
        } catch (thrown) {
          reply = r.error(thrown, exchange("/")); // what every binding does with a throw
        }
        generic500(reply);
        assert.ok(logs.errors.some((line) => line.includes(`option \`${name}\``)), name);
      }
      const planned = responder({ successCodeMapper: fail }).responder;
      assert.throws(() => planned.plan({}), /option `successCodeMapper`/); // read at plan time
      await settle();
    });

    it(`version, i18n and context functions ${kind}: the value left out, logged`, async () => {
      const fail = failing(kind);
      const ok = { translate: (key: string) => `t:${key}`, resolveLanguage: () => "fr" };
      const cases: Array<[string, SafeResponseModuleOptions, Bag | undefined]> = [
        ["option `version`", { version: fail }, undefined],
        ["i18n translate", { i18n: { ...ok, translate: fail } }, { message: "m" }],
        ["i18n resolveLanguage", { i18n: { ...ok, resolveLanguage: fail } }, { message: "m" }],
        [
          "option `context.resolver`",
          { context: { fields: { traceId: "trace" }, resolver: fail } },
          { message: "m", traceId: "t-1" },
        ],
      ];
      for (const [name, options, meta] of cases) {
        const { responder: r, logs } = responder(options, { trace: "t-1" });
        assert.equal(r.versionOf({}), undefined);
        const reply = r.success(1, exchange("/"), { plan: r.plan({ message: "m" }) });
        assert.equal(reply.status, 200, name);
        assert.deepEqual(bodyOf(reply.body).meta, meta ?? { message: "m" }, name);
        const error = r.error(
          Object.assign(new Error("x"), { getStatus: () => 404, getResponse: () => "m" }),
          exchange("/"),
        );
        assert.equal(error.status, 404, name);
        assert.equal(bodyOf(error.body).error!.message, "m", name);
        assert.ok(logs.errors.some((line) => line.includes(name)), `${name}: not logged`);
      }
      const store = new Responder(
        resolveSettings({ timestamp: false, context: { fields: { traceId: "trace" } } }),
        { logger: new Logs(), store: fail },
      );
      assert.equal(
        bodyOf(store.success(1, exchange("/"), { plan: store.plan({}) }).body).meta,
        undefined,
      );
      await settle();
    });
  }

  it("leaves out a store value whose getter throws, keeping the others", () => {
    const store: Bag = { trace: "t-1" };
    Object.defineProperty(store, "hostile", {
      enumerable: true,
      get() {
        throw new Error(SECRET);
      },
    });
    const { responder: r, logs } = responder(
      { context: { fields: { traceId: "trace", hostile: "hostile" } } },
      store,
    );
    const reply = r.success(1, exchange("/"), { plan: r.plan({}) });
    assert.deepEqual(bodyOf(reply.body).meta, { traceId: "t-1" });
    assert.equal(logs.errors.length, 1);
  });

  it("leaves out a store or resolver value JSON cannot encode (a BigInt, a cycle), logged: the reply and its error fallback still serialise", () => {
    const cycle: Bag = {};
    cycle.self = cycle;
    const { responder: r, logs } = responder(
      {
        context: {
          fields: { traceId: "trace", userId: "user", loop: "loop", tenant: "tenant" },
          resolver: (store) => ({ big: store.user, depth: { n: 1 } }),
        },
      },
      { trace: "t-1", user: 42n, loop: cycle, tenant: { id: "acme" } },
    );
    const reply = r.success(1, exchange("/"), { plan: r.plan({}) });
    const meta = { traceId: "t-1", tenant: { id: "acme" }, depth: { n: 1 } };
    assert.deepEqual(JSON.parse(JSON.stringify(reply.body)).meta, meta);
    assert.equal(logs.errors.length, 3, logs.errors.join("\n"));
    assert.ok(logs.errors.every((line) => !line.includes("42")), "a value is never logged");
    const error = r.error(new Error("boom"), exchange("/"));
    assert.equal(error.status, 500);
    assert.deepEqual(JSON.parse(JSON.stringify(error.body)).meta, meta);
  });

  it("sends a context field named like an Object.prototype member (toString, constructor) beside others", () => {
    const { responder: r } = responder(
      { context: { fields: { traceId: "t", toString: "s", constructor: "c" } } },
      { t: "trace-1", s: "S", c: "C" },
    );
    const reply = r.success(1, exchange("/"), { plan: r.plan({}) });
    assert.deepEqual(bodyOf(reply.body).meta, {
      traceId: "trace-1",
      toString: "S",
      constructor: "C",
    });
  });
});
