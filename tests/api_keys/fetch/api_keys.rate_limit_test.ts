/** HTTP: rate limits through the Fetch authorizer (Deno.serve on Deno, @hono/node-server on Node). */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeysService } from "../../../api_keys/service.ts";
import { InMemoryApiKeyStorage } from "../../../api_keys/storage/in_memory.ts";
import {
  createApiKeyAuthorizer,
  getApiKeyContext,
  getRateLimitHeaders,
} from "../../../api_keys/fetch/api_keys.authorizer.ts";
import { createApiKeysAdminFetchHandler } from "../../../api_keys/fetch/api_keys.admin.ts";
import { createSafeFetch, readJsonBody } from "../../../safe_response/fetch/mod.ts";
import { createMemoryRateLimitStore, createRateLimiter } from "../../../rate_limits/mod.ts";
import { PEPPER_1, READ_ORDERS } from "../helpers.ts";
import { serve, type Served } from "../../scenarios/_serve.ts";

type Mode = "plain" | "envelope" | "problem";

/** A service with an in-memory limiter and one key carrying `rateLimits`. */
async function limitedKey(rateLimits: { name: string; limit: number; windowMs: number }[]) {
  const service = new ApiKeysService({
    peppers: { 1: PEPPER_1 },
    storage: new InMemoryApiKeyStorage(),
    // A clock at the start of a sub-bucket: a unit counts for windowMs + one sub-bucket (66 s of 60).
    limiter: createRateLimiter({
      logger: () => {},
      store: createMemoryRateLimitStore({ now: () => Date.UTC(2030, 0, 1) }),
    }),
  });
  const { key } = await service.create({
    tenantId: "t1",
    name: "ci",
    scopes: READ_ORDERS,
    rateLimits,
  });
  return { service, key };
}

for (const mode of ["plain", "envelope", "problem"] as const satisfies readonly Mode[]) {
  describe(`Fetch authorizer rate limits, ${mode}`, () => {
    let server: Served;
    let base: string;
    let key: string;
    before(async () => {
      const limited = await limitedKey([
        { name: "burst", limit: 2, windowMs: 60_000 },
        { name: "minute", limit: 10, windowMs: 60_000 },
      ]);
      const { service } = limited;
      key = limited.key;
      const safe = createSafeFetch({ problemDetails: mode === "problem" });
      const authorize = createApiKeyAuthorizer(service, {
        onError: mode === "plain" ? undefined : safe.errorResponse,
        xRateLimitHeaders: true,
      });
      const plainRoute = authorize.protect(() => Response.json({ ok: true }));
      const heavy = authorize.require({ rateLimits: "minute", cost: 3 }).protect(() =>
        new Response("heavy")
      );
      server = await serve((request) =>
        new URL(request.url).pathname === "/heavy" ? heavy(request) : plainRoute(request)
      );
      base = server.url;
    });
    after(() => server.close());

    const get = async (path = "/") => {
      const response = await fetch(base + path, { headers: { "x-api-key": key } });
      return { response, text: await response.text() };
    };

    it("every answer carries RateLimit-Policy and RateLimit; the route's cost passes; a denial is 429 with Retry-After", async () => {
      const first = await get();
      assert.equal(first.response.status, 200);
      assert.equal(
        first.response.headers.get("ratelimit-policy"),
        '"burst";q=2;w=60, "minute";q=10;w=60',
      );
      assert.equal(first.response.headers.get("ratelimit"), '"burst";r=1;t=66, "minute";r=9;t=66');
      assert.equal(first.response.headers.get("x-ratelimit-remaining"), "1");
      const heavy = await get("/heavy");
      assert.equal(heavy.response.headers.get("ratelimit"), '"minute";r=6;t=66');
      await get();
      const denied = await get();
      assert.equal(denied.response.status, 429);
      assert.equal(denied.response.headers.get("retry-after"), "66");
      assert.match(denied.response.headers.get("ratelimit") ?? "", /"burst";r=0;t=66/);
      const body = JSON.parse(denied.text);
      if (mode === "plain") {
        assert.deepEqual(body, {
          statusCode: 429,
          code: "api_key_rate_limited",
          message: "API key rate limit exceeded",
        });
      } else if (mode === "envelope") {
        assert.equal(body.success, false);
        assert.equal(body.error.code, "api_key_rate_limited");
      } else {
        assert.match(denied.response.headers.get("content-type") ?? "", /problem\+json/);
        assert.equal(body.code, "api_key_rate_limited");
        assert.equal(body.status, 429);
      }
    });
  });
}

describe("Fetch authorizer rate limits, meta.rateLimit through safe-response's responseHeaders", () => {
  let server: Served;
  let key: string;
  before(async () => {
    const limited = await limitedKey([
      { name: "minute", limit: 10, windowMs: 60_000 },
      { name: "burst", limit: 2, windowMs: 30_000 },
    ]);
    const { service } = limited;
    key = limited.key;
    const safe = createSafeFetch({
      rateLimit: { standard: true },
      responseHeaders: getRateLimitHeaders,
    });
    const authorize = createApiKeyAuthorizer(service, { onError: safe.errorResponse });
    server = await serve(authorize.protect(safe.route({}, () => ({ ok: true }))));
  });
  after(() => server.close());

  const get = async () => {
    const response = await fetch(server.url, { headers: { "x-api-key": key } });
    return { status: response.status, body: await response.json() };
  };

  it("shows the policy with the least remaining on each 200 and on the 429", async () => {
    const first = await get();
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.meta.rateLimit, { limit: 2, remaining: 1, reset: 33 });
    const second = await get();
    assert.deepEqual(second.body.meta.rateLimit, { limit: 2, remaining: 0, reset: 33 });
    const denied = await get();
    assert.equal(denied.status, 429);
    assert.equal(denied.body.error.code, "api_key_rate_limited");
    assert.deepEqual(denied.body.meta.rateLimit, {
      limit: 2,
      remaining: 0,
      reset: 33,
      retryAfter: 33,
    });
  });
});

describe("Fetch authorizer rate limits beside the handler's own (Nest: the throttler's later fields win)", () => {
  it("keeps each family of fields the handler's response has, adding the key's others", async () => {
    const { service, key } = await limitedKey([{ name: "minute", limit: 100, windowMs: 60_000 }]);
    const safe = createSafeFetch({
      logger: { warn() {}, error() {} },
      rateLimit: true,
      responseHeaders: getRateLimitHeaders,
    });
    const authorize = createApiKeyAuthorizer(service, {
      onError: safe.errorResponse,
      xRateLimitHeaders: true,
    });
    const own = (remaining: number) =>
      authorize.protect(safe.route({}, (_request, context) => {
        context.headers.set("X-RateLimit-Limit", "5");
        context.headers.set("X-RateLimit-Remaining", String(remaining));
        context.headers.set("X-RateLimit-Reset", "30");
        if (remaining > 0) return { ok: true };
        context.headers.set("Retry-After", "30");
        throw Object.assign(new Error("Slow down"), { status: 429 });
      }));
    const call = async (handler: (request: Request) => Promise<Response>) => {
      const answer = await handler(new Request("http://x/", { headers: { "x-api-key": key } }));
      return { headers: answer.headers, body: await answer.json() };
    };
    const ok = await call(own(4));
    assert.deepEqual(
      ["limit", "remaining", "reset"].map((f) => ok.headers.get(`x-ratelimit-${f}`)),
      ["5", "4", "30"],
    );
    assert.match(ok.headers.get("ratelimit") ?? "", /^"minute";r=99;/);
    assert.deepEqual(ok.body.meta.rateLimit, { limit: 5, remaining: 4, reset: 30 });
    const refused = await call(own(0));
    assert.equal(refused.headers.get("x-ratelimit-remaining"), "0");
    assert.equal(refused.headers.get("retry-after"), "30");
    assert.match(refused.headers.get("ratelimit-policy") ?? "", /^"minute";q=100;/);
    const partial = await call(authorize.protect(() => {
      return Response.json({}, { headers: { "X-RateLimit-Remaining": "1" } });
    }));
    assert.equal(partial.headers.get("x-ratelimit-remaining"), "1");
    assert.equal(
      partial.headers.get("x-ratelimit-limit"),
      null,
      "never the key's beside the handler's",
    );
  });
});

describe("Fetch authorizer rate limits on a Response whose headers are immutable", () => {
  it("adds the fields to a copy (a proxied answer), every Set-Cookie kept", async () => {
    const { service, key } = await limitedKey([{ name: "minute", limit: 10, windowMs: 60_000 }]);
    const upstream = await serve(() => {
      const headers = new Headers();
      headers.append("Set-Cookie", "a=1");
      headers.append("Set-Cookie", "b=2");
      return new Response("upstream", { headers });
    });
    try {
      const proxy = createApiKeyAuthorizer(service).protect(() => fetch(upstream.url));
      const answer = await proxy(new Request("http://x/", { headers: { "x-api-key": key } }));
      assert.equal(await answer.text(), "upstream");
      assert.deepEqual(answer.headers.getSetCookie(), ["a=1", "b=2"]);
      assert.match(answer.headers.get("ratelimit") ?? "", /^"minute";r=9;/);
    } finally {
      await upstream.close();
    }
  });
});

describe("Fetch authorizer rate limits and request bodies (docs/fetch.md, request bodies)", () => {
  it("charges before the handler reads the body: a body refused with 413 or 400 has counted", async () => {
    const { service, key } = await limitedKey([{ name: "minute", limit: 10, windowMs: 60_000 }]);
    const safe = createSafeFetch({ logger: { warn() {}, error() {} } });
    const create = createApiKeyAuthorizer(service, { onError: safe.errorResponse }).protect(
      safe.route({ statusCode: 201 }, (request) => readJsonBody(request, { maxBytes: 16 })),
    );
    const post = async (body: string) => {
      const answer = await create(
        new Request("http://x/orders", { method: "POST", body, headers: { "x-api-key": key } }),
      );
      await answer.body?.cancel();
      return [answer.status, answer.headers.get("ratelimit")?.split(";")[1]];
    };
    assert.deepEqual(await post(JSON.stringify({ name: "x".repeat(64) })), [413, "r=9"]);
    assert.deepEqual(await post("{not json"), [400, "r=8"]);
    assert.deepEqual(await post("{}"), [201, "r=7"]);
  });
});

describe("Fetch: routes that must not spend, routes naming no policy (issue 40)", () => {
  it("the admin routes count like any route unless the authorizer says rateLimits: false", async () => {
    const service = new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage: new InMemoryApiKeyStorage(),
      limiter: createRateLimiter({ logger: () => {} }),
      rateLimitResolver: () => [{ name: "plan", limit: 2, windowMs: 60_000 }],
    });
    const { key } = await service.create({
      tenantId: "t1",
      name: "ci",
      scopes: READ_ORDERS,
      credits: { remaining: 3 },
    });
    const authorize = createApiKeyAuthorizer(service);
    const adminRoutes = createApiKeysAdminFetchHandler({
      prefix: "/admin",
      service,
      scopes: ["orders:read"],
      tenantOf: (request: Request) => getApiKeyContext(request)?.tenantId,
      canManage: () => true,
      policy: () => null,
      csrf: false,
    });
    const admin = async (request: Request) =>
      (await adminRoutes(request)) ?? new Response(null, { status: 404 });
    const uncounted = authorize.require({ rateLimits: false }).protect(admin);
    const counted = authorize.protect(admin);
    const get = (handler: (request: Request) => Promise<Response>) =>
      handler(new Request("http://x/admin/keys", { headers: { "x-api-key": key } }));
    for (let i = 0; i < 4; i++) {
      const answer = await get(uncounted);
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get("ratelimit"), null);
    }
    const credits = async () => (await service.listSummaries("t1"))[0].credits?.remaining;
    assert.equal(await credits(), 3);
    const first = await get(counted);
    assert.equal(first.status, 200);
    assert.match(first.headers.get("ratelimit") ?? "", /^"plan";r=1;/);
    assert.equal(await credits(), 2);
    assert.equal((await get(counted)).status, 200);
    assert.equal((await get(counted)).status, 429);
  });

  it("through onError (safe.errorResponse), a route naming a policy the key lacks answers the 500 envelope with its request id, the message kept back", async () => {
    const { service, key } = await limitedKey([{ name: "burst", limit: 2, windowMs: 60_000 }]);
    const lines: string[] = [];
    const logged: string[] = [];
    const safe = createSafeFetch({
      requestId: true,
      logger: { warn() {}, error: (line) => logged.push(line) },
    });
    const authorize = createApiKeyAuthorizer(service, {
      onError: safe.errorResponse,
      log: (line) => lines.push(line),
    });
    const hourly = authorize.require({ rateLimits: "hourly" }).protect(
      safe.route({}, () => ({ ok: true })),
    );
    const answer = await hourly(
      new Request("http://x/reports", { headers: { "x-api-key": key, "x-request-id": "r-1" } }),
    );
    assert.equal(answer.status, 500);
    assert.equal(answer.headers.get("x-request-id"), "r-1");
    const text = await answer.text();
    assert.ok(!text.includes("hourly"), text);
    const body = JSON.parse(text);
    assert.equal(body.error.code, "INTERNAL_SERVER_ERROR");
    assert.equal(body.requestId, "r-1");
    assert.ok(lines.some((line) => line.includes("GET /reports")), lines.join("\n"));
  });

  it("an onError that answers a bug below 500, or throws, leaves it to the server (rethrown)", async () => {
    const { service, key } = await limitedKey([{ name: "burst", limit: 2, windowMs: 60_000 }]);
    for (
      const onError of [
        (error: { httpStatus?: number }) => Response.json({}, { status: error.httpStatus ?? 200 }),
        () => {
          throw new Error("onError down");
        },
      ]
    ) {
      const authorize = createApiKeyAuthorizer(service, { onError, log: () => {} });
      const hourly = authorize.require({ rateLimits: "hourly" }).protect(() => new Response("ok"));
      await assert.rejects(
        hourly(new Request("http://x/reports", { headers: { "x-api-key": key } })),
        TypeError,
      );
    }
  });

  it("a route naming a policy the key lacks rejects (the server answers 500), logged once with the method, path and policy", async () => {
    const { service, key } = await limitedKey([{ name: "burst", limit: 2, windowMs: 60_000 }]);
    const lines: string[] = [];
    const authorize = createApiKeyAuthorizer(service, { log: (line) => lines.push(line) });
    const hourly = authorize.require({ rateLimits: "hourly" }).protect(() => new Response("ok"));
    for (let i = 0; i < 3; i++) {
      await assert.rejects(
        hourly(new Request("http://x/reports", { headers: { "x-api-key": key } })),
        TypeError,
      );
    }
    assert.equal(lines.length, 1, "each distinct line once");
    assert.ok(
      lines.some((line) => line.includes("GET /reports") && line.includes('"hourly"')),
      lines.join("\n"),
    );
  });
});
