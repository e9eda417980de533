import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HttpException } from "@nestjs/common";
import { ApiKeyError, ApiKeyStorageError, generateKey } from "../../../api_keys/mod.ts";
import { isError, isProblemDetailsResponse, isSuccess } from "../../../client/mod.ts";
import {
  defineErrors,
  type I18nAdapter,
  type ResponderLogger,
  SafeException,
} from "../../../safe_response/mod.ts";
import {
  createSafeFetch,
  type SafeFetchOptions,
} from "../../../safe_response/fetch/safe_response.fetch.ts";
import { readJsonBody } from "../../../safe_response/fetch/read_json_body.ts";

// deno-lint-ignore no-explicit-any
type Bag = Record<string, any>;

import { collectUnhandledRejections } from "../../reliability/harness.ts";
const Errors = defineErrors({
  ITEM_NOT_FOUND: { status: 404, message: "No such item" },
  SLOW_DOWN: { status: 429, message: "Slow down" },
});

function recordingLogger() {
  const lines: string[] = [];
  const logger: ResponderLogger = {
    warn: (message) => lines.push(`warn ${message}`),
    error: (message) => lines.push(`error ${message}`),
  };
  return { lines, logger };
}

async function read(response: Response): Promise<{ status: number; headers: Headers; body: Bag }> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} };
}

const at = (target: string, init?: RequestInit) => new Request(`http://localhost${target}`, init);

function safeWith(options: SafeFetchOptions = {}) {
  const { lines, logger } = recordingLogger();
  return { safe: createSafeFetch({ timestamp: false, logger, ...options }), lines };
}

describe("createSafeFetch route: successes", () => {
  it("wraps a result in the success envelope, JSON, with path and the route's status", async () => {
    const { safe } = safeWith({ timestamp: true });
    const created = safe.route({ statusCode: 201, successCode: "ITEM_CREATED" }, () => ({ id: 1 }));
    const { status, headers, body } = await read(
      await created(at("/items?x=1", { method: "POST" })),
    );
    assert.equal(status, 201);
    assert.equal(headers.get("content-type"), "application/json; charset=utf-8");
    assert.equal(body.success, true);
    assert.equal(body.statusCode, 201);
    assert.equal(body.code, "ITEM_CREATED");
    assert.deepEqual(body.data, { id: 1 });
    assert.equal(body.path, "/items");
    assert.equal(typeof body.timestamp, "string");
  });

  it("passes the arguments after the request to the handler, and awaits it", async () => {
    const { safe } = safeWith();
    const handler = safe.route({}, async (_request, _context, info: unknown, extra: unknown) => {
      await Promise.resolve();
      return { info, extra };
    });
    const { body } = await read(await handler(at("/"), "info", 7));
    assert.deepEqual(body.data, { info: "info", extra: 7 });
  });

  it("adds every route meta: message, pagination with links, sort, filters, fields", async () => {
    const { safe } = safeWith();
    const list = safe.route(
      {
        responseMessage: "Listed",
        paginated: { maxLimit: 50, links: true },
        sortMeta: true,
        filterMeta: true,
        fieldSelection: true,
      },
      () => ({
        data: [{ id: "a", name: "A", secret: 1 }, { id: "b", name: "B", secret: 2 }],
        total: 7,
        page: 2,
        limit: 2,
        sort: { field: "name", order: "asc" },
        filters: { status: "active" },
      }),
    );
    const { body } = await read(await list(at("/items?page=2&limit=2&fields=id,name")));
    assert.deepEqual(body.data, [{ id: "a", name: "A" }, { id: "b", name: "B" }]);
    assert.equal(body.meta.message, "Listed");
    assert.equal(body.meta.pagination.totalPages, 4);
    assert.equal(body.meta.pagination.links.next, "/items?page=3&limit=2&fields=id%2Cname");
    assert.deepEqual(body.meta.sort, { field: "name", order: "asc" });
    assert.deepEqual(body.meta.filters, { status: "active" });
    assert.deepEqual(body.meta.fields, ["id", "name"]);
  });

  it("selects fields in a posted value of 3,000 nested arrays as it sends it whole: a 200, nothing logged", async () => {
    const { safe, lines } = safeWith();
    const echo = safe.route({ fieldSelection: true }, async (request) => ({
      id: 1,
      tags: await readJsonBody(request),
    }));
    // Past the recursion of before (about 1,800 levels); Node 20's JSON.stringify sends about 4,000.
    const nested = (inner: string) => "[".repeat(3_000) + inner + "]".repeat(3_000);
    const post = (query: string) =>
      echo(at(`/echo${query}`, { method: "POST", body: nested('{"id":2,"secret":"s"}') }));
    const whole = await read(await post(""));
    assert.equal(whole.status, 200);
    const picked = await post("?fields=id,tags.id");
    assert.equal(picked.status, 200);
    assert.ok((await picked.text()).includes(`"data":{"id":1,"tags":${nested('{"id":2}')}}`));
    assert.deepEqual(lines, []);
  });

  it("adds cursor pagination", async () => {
    const { safe } = safeWith();
    const feed = safe.route(
      { cursorPaginated: { links: true } },
      () => ({ data: [1, 2], nextCursor: "c2", hasMore: true, limit: 2 }),
    );
    const { body } = await read(await feed(at("/feed?limit=2")));
    assert.equal(body.meta.pagination.nextCursor, "c2");
    assert.equal(body.meta.pagination.links.next, "/feed?limit=2&cursor=c2");
  });

  it("sends deprecation, sunset and link headers with meta.deprecation, on errors too", async () => {
    const { safe } = safeWith();
    const deprecated = {
      since: "2025-01-01T00:00:00Z",
      sunset: "2030-01-01T00:00:00Z",
      link: "/v2",
    };
    const ok = safe.route({ deprecated }, () => "old");
    const failing = safe.route({ deprecated }, () => {
      throw new SafeException("ITEM_NOT_FOUND", { catalog: Errors });
    });
    for (const [handler, status] of [[ok, 200], [failing, 404]] as const) {
      const { headers, body } = await read(await handler(at("/v1")));
      assert.equal(headers.get("deprecation"), "@1735689600", String(status));
      assert.equal(headers.get("sunset"), "Tue, 01 Jan 2030 00:00:00 GMT");
      assert.equal(headers.get("link"), '</v2>; rel="deprecation"');
      assert.equal(body.meta.deprecation.sunset, "2030-01-01T00:00:00.000Z");
    }
  });

  it("echoes a safe request id, adds response time and the API version", async () => {
    const { safe } = safeWith({ requestId: true, responseTime: true, version: "2" });
    const handler = safe.route({}, () => ({}));
    const echoed = await read(await handler(at("/", { headers: { "x-request-id": "req-1" } })));
    assert.equal(echoed.body.requestId, "req-1");
    assert.equal(echoed.headers.get("x-request-id"), "req-1");
    assert.equal(typeof echoed.body.meta.responseTime, "number");
    assert.equal(echoed.body.meta.apiVersion, "2");
    const fresh = await read(await handler(at("/", { headers: { "x-request-id": "a b" } })));
    assert.match(fresh.body.requestId, /^[0-9a-f-]{36}$/);
    assert.equal(fresh.headers.get("x-request-id"), fresh.body.requestId);
    const versioned = safe.route({ apiVersion: "3" }, () => ({}));
    assert.equal((await read(await versioned(at("/")))).body.meta.apiVersion, "3");
  });

  it("replies with a random UUID when the request-id generator fails or returns an unsafe id", async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const generators: Array<() => unknown> = [
      () => "bad\nid",
      () => 42,
      () => "x".repeat(100_000),
      () => {
        throw new Error("boom");
      },
    ];
    for (const generator of generators) {
      const { safe, lines } = safeWith({ requestId: { generator: generator as () => string } });
      for (const handler of [safe.route({}, () => ({})), safe.route({}, () => Promise.reject(1))]) {
        const { headers, body } = await read(await handler(at("/")));
        assert.match(body.requestId, uuid, String(generator));
        assert.equal(headers.get("x-request-id"), body.requestId);
      }
      assert.equal(lines.some((line) => line.includes("Invalid header value")), false);
    }
  });

  it("asks a version function with the Request", async () => {
    const { safe } = safeWith({ version: (request) => request.headers.get("x-v") ?? undefined });
    const handler = safe.route({}, () => ({}));
    const { body } = await read(await handler(at("/", { headers: { "x-v": "9" } })));
    assert.equal(body.meta.apiVersion, "9");
  });

  it("sends the headers and status the handler sets, mirroring rate limits into meta", async () => {
    const { safe } = safeWith({ rateLimit: true });
    const handler = safe.route({}, (_request, context) => {
      context.headers.set("X-RateLimit-Limit", "10");
      context.headers.set("X-RateLimit-Remaining", "9");
      context.headers.set("X-RateLimit-Reset", "60");
      context.headers.set("X-Extra", "yes");
      context.status = 202;
      return { ok: true };
    });
    const { status, headers, body } = await read(await handler(at("/")));
    assert.equal(status, 202);
    assert.equal(body.statusCode, 202);
    assert.equal(headers.get("x-extra"), "yes");
    assert.equal(headers.get("content-type"), "application/json; charset=utf-8");
    assert.deepEqual(body.meta.rateLimit, { limit: 10, remaining: 9, reset: 60 });
    const limited = safe.route({}, (_request, context) => {
      context.headers.set("X-RateLimit-Limit", "10");
      context.headers.set("X-RateLimit-Remaining", "0");
      context.headers.set("X-RateLimit-Reset", "30");
      context.headers.set("Retry-After", "30");
      throw new SafeException("SLOW_DOWN", { catalog: Errors });
    });
    const refused = await read(await limited(at("/")));
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("retry-after"), "30");
    assert.equal(refused.body.meta.rateLimit.retryAfter, 30);
  });

  it("sends context.status instead of the route's statusCode, 200 included, and codes the status sent", async () => {
    const { safe } = safeWith({ successCodeMapper: (status) => `S_${status}` });
    for (const [set, sent] of [[200, 200], [202, 202], [undefined, 201]] as const) {
      const handler = safe.route({ statusCode: 201 }, (_request, context) => {
        if (set !== undefined) context.status = set;
        return { created: set === undefined };
      });
      const { status, body } = await read(await handler(at("/items", { method: "POST" })));
      assert.equal(status, sent);
      assert.equal(body.statusCode, sent);
      assert.equal(body.code, `S_${sent}`);
    }
  });

  it("answers a context.status that is not an integer status from 200 to 599 as a logged 500", async () => {
    const { safe, lines } = safeWith();
    // 101 to 199: a `Response` carries none of them (Deno's takes a 101, sent with no upgrade).
    const bad = [200.5, 999, 99, 100, 101, 150, 199];
    for (const set of bad) {
      const handler = safe.route({}, (_request, context) => {
        context.status = set;
        return 1;
      });
      const { status, body } = await read(await handler(at("/")));
      assert.equal(status, 500, String(set));
      assert.equal(body.error.code, "INTERNAL_SERVER_ERROR");
    }
    assert.equal(lines.length, bad.length, lines.join("\n"));
    for (const line of lines) assert.match(line, /not an integer from 200 to 599/, line);
  });

  it("answers a 204, 205 or 304 success with no body, as Nest does, keeping its headers", async () => {
    const { safe, lines } = safeWith({
      requestId: true,
      rateLimit: { standard: true },
      responseHeaders: () => [["RateLimit", '"demo";r=9;t=60']],
    });
    const deprecated = { since: "2025-01-01T00:00:00Z" };
    let removed = 0;
    for (const status of [204, 205, 304]) {
      const byOption = safe.route({ statusCode: status, deprecated }, () => {
        removed++;
      });
      const byContext = safe.route({ deprecated }, (_request, context) => {
        removed++;
        context.status = status;
        return { id: "a" };
      });
      for (const handler of [byOption, byContext]) {
        const response = await handler(at("/items/a", { headers: { "x-request-id": "req-1" } }));
        assert.equal(response.status, status);
        assert.equal(await response.text(), "");
        assert.equal(response.headers.get("content-type"), null);
        assert.equal(response.headers.get("x-request-id"), "req-1");
        assert.equal(response.headers.get("ratelimit"), '"demo";r=9;t=60');
        assert.equal(response.headers.get("deprecation"), "@1735689600");
      }
    }
    assert.equal(removed, 6);
    assert.deepEqual(lines, []);
  });

  it("cancels a stream it does not send (a null body status, a result it cannot answer), and drops a Content-Type with no body", async () => {
    const { safe } = safeWith();
    const cancelled: string[] = [];
    const stream = (name: string) =>
      new ReadableStream({ cancel: () => void cancelled.push(name) }); // a file's, a socket's
    const notModified = safe.route({}, (_request, context) => {
      context.headers.set("Content-Type", "application/json");
      context.status = 304;
      return stream("304");
    });
    const noContent = safe.route({ rawResponse: true, statusCode: 204 }, () => stream("204"));
    const unanswerable = safe.route({}, (_request, context) => {
      context.status = 1000; // no status: a 500, the handler's body never sent
      return stream("1000");
    });
    const inResponse = safe.route({}, (_request, context) => {
      context.status = 1000;
      return new Response(stream("response"));
    });
    const statuses = [];
    for (const handler of [notModified, noContent, unanswerable, inResponse]) {
      const answer = await handler(at("/"));
      await answer.body?.cancel();
      statuses.push([answer.status, answer.headers.get("content-type")]);
    }
    assert.deepEqual(statuses, [
      [304, null],
      [204, null],
      [500, "application/json; charset=utf-8"],
      [500, "application/json; charset=utf-8"],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.deepEqual(cancelled, ["304", "204", "1000", "response"]);
  });

  it("sends raw results, bytes, streams and Responses as they are", async () => {
    const { safe } = safeWith();
    const deprecated = { since: "2025-01-01T00:00:00Z" };
    const raw = safe.route({ rawResponse: true, deprecated }, () => ({ raw: true }));
    const rawAnswer = await raw(at("/raw"));
    assert.deepEqual(await rawAnswer.json(), { raw: true });
    assert.equal(rawAnswer.headers.get("deprecation"), "@1735689600");
    const text = safe.route({ rawResponse: true }, () => "plain");
    assert.equal(await (await text(at("/"))).text(), "plain");
    const empty = safe.route({ rawResponse: true, statusCode: 204 }, () => undefined);
    const none = await empty(at("/"));
    assert.equal(none.status, 204);
    assert.equal(await none.text(), "");
    const bytes = safe.route({}, () => new TextEncoder().encode("bytes"));
    assert.equal(await (await bytes(at("/"))).text(), "bytes");
    const own = safe.route({ deprecated }, (_request, context) => {
      context.headers.set("X-Handler", "1");
      return new Response("teapot", { status: 418, headers: { "X-Own": "1" } });
    });
    const answer = await own(at("/"));
    assert.equal(answer.status, 418);
    assert.equal(await answer.text(), "teapot");
    assert.equal(answer.headers.get("x-own"), "1");
    assert.equal(answer.headers.get("x-handler"), "1");
    assert.equal(answer.headers.get("deprecation"), "@1735689600");
  });

  it("sends the request id on raw and passthrough answers, as Nest does", async () => {
    const { safe } = safeWith({ requestId: true });
    const traced = { headers: { "x-request-id": "trace-42" } };
    const results: Array<[string, () => unknown]> = [
      ["raw object", () => ({ raw: true })],
      ["raw text", () => "plain"],
      ["bytes", () => new TextEncoder().encode("bytes")],
      ["stream", () => new Blob(["stream"]).stream()],
      ["Response", () => new Response("own")],
      ["redirect", () => Response.redirect("http://localhost/elsewhere", 302)],
    ];
    for (const [name, result] of results) {
      const handler = safe.route({ rawResponse: name.startsWith("raw") }, result);
      const echoed = await handler(at("/", traced));
      await echoed.body?.cancel();
      assert.equal(echoed.headers.get("x-request-id"), "trace-42", name);
      const fresh = await handler(at("/"));
      await fresh.body?.cancel();
      assert.match(fresh.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/, name);
    }
    const own = safe.route({}, () => new Response("own", { headers: { "X-Request-Id": "mine" } }));
    const kept = await own(at("/", traced));
    assert.equal(kept.headers.get("x-request-id"), "mine");
    assert.equal(await kept.text(), "own");
  });

  it("appends a deprecated route's links to the Link of the handler's Response", async () => {
    const { safe } = safeWith();
    const deprecated = { since: "2025-01-01T00:00:00Z", link: "/v2" };
    const handler = safe.route({ deprecated }, (_request, context) => {
      context.headers.set("Link", '</context>; rel="help"');
      return new Response("own", { headers: { Link: '</next>; rel="next"' } });
    });
    const answer = await handler(at("/v1"));
    await answer.body?.cancel();
    assert.equal(answer.headers.get("link"), '</next>; rel="next", </v2>; rel="deprecation"');
  });

  it("keeps the Content-Type a raw route's handler set; JSON only when it set none", async () => {
    const { safe } = safeWith();
    const type = "application/vnd.api+json; charset=utf-8";
    const typed = safe.route({ rawResponse: true }, (_request, context) => {
      context.headers.set("Content-Type", type);
      return { data: { id: "1" } };
    });
    const answer = await typed(at("/"));
    assert.equal(answer.headers.get("content-type"), type);
    assert.deepEqual(await answer.json(), { data: { id: "1" } });
    const untyped = safe.route({ rawResponse: true }, (_request, context) => {
      context.headers.set("X-Other", "1");
      return { data: { id: "1" } };
    });
    assert.equal(
      (await untyped(at("/"))).headers.get("content-type"),
      "application/json; charset=utf-8",
    );
    const wrapped = safe.route({}, (_request, context) => {
      context.headers.set("Content-Type", "application/vnd.api+json");
      return { id: "1" };
    });
    const envelope = await wrapped(at("/"));
    // A JSON media type of the handler's own is kept, as Express and Fastify keep Nest's.
    assert.equal(envelope.headers.get("content-type"), "application/vnd.api+json; charset=utf-8");
    assert.deepEqual((await envelope.json()).data, { id: "1" });
    const failing = safe.route({}, (_request, context) => {
      context.headers.set("Content-Type", "application/vnd.api+json; charset=utf-8");
      throw new SafeException("ITEM_NOT_FOUND", { catalog: Errors });
    });
    const refused = await failing(at("/"));
    assert.equal(refused.status, 404);
    assert.equal(refused.headers.get("content-type"), "application/vnd.api+json; charset=utf-8");
    assert.equal((await refused.json()).error.code, "ITEM_NOT_FOUND");
  });

  it("sends a result as it is when the handler set a non-JSON Content-Type, as Nest does", async () => {
    const { safe } = safeWith({ requestId: true });
    const page = safe.route({ deprecated: { since: "2025-01-01T00:00:00Z" } }, (_r, context) => {
      context.headers.set("Content-Type", "text/html; charset=utf-8");
      return "<!doctype html><title>API keys</title>";
    });
    const answer = await page(at("/settings"));
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(answer.headers.get("deprecation"), "@1735689600");
    assert.match(answer.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
    assert.equal(await answer.text(), "<!doctype html><title>API keys</title>");
  });
});

describe("createSafeFetch route: errors", () => {
  it("answers a catalog error with its status, key and details, and the route's problem type", async () => {
    const { safe } = safeWith({ errorCatalog: Errors });
    const handler = safe.route({ problemType: "https://example.com/p/item" }, () => {
      throw new SafeException("ITEM_NOT_FOUND", { details: { id: "x" } });
    });
    const { status, body } = await read(await handler(at("/items/x")));
    assert.equal(status, 404);
    assert.deepEqual(body.error, {
      code: "ITEM_NOT_FOUND",
      message: "No such item",
      details: { id: "x" },
    });
    assert.equal(body.path, "/items/x");
    const problems = safeWith({ errorCatalog: Errors, problemDetails: true }).safe;
    const typed = problems.route({ problemType: "https://example.com/p/item" }, () => {
      throw new SafeException("ITEM_NOT_FOUND");
    });
    const problem = await read(await typed(at("/items/x")));
    assert.equal(
      problem.headers.get("content-type"),
      "application/problem+json; charset=utf-8",
    );
    assert.equal(problem.body.type, "https://example.com/p/item");
    assert.equal(problem.body.code, "ITEM_NOT_FOUND");
    assert.equal(problem.body.instance, "/items/x");
  });

  it("answers ApiKeyError and ApiKeyStorageError with their status and code", async () => {
    const { safe } = safeWith();
    for (
      const [error, status, code] of [
        [new ApiKeyError("api_key_scope_insufficient"), 403, "api_key_scope_insufficient"],
        [
          new ApiKeyStorageError("findByPrefix", new Error("pw=hunter2")),
          503,
          "api_key_storage_unavailable",
        ],
      ] as const
    ) {
      const handler = safe.route({}, () => Promise.reject(error));
      const { status: sent, body } = await read(await handler(at("/")));
      assert.equal(sent, status);
      assert.equal(body.error.code, code);
      assert.ok(!JSON.stringify(body).includes("hunter2"));
    }
  });

  it("answers an HTTP exception whose body is an Error with its status's title and code only", async () => {
    const driverError = Object.assign(new Error("unique violation in /srv/app/users.ts:42"), {
      code: "P2002",
    });
    for (const problemDetails of [false, true]) {
      const { safe } = safeWith({ problemDetails });
      const handler = safe.route({}, () => {
        throw new HttpException(driverError, 409);
      });
      const { status, body } = await read(await handler(at("/users")));
      assert.equal(status, 409);
      const text = JSON.stringify(body);
      assert.ok(!text.includes("/srv/app") && !text.includes("P2002"), text);
      const { code, message } = problemDetails ? { ...body, message: body.detail } : body.error;
      assert.deepEqual([code, message], ["CONFLICT", "Conflict"]);
    }
  });

  it("answers anything else as a generic 500, logged with API keys redacted", async () => {
    const { safe, lines } = safeWith();
    const key = generateKey({ environment: "live", namespace: "ak" }).raw;
    const handler = safe.route({}, () => {
      throw new Error(`db password hunter2 for ${key}`);
    });
    const { status, body } = await read(await handler(at("/boom")));
    assert.equal(status, 500);
    assert.deepEqual(body.error, {
      code: "INTERNAL_SERVER_ERROR",
      message: "Internal Server Error",
    });
    assert.ok(!JSON.stringify(body).includes("hunter2"));
    assert.equal(lines.length, 1);
    assert.ok(lines[0].startsWith("error "));
    assert.ok(lines[0].includes("hunter2"), "the line says what failed");
    assert.ok(!lines[0].includes(key), "but never the key");
  });

  it("redacts the keys of the legacyKeyLayouts option from the logged lines and stacks", async () => {
    const legacy = `ak_live_${"A".repeat(12)}_${"b".repeat(32)}`;
    const logged: string[] = [];
    const safe = createSafeFetch({
      legacyKeyLayouts: ["nestarc-v0"],
      logger: { warn: (m) => logged.push(m), error: (m, stack) => logged.push(m, stack ?? "") },
      responseHeaders: () => {
        throw new Error(`no headers for ${legacy}`);
      },
    });
    const handler = safe.route({}, () => {
      throw new Error(`upstream refused ${legacy}`);
    });
    assert.equal((await handler(at("/boom"))).status, 500);
    assert.ok(logged.some((l) => l.includes("no headers for [REDACTED_API_KEY]")), logged.join());
    assert.ok(logged.some((l) => l.includes("upstream refused [REDACTED_API_KEY]")), logged.join());
    assert.ok(logged.some((l) => l.includes("at ")), "the stack is logged");
    assert.ok(!logged.some((l) => l.includes(legacy)), "never the legacy key");
  });

  it("answers a result JSON cannot carry as a logged 500", async () => {
    const { safe, lines } = safeWith();
    const handler = safe.route({}, () => ({ big: 1n }));
    const { status, body } = await read(await handler(at("/")));
    assert.equal(status, 500);
    assert.equal(body.error.code, "INTERNAL_SERVER_ERROR");
    assert.equal(lines.length, 1);
  });

  it("answers a failing option function with a generic 500 (contained)", async () => {
    const { safe } = safeWith({
      transformResponse: () => {
        throw new Error("transform secret");
      },
    });
    const { status, body } = await read(await safe.route({}, () => 1)(at("/")));
    assert.equal(status, 500);
    assert.ok(!JSON.stringify(body).includes("secret"));
  });

  it("sends the request id and the format's media type on the 500 of an error reply that cannot be built", async () => {
    const unbuildable: Array<[string, SafeFetchOptions]> = [
      ["envelope", {
        timestamp: true,
        dateFormatter: () => {
          throw new Error("no clock");
        },
      }],
      ["problem details", {
        problemDetails: { baseUrl: "https://api.example.com/problems" },
        errorCodeMapper: (_error, { defaultCode }) => `${defaultCode}\uD800`, // not a URI
      }],
    ];
    for (const [format, options] of unbuildable) {
      const { safe, lines } = safeWith({ ...options, requestId: true });
      const handler = safe.route({}, () => {
        throw new HttpException("Not here", 404);
      });
      for (const incoming of ["req-1", undefined]) {
        const headers: HeadersInit = incoming === undefined ? {} : { "x-request-id": incoming };
        const response = await read(await handler(at("/items", { headers })));
        assert.equal(response.status, 500, format);
        const id = response.headers.get("x-request-id");
        assert.equal(id, incoming ?? response.body.requestId, format);
        assert.equal(typeof response.body.requestId, "string", format);
        assert.equal(response.body.requestId, id, format);
        if (format === "envelope") {
          assert.equal(response.headers.get("content-type"), "application/json; charset=utf-8");
          assert.equal(isError(response.body), true);
        } else {
          assert.equal(
            response.headers.get("content-type"),
            "application/problem+json; charset=utf-8",
          );
          assert.equal(isProblemDetailsResponse(response.body), true);
          assert.equal(response.body.code, "INTERNAL_SERVER_ERROR");
        }
      }
      assert.equal(lines.length, 2, format); // each failure logged
    }
  });
});

describe("createSafeFetch errorResponse", () => {
  it("answers an error raised before a handler without route meta", async () => {
    const { safe } = safeWith({ requestId: true, responseTime: true, version: "1" });
    const response = safe.errorResponse(
      new ApiKeyError("api_key_missing"),
      at("/items", { headers: { "x-request-id": "r-9" } }),
    );
    const { status, headers, body } = await read(response);
    assert.equal(status, 401);
    assert.equal(headers.get("x-request-id"), "r-9");
    assert.deepEqual(body.error, { code: "api_key_missing", message: "API key is missing" });
    assert.deepEqual(body.meta, { apiVersion: "1" }, "no responseTime before a handler");
    assert.equal(body.path, "/items");
  });
});

describe("createSafeFetch options", () => {
  it("translates messages with an I18nAdapter given the Request", async () => {
    const adapter: I18nAdapter = {
      translate: (key, options) => `${options?.lang}:${key}`,
      resolveLanguage: (request) =>
        (request as Request).headers.get("accept-language") ?? undefined,
    };
    const { safe } = safeWith({ i18n: adapter });
    const handler = safe.route({ responseMessage: "hello" }, () => ({}));
    const { body } = await read(await handler(at("/", { headers: { "accept-language": "fr" } })));
    assert.equal(body.meta.message, "fr:hello");
  });

  it("copies request-context fields from contextStore", async () => {
    const { safe } = safeWith({
      context: { fields: { traceId: "trace" } },
      contextStore: () => ({ trace: "t-1" }),
    });
    const { body } = await read(await safe.route({}, () => ({}))(at("/")));
    assert.equal(body.meta.traceId, "t-1");
    // A value JSON cannot encode (a Prisma BIGINT id) is left out, logged: the route still answers.
    const { safe: big, lines } = safeWith({
      context: { fields: { traceId: "trace", userId: "user" } },
      contextStore: () => ({ trace: "t-1", user: 42n }),
    });
    const answer = await read(await big.route({}, () => ({ ok: true }))(at("/")));
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body.meta, { traceId: "t-1" });
    assert.equal(big.errorResponse(new Error("boom"), at("/")).status, 500);
    assert.ok(lines.some((line) => line.includes("`userId`")), lines.join("\n"));
  });

  it("responseHeaders: sent on answers and errors, read into meta first; a throw is logged", async () => {
    const fields = new WeakMap<Request, [string, string][]>();
    const { safe, lines } = safeWith({
      rateLimit: true,
      responseHeaders: (request) => {
        if (request.url.endsWith("/boom")) throw new Error("no fields");
        return fields.get(request);
      },
    });
    const handler = safe.route({}, () => ({ ok: true }));
    const request = at("/");
    fields.set(request, [["X-RateLimit-Limit", "5"], ["X-RateLimit-Remaining", "4"]]);
    const ok = await read(await handler(request));
    assert.equal(ok.headers.get("x-ratelimit-remaining"), "4");
    assert.deepEqual(ok.body.meta.rateLimit, { limit: 5, remaining: 4, reset: 0 });
    const denied = at("/");
    fields.set(denied, [["X-RateLimit-Limit", "5"], ["X-RateLimit-Remaining", "0"]]);
    const error = await read(safe.errorResponse(new SafeException("SLOW_DOWN"), denied));
    assert.equal(error.headers.get("x-ratelimit-limit"), "5");
    assert.deepEqual(error.body.meta.rateLimit, { limit: 5, remaining: 0, reset: 0 });
    const boom = await read(await handler(at("/boom")));
    assert.equal(boom.status, 200);
    assert.equal(boom.body.meta?.rateLimit, undefined);
    assert.ok(
      lines.some((line) => /option `responseHeaders` threw \(Error: no fields\)/.test(line)),
    );
  });

  it("responseHeaders and a handler's Response: every Set-Cookie is sent", async () => {
    const { safe } = safeWith({
      responseHeaders: () => [["Set-Cookie", "a=1"], ["Set-Cookie", "b=2"]],
    });
    const login = safe.route({}, (_request, context) => {
      context.headers.append("Set-Cookie", "c=3");
      const headers = new Headers();
      headers.append("Set-Cookie", "d=4");
      headers.append("Set-Cookie", "e=5");
      return new Response("ok", { headers });
    });
    const answer = await login(at("/login"));
    assert.deepEqual(answer.headers.getSetCookie(), ["a=1", "b=2", "c=3", "d=4", "e=5"]);
    const wrapped = await safe.route({}, () => ({ ok: true }))(at("/"));
    assert.deepEqual(wrapped.headers.getSetCookie(), ["a=1", "b=2"]);
    const error = safe.errorResponse(new SafeException("SLOW_DOWN"), at("/"));
    assert.deepEqual(error.headers.getSetCookie(), ["a=1", "b=2"]);
  });

  it("refuses bad options and route options, naming them", () => {
    // The module's options, named by the function the app called (it never wrote SafeResponseModule).
    assert.throws(
      () => createSafeFetch({ bogus: 1 } as never),
      /^TypeError: createSafeFetch: unknown option `bogus` \(known: timestamp, path, [\w, ]+\)$/,
    );
    assert.throws(
      () => createSafeFetch({ responseTime: "yes" as never }),
      /^TypeError: createSafeFetch: option `responseTime` must be a boolean$/,
    );
    assert.throws(
      () => createSafeFetch({ linkHeader: 1 as never }),
      /^TypeError: createSafeFetch: option `linkHeader`/,
    );
    assert.throws(() => createSafeFetch({ i18n: true }), /`i18n: true` finds nestjs-i18n/);
    assert.throws(() => createSafeFetch({ context: {} }), /`context` needs `contextStore`/);
    assert.throws(() => createSafeFetch({ logger: {} as never }), /`logger` must have/);
    assert.throws(() => createSafeFetch({ responseHeaders: 1 as never }), /`responseHeaders` must/);
    const safe = createSafeFetch();
    const bad: [object, RegExp][] = [
      [{ statusCode: 99 }, /`statusCode` must be an HTTP status/],
      [{ responseMessage: "" }, /`responseMessage` must be a non-empty string/],
      [{ successCode: 1 }, /`successCode` must be a non-empty string/],
      [{ problemType: "a b" }, /`problemType` must be a URI/],
      [{ paginated: { maxLimit: 0 } }, /`paginated`: `maxLimit` must be a positive integer/],
      [{ paginated: true, cursorPaginated: true }, /exclude each other/],
      [{ sortMeta: "yes" }, /`sortMeta` must be a boolean/],
      [{ fieldSelection: { maxDepth: -1 } }, /fieldSelection/],
      [{ fieldSelection: { maxFieldLength: 0 } }, /fieldSelection`\.maxFieldLength/],
      [{ errorFormat: "xml" }, /`errorFormat` must be "safe" or "problem"/],
      [{ deprecated: { sunset: "not a date" } }, /sunset/],
    ];
    for (const [options, pattern] of bad) {
      assert.throws(() => safe.route(options as never, () => 1), pattern, JSON.stringify(options));
    }
    assert.throws(() => safe.route({}, "x" as never), /`handler` must be a function/);
  });

  it("refuses a statusCode below 200 when the route is wrapped (a Response carries 200 to 599)", () => {
    const safe = createSafeFetch();
    for (const statusCode of [100, 101, 150, 199]) {
      assert.throws(
        () => safe.route({ statusCode }, () => 1),
        /createSafeFetch route: `statusCode` must be an HTTP status \(200-599\)/,
        String(statusCode),
      );
    }
    for (const statusCode of [200, 204, 599]) {
      assert.equal(typeof safe.route({ statusCode }, () => 1), "function", String(statusCode));
    }
  });

  it("refuses an unknown route option when the route is wrapped, naming it and the known ones", () => {
    const safe = createSafeFetch();
    const known = "route, statusCode, rawResponse, responseMessage, successCode, paginated, " +
      "cursorPaginated, sortMeta, filterMeta, fieldSelection, errorFormat, problemType, " +
      "deprecated, apiVersion";
    // Kept in a variable, as options shared by a resource's routes are: no excess-property check.
    const listOptions = { responseMessage: "Items", pagination: { maxLimit: 100 } };
    assert.throws(
      () => safe.route(listOptions, () => []),
      new RegExp(
        `^TypeError: createSafeFetch route: unknown option \`pagination\` \\(known: ${known}\\)$`,
      ),
    );
    for (const option of ["paginate", "deprecation", "rawResponce", "status"]) {
      assert.throws(
        () => safe.route({ [option]: true } as never, () => 1),
        new RegExp(`^TypeError: createSafeFetch route: unknown option \`${option}\``),
      );
    }
    const paging = "maxLimit, defaultLimit, links, linkHeader";
    for (const name of ["paginated", "cursorPaginated"]) {
      assert.throws(
        () => safe.route({ [name]: { maxLimt: 100 } } as never, () => 1),
        new RegExp(
          `^TypeError: createSafeFetch route: \`${name}\`: unknown option \`maxLimt\` \\(known: ${paging}\\)$`,
        ),
      );
    }
    assert.throws(
      () => safe.route({ deprecated: { sunsett: "2027-01-01" } } as never, () => 1),
      /^TypeError: Deprecated: unknown option `sunsett` \(known: since, sunset, message, link, sunsetLink\)$/,
    );
    assert.throws(
      () => safe.route({ fieldSelection: { maxField: 3 } } as never, () => 1),
      /^TypeError: createSafeFetch route: `fieldSelection`: unknown option `maxField` \(known: /,
    );
    assert.throws(() => safe.route(null as never, () => 1), /options must be an object/);
  });

  it("accepts every known route option", async () => {
    const safe = createSafeFetch();
    const route = safe.route({
      route: "items",
      statusCode: 200,
      rawResponse: false,
      responseMessage: "Items",
      successCode: "LISTED",
      paginated: { maxLimit: 2, defaultLimit: 1, links: false, linkHeader: true },
      sortMeta: false,
      filterMeta: false,
      fieldSelection: { maxDepth: 2 },
      errorFormat: "safe",
      problemType: "https://example.com/problems/items",
      deprecated: { sunset: "2099-01-01" },
      apiVersion: "2",
    }, () => ({ data: [1], total: 1, page: 1, limit: 1 }));
    const answer = await route(at("/items?limit=5"));
    assert.equal(answer.headers.get("sunset"), "Thu, 01 Jan 2099 00:00:00 GMT");
    assert.equal((await answer.json()).meta.pagination.limit, 1);
    assert.doesNotThrow(() => safe.route({ cursorPaginated: { linkHeader: "only" } }, () => 1));
  });

  it("a logger that throws never fails the response", async () => {
    const safe = createSafeFetch({
      logger: {
        warn: () => {
          throw new Error("warn down");
        },
        error: () => {
          throw new Error("error down");
        },
      },
    });
    const boom = await read(
      await safe.route({}, () => {
        throw new Error("boom");
      })(at("/")),
    );
    assert.equal(boom.status, 500);
    const shape = await read(await safe.route({ paginated: true }, () => [1])(at("/")));
    assert.equal(shape.status, 200);
  });

  it("an async logger that rejects never fails the response nor leaves an unhandled rejection", async () => {
    const rejections = collectUnhandledRejections();
    const logged: string[] = [];
    let boom: Awaited<ReturnType<typeof read>>;
    let shape: Awaited<ReturnType<typeof read>>;
    try {
      const safe = createSafeFetch({
        logger: {
          warn: (message) => {
            logged.push(message);
            return Promise.reject(new Error("warn down"));
          },
          error: (message) => {
            logged.push(message);
            return Promise.reject(new Error("error down"));
          },
        },
      });
      boom = await read(
        await safe.route({}, () => {
          throw new Error("boom");
        })(at("/")),
      );
      shape = await read(await safe.route({ paginated: true }, () => [1])(at("/")));
    } finally {
      await rejections.stop();
    }
    assert.equal(boom.status, 500);
    assert.equal(shape.status, 200);
    assert.equal(logged.length, 2, "the error and the shape warning were logged");
    assert.deepEqual(rejections.reasons, [], "an unhandled rejection escaped");
  });

  it("checks a route's errorFormat against the problemDetails option, warning once", async () => {
    const { safe, lines } = safeWith({ problemDetails: true, errorCatalog: Errors });
    const handler = safe.route({ errorFormat: "safe", route: "Items.get" }, () => {
      throw new SafeException("ITEM_NOT_FOUND");
    });
    safe.route({ errorFormat: "problem", route: "Items.same" }, () => 1);
    const { headers } = await read(await handler(at("/")));
    assert.equal(headers.get("content-type"), "application/problem+json; charset=utf-8");
    assert.equal(lines.length, 1);
    assert.match(lines[0], /^warn Items\.get: the endpoint's problemDetails \(false\) differs/);
  });

  it("warns once per route about a result without the declared shape", async () => {
    const { safe, lines } = safeWith();
    const handler = safe.route({ paginated: true, route: "Items.list" }, () => [1]);
    await handler(at("/"));
    await handler(at("/"));
    assert.equal(lines.length, 1);
    assert.match(lines[0], /^warn Items\.list: decorated for pagination/);
  });

  it("sends sort and filters only when a client's guards accept them, else warns", async () => {
    const { safe, lines } = safeWith();
    const handler = safe.route(
      { sortMeta: true, filterMeta: true, route: "Items.list" },
      () => ({
        data: [1],
        sort: Object.assign([], { field: "a", order: "asc" }),
        filters: new Map([["a", 1]]),
      }),
    );
    const { body } = await read(await handler(at("/")));
    assert.equal(isSuccess(body), true);
    assert.deepEqual(body.data, [1]);
    assert.equal(body.meta, undefined);
    assert.deepEqual(lines.map((line) => line.split(" but ")[0]), [
      "warn Items.list: decorated for sort",
      "warn Items.list: decorated for filters",
    ]);
  });
});

describe("createSafeFetch route: pagination input and the Link header", () => {
  const ITEMS = Array.from({ length: 30 }, (_, i) => i + 1);
  const list = (options: Bag = {}, format: SafeFetchOptions = {}) =>
    safeWith(format).safe.route(
      { paginated: { maxLimit: 5, defaultLimit: 2, links: true, ...options } },
      (_request, context) => {
        const { page, limit } = context.pagination as { page: number; limit: number };
        return { data: ITEMS.slice((page - 1) * limit, page * limit), total: 30, page, limit };
      },
    );

  it("clamps limit to maxLimit and defaults it: the handler and meta agree", async () => {
    const clamped = await read(await list()(at("/items?page=2&limit=1000000")));
    assert.equal(clamped.status, 200);
    assert.deepEqual(clamped.body.data, [6, 7, 8, 9, 10]);
    assert.equal(clamped.body.meta.pagination.limit, 5);
    assert.equal(clamped.body.meta.pagination.totalPages, 6);
    const defaulted = await read(await list()(at("/items")));
    assert.deepEqual(defaulted.body.data, [1, 2]);
    assert.equal(defaulted.body.meta.pagination.limit, 2);
  });

  for (
    const [query, parameter] of [
      ["limit=-1", "limit"],
      ["limit=0", "limit"],
      ["limit=1e309", "limit"],
      ["page=9007199254740993", "page"],
    ]
  ) {
    it(`answers ${query} with a 400 naming ${parameter}, in both formats`, async () => {
      const envelope = await read(await list()(at(`/items?${query}`)));
      assert.equal(envelope.status, 400);
      assert.match(envelope.body.error.message, new RegExp(parameter));
      const problem = await read(await list({}, { problemDetails: true })(at(`/items?${query}`)));
      assert.equal(problem.status, 400);
      assert.match(problem.body.detail, new RegExp(parameter));
    });
  }

  it("answers a 10 KB cursor with a 400 naming cursor", async () => {
    const feed = safeWith().safe.route(
      { cursorPaginated: { maxLimit: 5 } },
      () => ({ data: [], nextCursor: null, hasMore: false, limit: 5 }),
    );
    const { status, body } = await read(await feed(at(`/feed?cursor=${"c".repeat(10_240)}`)));
    assert.equal(status, 400);
    assert.match(body.error.message, /cursor/);
  });

  it('sends the links in a Link header with linkHeader, and only there with "only"', async () => {
    const both = await read(await list({ linkHeader: true })(at("/items?page=2")));
    assert.match(both.headers.get("link") ?? "", /<\/items\?page=3&limit=2>; rel="next"/);
    assert.equal(typeof both.body.meta.pagination.links, "object");
    const only = await read(await list({ linkHeader: "only" })(at("/items?page=2")));
    assert.match(only.headers.get("link") ?? "", /rel="first"/);
    assert.equal(only.body.meta.pagination.links, undefined);
  });

  it("keeps the handler's own pagination Link relations: one next, not two", async () => {
    const own = safeWith().safe.route(
      {
        paginated: { defaultLimit: 2, linkHeader: true },
        deprecated: { link: "https://d.example/m" },
      },
      (_request, context) => {
        context.headers.set(
          "Link",
          '</items?page=9>; rel="next", <https://d.example/m>; rel=deprecation',
        );
        return { data: [1, 2], total: 30, page: 1, limit: 2 };
      },
    );
    const link = (await read(await own(at("/items?x=|")))).headers.get("link") ?? "";
    assert.equal(link.match(/rel="?next/g)?.length, 1, link);
    assert.equal(link.match(/deprecation/g)?.length, 1, link);
    assert.match(link, /^<\/items\?page=9>; rel="next", /);
    assert.match(link, /<\/items\?x=%7C&page=1&limit=2>; rel="first"/);
  });
});

describe("createSafeFetch route: the IETF RateLimit fields and the sunset link", () => {
  it("mirrors RateLimit/RateLimit-Policy with rateLimit.standard; X-RateLimit-* wins", async () => {
    const { safe } = safeWith({ rateLimit: { standard: true } });
    const standard = safe.route({}, (_request, context) => {
      context.headers.set("RateLimit", '"burst";r=50;t=30, "day";r=900;t=3600');
      context.headers.set("RateLimit-Policy", '"burst";q=100;w=60, "day";q=1000;w=86400');
      return { ok: true };
    });
    const { body } = await read(await standard(at("/")));
    assert.deepEqual(body.meta.rateLimit, { limit: 100, remaining: 50, reset: 30 });
    const both = safe.route({}, (_request, context) => {
      context.headers.set("RateLimit", '"burst";r=50;t=30');
      context.headers.set("X-RateLimit-Limit", "10");
      context.headers.set("X-RateLimit-Remaining", "9");
      context.headers.set("X-RateLimit-Reset", "60");
      return { ok: true };
    });
    assert.deepEqual((await read(await both(at("/")))).body.meta.rateLimit, {
      limit: 10,
      remaining: 9,
      reset: 60,
    });
    const hostile = safe.route({}, (_request, context) => {
      context.headers.set("RateLimit", '"x";r=' + "9".repeat(5_000));
      return { ok: true };
    });
    const ignored = await read(await hostile(at("/")));
    assert.equal(ignored.status, 200);
    assert.equal(ignored.body.meta?.rateLimit, undefined);
  });

  it('sends Deprecated\'s sunsetLink as rel="sunset", after a Link the handler set', async () => {
    const { safe } = safeWith();
    const legacy = safe.route(
      { deprecated: { sunset: "2030-01-01", sunsetLink: "https://example.com/sunset" } },
      (_request, context) => {
        context.headers.set("Link", '</other>; rel="help"');
        return { ok: true };
      },
    );
    const { headers } = await read(await legacy(at("/")));
    const link = headers.get("link") ?? "";
    assert.match(link, /^<\/other>; rel="help", /);
    assert.match(link, /<https:\/\/example\.com\/sunset>; rel="sunset"/);
  });
});

/** Closes `request` as `Deno.upgradeWebSocket` does: reading its headers afterwards throws. */
function close(request: Request): void {
  Object.defineProperty(request, "headers", {
    get() {
      throw new TypeError("Request closed");
    },
  });
}

/** A 101 `Response` (a WebSocket upgrade's; the constructor allows 200 to 599 only). */
function switchingProtocols(): Response {
  const response = new Response(null, { headers: { Upgrade: "websocket" } });
  Object.defineProperty(response, "status", { value: 101 });
  return response;
}

describe("createSafeFetch route: upgrades and requests closed by the handler", () => {
  it("reads the request id before the handler: a request the handler closed keeps its id", async () => {
    const { safe, lines } = safeWith({ requestId: true });
    const handler = safe.route({}, (request) => {
      close(request);
      return { ok: true };
    });
    const { status, headers, body } = await read(
      await handler(at("/", { headers: { "x-request-id": "req-7" } })),
    );
    assert.equal(status, 200);
    assert.equal(body.requestId, "req-7");
    assert.equal(headers.get("x-request-id"), "req-7");
    assert.deepEqual(lines, []);
  });

  it("passes a 101 (an upgrade) through untouched, counted as written", async () => {
    const { safe, lines } = safeWith({ requestId: true, responseTime: true });
    const written: number[] = [];
    Object.defineProperty(safe.responder, "written", { get: () => (s: number) => written.push(s) });
    const upgrade = switchingProtocols();
    const handler = safe.route({ deprecated: { sunset: new Date(0) } }, (request, context) => {
      context.headers.set("X-Ignored", "1");
      close(request);
      return upgrade;
    });
    const response = await handler(at("/ws", { headers: { "x-request-id": "req-8" } }));
    assert.equal(response, upgrade);
    assert.deepEqual([...response.headers], [["upgrade", "websocket"]]);
    assert.deepEqual(written, [101]);
    assert.deepEqual(lines, []);
  });

  it("a Host header that is no host[:port] (`?`, `/`, `#`) is a 400 before the route: its target cannot be read apart from it (Deno.serve joins them in request.url)", async () => {
    const { serve } = await import("../../scenarios/_serve.ts");
    const net = await import("node:net");
    const { safe } = safeWith();
    let ran = 0;
    const list = safe.route(
      { paginated: { links: true }, fieldSelection: true },
      () => (ran++, { data: [{ id: "a", name: "A" }], total: 40, page: 1, limit: 20 }),
    );
    const server = await serve((request) => list(request));
    const port = Number(new URL(server.url).port);
    /** The raw answer to `target` with `host`. */
    const raw = (target: string, host: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, "127.0.0.1");
        let text = "";
        socket.on("data", (chunk: Uint8Array) => (text += new TextDecoder().decode(chunk)));
        socket.on("end", () => resolve(text));
        socket.on("error", reject);
        socket.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      });
    try {
      for (const host of ["api.example.com?page=7&limit=3&fields=id", "a/evil", "a#"]) {
        for (const target of ["/orders", "http://a/evil/orders"]) {
          const answer = await raw(target, host);
          // 400 from the route (Deno) or from the server itself (@hono/node-server on Node).
          assert.equal(Number(answer.split(" ", 2)[1]), 400, `${host} ${target}`);
        }
      }
      assert.equal(ran, 0, "the handler never ran");
      const ok = await raw("/orders?page=2", "api.example.com");
      const body = JSON.parse(ok.slice(ok.indexOf("\r\n\r\n") + 4));
      assert.equal(body.path, "/orders");
      assert.equal(body.meta.pagination.links.next, "/orders?page=2&limit=20");
    } finally {
      await server.close();
    }
  });

  it(
    "Deno.serve: a WebSocket upgrade through protect and a route with request ids opens, the server keeps serving",
    {
      skip: !("Deno" in globalThis) && "Deno.upgradeWebSocket",
    },
    async () => {
      const { ApiKeysService, InMemoryApiKeyStorage } = await import("../../../api_keys/mod.ts");
      const { createApiKeyAuthorizer } = await import("../../../api_keys/fetch/mod.ts");
      const { createRateLimiter } = await import("../../../rate_limits/mod.ts");
      const { serve } = await import("../../scenarios/_serve.ts");
      const service = new ApiKeysService({
        peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes!!" },
        storage: new InMemoryApiKeyStorage(),
        limiter: createRateLimiter({ logger: () => {} }),
      });
      const { key } = await service.create({
        tenantId: "t",
        name: "k",
        scopes: [{ resource: "o", level: "read" }],
        rateLimits: [{ name: "m", limit: 100, windowMs: 60_000 }],
      });
      const { safe, lines } = safeWith({ requestId: true });
      const deno = (globalThis as unknown as {
        Deno: { upgradeWebSocket(r: Request): { socket: WebSocket; response: Response } };
      }).Deno;
      const socketRoute = createApiKeyAuthorizer(service, { onError: safe.errorResponse }).protect(
        safe.route({}, (request) => {
          const { socket, response } = deno.upgradeWebSocket(request);
          socket.onmessage = (event) => socket.send(`echo ${event.data}`);
          return response;
        }),
      );
      const server = await serve((request, info) =>
        request.headers.get("upgrade") === "websocket"
          ? socketRoute(request, info)
          : new Response("still serving")
      );
      try {
        const echoed = await new Promise<string>((resolve, reject) => {
          const ws = new WebSocket(
            server.url.replace("http", "ws"),
            { headers: { "X-API-Key": key } } as unknown as string,
          );
          const timer = setTimeout(() => reject(new Error("the upgrade timed out")), 3000);
          ws.onopen = () => ws.send("hi");
          ws.onmessage = (event) => {
            clearTimeout(timer);
            resolve(String(event.data));
            ws.close();
          };
          ws.onerror = () => {
            clearTimeout(timer);
            reject(new Error("the upgrade failed"));
          };
        });
        assert.equal(echoed, "echo hi");
        const after = await fetch(server.url, { signal: AbortSignal.timeout(3000) });
        assert.equal(await after.text(), "still serving");
        assert.deepEqual(lines, []);
      } finally {
        await server.close();
      }
    },
  );
});
