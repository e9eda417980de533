import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  API_KEY_STORAGE_METHODS,
  ApiKeyError,
  type ApiKeyRateLimitPolicy,
  type ApiKeyStorage,
  ApiKeyStorageError,
  InMemoryApiKeyStorage,
} from "../../../api_keys/mod.ts";
import {
  apiKeyErrorResponse,
  createApiKeyAuthorizer,
  getApiKeyContext,
  getRateLimitHeaders,
} from "../../../api_keys/fetch/api_keys.authorizer.ts";
import { createRateLimiter } from "../../../rate_limits/mod.ts";
import { createSafeFetch } from "../../../safe_response/fetch/mod.ts";
import { generateKey } from "../../../api_keys/key_format.ts";
import type { ApiKeysService } from "../../../api_keys/service.ts";
import { makeService } from "../helpers.ts";
import { collectUnhandledRejections } from "../../reliability/harness.ts";

const info = (hostname = "127.0.0.1") => ({ remoteAddr: { transport: "tcp", hostname, port: 1 } });
const get = (headers: Record<string, string> = {}) =>
  new Request("http://localhost/orders", { headers });

async function setup() {
  const made = makeService();
  const { key } = await made.service.create({
    tenantId: "t1",
    name: "reader",
    environment: "test",
    scopes: [{ resource: "orders", level: "read" }],
  });
  return { ...made, key };
}

/** A service with a limiter (and `options`) and a key of one policy, `burst`: 1,000 a minute. */
async function burstKey(options: Parameters<typeof makeService>[0] = {}) {
  const { service } = makeService({ limiter: createRateLimiter({ logger: () => {} }), ...options });
  return { service, key: await burstKeyOf(service) };
}

/** A new key of `service` with one policy, `burst`: 1,000 a minute. */
async function burstKeyOf(service: ApiKeysService): Promise<string> {
  const { key } = await service.create({
    tenantId: "t1",
    name: "limited",
    scopes: [{ resource: "orders", level: "read" }],
    rateLimits: [{ name: "burst", limit: 1_000, windowMs: 60_000 }],
  });
  return key;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApiKeyError || error instanceof ApiKeyStorageError);
    return error.code;
  }
  assert.fail("did not reject");
}

describe("createApiKeyAuthorizer", () => {
  it("resolves the frozen context from X-API-Key or Authorization: Bearer", async () => {
    const { service, key } = await setup();
    const authorize = createApiKeyAuthorizer(service);
    const context = await authorize(get({ "x-api-key": key }), info());
    assert.equal(context.tenantId, "t1");
    assert.ok(Object.isFrozen(context));
    assert.equal((await authorize(get({ authorization: `Bearer ${key}` }))).tenantId, "t1");
  });

  it("rejects with the precise ApiKeyError code, reported by the core", async () => {
    const { service, key, authFailures } = await setup();
    const { key: other } = await service.create({
      tenantId: "t1",
      name: "other",
      environment: "test",
      scopes: [{ resource: "orders", level: "read" }],
    });
    const authorize = createApiKeyAuthorizer(service);
    assert.equal(await codeOf(authorize(get())), "api_key_missing");
    assert.equal(await codeOf(authorize(get({ "x-api-key": "nope" }))), "api_key_malformed");
    assert.equal(
      await codeOf(authorize(get({ "x-api-key": key, authorization: `Bearer ${other}` }))),
      "api_key_malformed",
    );
    assert.deepEqual(authFailures.map(([, code]) => code), [
      "api_key_missing",
      "api_key_malformed",
      "api_key_malformed",
    ]);
  });

  it("checks the requirements given at build time and by require (the later wins)", async () => {
    const { service, key } = await setup();
    const base = createApiKeyAuthorizer(service, { requiredEnvironment: "live" });
    assert.equal(await codeOf(base(get({ "x-api-key": key }))), "api_key_environment_mismatch");
    const testOrders = base.require({
      requiredEnvironment: "test",
      requiredScope: { resource: "orders", level: "read" },
    });
    assert.deepEqual(testOrders.requirements, {
      requiredEnvironment: "test",
      requiredScope: { resource: "orders", level: "read" },
    });
    assert.ok(Object.isFrozen(testOrders.requirements));
    assert.equal((await testOrders(get({ "x-api-key": key }))).tenantId, "t1");
    const write = testOrders.require({ requiredScope: { resource: "orders", level: "write" } });
    assert.equal(write.requirements.requiredEnvironment, "test");
    assert.equal(await codeOf(write(get({ "x-api-key": key }))), "api_key_scope_insufficient");
  });

  it("refuses bad options and requirements when built, naming them", () => {
    const { service } = makeService();
    assert.throws(
      () => createApiKeyAuthorizer({} as never),
      /createApiKeyAuthorizer: `service` must be an ApiKeysService/,
    );
    assert.throws(
      () => createApiKeyAuthorizer(service, { clientIp: "127.0.0.1" as never }),
      /option `clientIp` must be a function/,
    );
    assert.throws(
      () => createApiKeyAuthorizer(service, { requiredEnvironment: "prod" as never }),
      /createApiKeyAuthorizer: requiredEnvironment: environment must be "live" or "test"/,
    );
    const authorize = createApiKeyAuthorizer(service);
    assert.throws(
      () => authorize.require({ requiredScope: { resource: "", level: "read" } }),
      /ApiKeyAuthorizer.require: requiredScope: resource must be 1-128 characters of/,
    );
    assert.throws(
      () => authorize.require({ requiredScope: { resource: "orders", level: "admin" as never } }),
      /requiredScope: level "admin" must be "read" or "write"/,
    );
    for (const rateLimits of ["Hourly", "", ["hourly", "hourly"]]) {
      assert.throws(
        () => authorize.require({ rateLimits }),
        /^TypeError: ApiKeyAuthorizer.require: rateLimits: /,
        JSON.stringify(rateLimits),
      );
    }
    assert.throws(() => authorize.protect("nope" as never), /`handler` must be a function/);
  });

  it("refuses a misspelt option or requirement instead of ignoring it", async () => {
    const { service, key } = await setup();
    assert.throws(
      () => createApiKeyAuthorizer(service, { onErorr: () => new Response() } as never),
      /createApiKeyAuthorizer: unknown option `onErorr`/,
    );
    assert.throws(
      () => createApiKeyAuthorizer(service, { requiredscope: { resource: "orders" } } as never),
      /createApiKeyAuthorizer: unknown option `requiredscope`/,
    );
    const authorize = createApiKeyAuthorizer(service);
    // A requirement ignored would leave the route open to a key of any scope.
    assert.throws(
      () => authorize.require({ scope: { resource: "orders", level: "write" } } as never),
      /ApiKeyAuthorizer.require: unknown option `scope`/,
    );
    assert.throws(
      () => authorize.require({ clientIp: () => "127.0.0.1" } as never),
      /ApiKeyAuthorizer.require: unknown option `clientIp`/,
      "require takes requirements only",
    );
    const every = createApiKeyAuthorizer(service, {
      requiredScope: { resource: "orders", level: "read" },
      requiredEnvironment: "test",
      rateLimits: false,
      clientIp: () => "127.0.0.1",
      onError: apiKeyErrorResponse,
      xRateLimitHeaders: false,
      log: () => {},
    });
    assert.equal((await every(get({ "x-api-key": key }), info())).tenantId, "t1");
    // A route's cost over the authorizer's rateLimits false would be recorded, never charged.
    assert.throws(
      () => every.require({ cost: 1 }),
      /a cost with rateLimits false is never charged/,
    );
  });

  it("checks the IP allowlist against the client IP from the server's info", async () => {
    const { service } = makeService();
    const { key } = await service.create({
      tenantId: "t1",
      name: "local",
      scopes: [{ resource: "orders", level: "read" }],
      allowedIpCidrs: ["127.0.0.1"],
    });
    const authorize = createApiKeyAuthorizer(service);
    assert.equal((await authorize(get({ "x-api-key": key }), info("127.0.0.1"))).tenantId, "t1");
    assert.equal(
      await codeOf(authorize(get({ "x-api-key": key }), info("203.0.113.7"))),
      "api_key_ip_not_allowed",
    );
    assert.equal(await codeOf(authorize(get({ "x-api-key": key }))), "api_key_ip_not_allowed");
  });

  it("contains a client-IP resolver that throws or rejects: unknown, logged by name only", async () => {
    const { service } = makeService();
    const { key: open } = await service.create({
      tenantId: "t1",
      name: "open",
      scopes: [{ resource: "orders", level: "read" }],
    });
    const { key: local } = await service.create({
      tenantId: "t1",
      name: "local",
      scopes: [{ resource: "orders", level: "read" }],
      allowedIpCidrs: ["127.0.0.1"],
    });
    const lines: string[] = [];
    for (
      const clientIp of [
        () => {
          throw new RangeError(`boom ${local}`);
        },
        () => Promise.reject(new SyntaxError(`boom ${local}`)),
      ]
    ) {
      const authorize = createApiKeyAuthorizer(service, { clientIp, log: (l) => lines.push(l) });
      assert.equal((await authorize(get({ "x-api-key": open }), info())).tenantId, "t1");
      assert.equal(
        await codeOf(authorize(get({ "x-api-key": local }), info())),
        "api_key_ip_not_allowed",
      );
    }
    assert.equal(lines.length, 4);
    assert.match(lines[0], /clientIp failed \(RangeError\); client IP treated as unknown/);
    assert.match(lines[2], /clientIp failed \(SyntaxError\)/);
    assert.ok(lines.every((line) => !line.includes(local) && !line.includes("boom")));
  });

  it("rejects with ApiKeyStorageError (503) when storage fails", async () => {
    const inner = new InMemoryApiKeyStorage();
    const storage = Object.fromEntries(
      API_KEY_STORAGE_METHODS.map((name) => [name, inner[name].bind(inner)]),
    ) as unknown as ApiKeyStorage; // no peekByPrefix: every lookup goes through findByPrefix
    const { service } = makeService({ storage });
    const { key } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: [{ resource: "orders", level: "read" }],
    });
    storage.findByPrefix = () => Promise.reject(new Error("db down"));
    const authorize = createApiKeyAuthorizer(service);
    assert.equal(
      await codeOf(authorize(get({ "x-api-key": key }))),
      "api_key_storage_unavailable",
    );
  });
});

describe("protect", () => {
  it("runs the handler with the same arguments and records the context", async () => {
    const { service, key } = await setup();
    let seen: unknown[] = [];
    const handler = createApiKeyAuthorizer(service).protect((request, ...args: unknown[]) => {
      seen = args;
      return Response.json({ tenantId: getApiKeyContext(request)?.tenantId });
    });
    const request = get({ "x-api-key": key });
    const response = await handler(request, info(), "extra");
    assert.deepEqual(await response.json(), { tenantId: "t1" });
    assert.deepEqual(seen, [info(), "extra"]);
    assert.equal(getApiKeyContext(request)?.tenantId, "t1");
    assert.equal(getApiKeyContext(get()), undefined);
  });

  it("answers failures with the default JSON body and status, never running the handler", async () => {
    const { service, key } = await setup();
    let ran = 0;
    const handler = createApiKeyAuthorizer(service, {
      requiredScope: { resource: "orders", level: "write" },
    }).protect(() => {
      ran++;
      return new Response("ok");
    });
    const missing = await handler(get(), info());
    assert.equal(missing.status, 401);
    assert.match(missing.headers.get("content-type") ?? "", /^application\/json/);
    assert.deepEqual(await missing.json(), {
      statusCode: 401,
      code: "api_key_missing",
      message: "API key is missing",
    });
    const scope = await handler(get({ "x-api-key": key }), info());
    assert.equal(scope.status, 403);
    assert.equal((await scope.json()).code, "api_key_scope_insufficient");
    assert.equal(ran, 0);
  });

  it("challenges every 401 with WWW-Authenticate (the same whatever the key's state), by default and through onError; no challenge with a 403", async () => {
    const { service, key } = await setup();
    const { id, key: revoked } = await service.create({
      tenantId: "t1",
      name: "gone",
      environment: "test",
      scopes: [{ resource: "orders", level: "read" }],
    });
    await service.revoke(id);
    const safe = createSafeFetch({ problemDetails: true });
    for (const onError of [undefined, safe.errorResponse]) {
      const handler = createApiKeyAuthorizer(service, {
        requiredEnvironment: "live",
        onError,
      }).protect(() => new Response("ok"));
      const missing = await handler(get());
      assert.equal(missing.status, 401);
      assert.equal(missing.headers.get("www-authenticate"), "Bearer");
      const unknown = generateKey({ environment: "test" }).raw;
      for (const sent of ["not-a-key", unknown, revoked]) {
        const refused = await handler(get({ "x-api-key": sent }));
        assert.equal(refused.status, 401);
        assert.equal(refused.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
      }
      const forbidden = await handler(get({ authorization: `Bearer ${key}` }));
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.headers.get("www-authenticate"), null);
    }
    const direct = apiKeyErrorResponse(new ApiKeyError("api_key_expired"));
    assert.equal(direct.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
  });

  it("uses onError, and the default response when onError throws, rejects or returns no Response", async () => {
    const { service } = await setup();
    const lines: string[] = [];
    const custom = createApiKeyAuthorizer(service, {
      onError: (error, request) =>
        new Response(`${error.code} ${new URL(request.url).pathname}`, { status: 418 }),
    }).protect(() => new Response("ok"));
    const answered = await custom(get());
    assert.equal(answered.status, 418);
    assert.equal(await answered.text(), "api_key_missing /orders");
    for (
      const onError of [
        () => {
          throw new TypeError("x");
        },
        () => Promise.reject(new Error("x")),
        () => "not a response" as unknown as Response,
      ]
    ) {
      const handler = createApiKeyAuthorizer(service, { onError, log: (l) => lines.push(l) })
        .protect(() => new Response("ok"));
      const response = await handler(get());
      assert.equal(response.status, 401);
      assert.equal((await response.json()).code, "api_key_missing");
    }
    assert.equal(lines.length, 3);
    assert.match(lines[0], /onError failed \(TypeError\); the default response is sent/);
    assert.match(lines[2], /onError returned no Response/);
  });

  /** A service with a limiter, a read key of one `policy` and `credits`, and its authorizer. */
  const limitedKey = async (policy: ApiKeyRateLimitPolicy, credits: number) => {
    const { service } = makeService({ limiter: createRateLimiter({ logger: () => {} }) });
    const { key } = await service.create({
      tenantId: "t1",
      name: "limited",
      environment: "test",
      scopes: [{ resource: "orders", level: "read" }],
      rateLimits: [policy],
      credits: { remaining: credits },
    });
    return { service, key, authorize: createApiKeyAuthorizer(service) };
  };

  it("nested (an app-wide protect around a route's): the request is charged once when the route asks the same charge; a route asking another cost is charged on its own; the route checks its own requirements", async () => {
    const { service, key, authorize } = await limitedKey(
      { name: "minute", limit: 10, windowMs: 60_000 },
      10,
    );
    const seen: (number | undefined)[] = [];
    const route = authorize.require({ cost: 3 }).protect((request) => {
      seen.push(getApiKeyContext(request)?.creditResult?.remaining);
      return new Response("ok");
    });
    const writes = authorize.require({ requiredScope: { resource: "orders", level: "write" } })
      .protect(() => new Response("written"));
    const app = authorize.protect((request) =>
      new URL(request.url).pathname === "/orders" ? route(request) : writes(request)
    );
    const request = get({ "x-api-key": key });
    const response = await app(request, info());
    assert.equal(response.status, 200);
    assert.deepEqual(seen, [6], "the app-wide run's cost (1), then the route's own (3)");
    assert.match(response.headers.get("ratelimit") ?? "", /^"minute";r=6;t=\d+$/);
    const recorded = getRateLimitHeaders(request);
    assert.equal(recorded.length, 2);
    for (const [name, value] of recorded) assert.equal(response.headers.get(name), value);
    const refused = await app(
      new Request("http://localhost/write", { headers: { "x-api-key": key } }),
      info(),
    );
    assert.equal(refused.status, 403);
    assert.equal((await refused.json()).code, "api_key_scope_insufficient");
    assert.match(refused.headers.get("ratelimit") ?? "", /^"minute";r=5;t=\d+$/);
    const left = await service.authorize(key, { cost: 0 });
    assert.equal(
      left.creditResult?.remaining,
      5,
      "1 + 3, then 1 (the scope check charged nothing)",
    );
    assert.equal(left.rateLimitResults?.[0].remaining, 5);
  });

  it("nested: no cost and cost 1 are two charges (no cost counts each policy at its own cost): a policy of cost 5 is never counted at 1", async () => {
    const { service, key, authorize } = await limitedKey(
      { name: "search", limit: 100, windowMs: 60_000, cost: 5 },
      100,
    );
    for (
      const [outer, inner] of [[authorize, authorize.require({ cost: 1 })], [
        authorize.require({ cost: 1 }),
        authorize,
      ]]
    ) {
      const app = outer.protect(inner.protect(() => new Response("ok")));
      assert.equal((await app(get({ "x-api-key": key }), info())).status, 200);
    }
    const left = await service.authorize(key, { cost: 0 });
    assert.equal(left.rateLimitResults?.[0].remaining, 100 - 2 * (5 + 1), "5 + 1 per request");
    assert.equal(left.creditResult?.remaining, 100 - 2 * 2, "1 + 1 credit per request");
  });

  it("nested: a request the route refuses (403) counts one usage outcome, the refusal, not also the app-wide run's accepted count and cost", async () => {
    const { service, clocks } = makeService({ usage: { flushIntervalMs: 3_600_000 } });
    const { id, key } = await service.create({
      tenantId: "t1",
      name: "reader",
      scopes: [{ resource: "orders", level: "read" }],
    });
    const authorize = createApiKeyAuthorizer(service);
    const writes = authorize.require({ requiredScope: { resource: "orders", level: "write" } })
      .protect(() => new Response("written"));
    const app = authorize.protect((request) => writes(request));
    const refused = await app(get({ "x-api-key": key }), info());
    assert.equal(refused.status, 403);
    await service.close();
    const [hour] = await service.usage("t1", {
      keyId: id,
      from: new Date(clocks.now),
      to: new Date(clocks.now + 3_600_000),
      granularity: "hour",
    });
    assert.deepEqual(
      [hour.accepted, hour.cost, hour.refused.api_key_scope_insufficient],
      [0, 0, 1],
    );
  });

  it("passes a 101 (an upgrade) through untouched, with no rate-limit fields", async () => {
    const service = {
      authorizeRequest: () =>
        Promise.resolve({
          rateLimitResults: [
            { name: "m", limit: 9, windowMs: 60_000, remaining: 8, resetMs: 1000, allowed: true },
          ],
        } as never),
    };
    const upgrade = new Response(null, { headers: { Upgrade: "websocket" } });
    Object.defineProperty(upgrade, "status", { value: 101 });
    const handler = createApiKeyAuthorizer(service).protect(() => upgrade);
    const response = await handler(get());
    assert.equal(response, upgrade);
    assert.deepEqual([...response.headers], [["upgrade", "websocket"]]);
  });

  it("rethrows what is not an API-key or storage failure", async () => {
    const service = {
      authorizeRequest: () => Promise.reject(new RangeError("a bug")),
    };
    const handler = createApiKeyAuthorizer(service).protect(() => new Response("ok"));
    await assert.rejects(handler(get()), RangeError);
  });
});

describe("apiKeyErrorResponse", () => {
  it("answers a storage failure as 503 without its cause", async () => {
    const response = apiKeyErrorResponse(
      new ApiKeyStorageError("findByPrefix", new Error("password=hunter2")),
    );
    assert.equal(response.status, 503);
    const text = await response.text();
    assert.deepEqual(JSON.parse(text), {
      statusCode: 503,
      code: "api_key_storage_unavailable",
      message: "API key storage is unavailable",
    });
    assert.ok(!text.includes("hunter2"));
  });
});

describe("log", () => {
  it("a log function that throws never fails the request", async () => {
    const { service, key } = await setup();
    const handler = createApiKeyAuthorizer(service, {
      clientIp: () => {
        throw new Error("resolver down");
      },
      log: () => {
        throw new Error("log down");
      },
    }).protect(() => new Response("ok"));
    const response = await handler(get({ "x-api-key": key }), info());
    assert.equal(await response.text(), "ok");
  });

  it("an async log function that rejects never fails the request nor leaves an unhandled rejection", async () => {
    const { service, key } = await setup();
    const rejections = collectUnhandledRejections();
    const lines: string[] = [];
    let ok: Response;
    let refused: Response;
    try {
      const authorizer = createApiKeyAuthorizer(service, {
        clientIp: () => {
          throw new Error("resolver down");
        },
        onError: () => {
          throw new Error("formatter bug");
        },
        log: (line) => {
          lines.push(line);
          return Promise.reject(new Error("log down"));
        },
      });
      const handler = authorizer.protect(() => new Response("ok"));
      ok = await handler(get({ "x-api-key": key }), info());
      refused = await handler(get({}), info());
    } finally {
      await rejections.stop();
    }
    assert.equal(await ok.text(), "ok");
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).code, "api_key_missing");
    assert.equal(lines.length, 3, "the resolver's failures (one a request) and onError's logged");
    assert.deepEqual(rejections.reasons, [], "an unhandled rejection escaped");
  });

  it("with legacyKeyLayouts, no line carries a key of a legacy layout: a failing clientIp or onError, a bug line's path", async () => {
    const legacy = `ak_live_${"A".repeat(12)}_${"b".repeat(32)}`; // nestarc-v0
    const { service, key } = await burstKey({ legacyKeyLayouts: ["nestarc-v0"] });
    const failing = () => {
      const error = new Error("down");
      error.name = `LeakyError ${legacy}`;
      throw error;
    };
    const lines: string[] = [];
    const authorizer = createApiKeyAuthorizer(service, {
      clientIp: failing,
      onError: failing,
      log: (line) => lines.push(line),
    });
    // A route naming a policy the key lacks: the bug line names the request's path.
    const hourly = authorizer.require({ rateLimits: "hourly" }).protect(() => new Response("ok"));
    await assert.rejects(
      hourly(new Request(`http://x/v1/${legacy}`, { headers: { "x-api-key": key } })),
      TypeError,
    );
    assert.equal((await authorizer.protect(() => new Response("ok"))(get())).status, 401);
    for (const kind of [/clientIp failed/, /onError failed/, /GET \/v1\/\[REDACTED_API_KEY\]: /]) {
      assert.ok(lines.some((line) => kind.test(line)), `${kind} not logged: ${lines.join("\n")}`);
    }
    assert.ok(lines.every((line) => !line.includes(legacy)), lines.join("\n"));
  });

  it("a route's bug is logged once whatever the paths, methods and keys; another route's bug is still logged after 120 of them", async () => {
    const { service, key } = await burstKey();
    const lines: string[] = [];
    const authorizer = createApiKeyAuthorizer(service, { log: (line) => lines.push(line) });
    const reports = authorizer.require({ rateLimits: "hourly" }).protect(() => new Response("ok"));
    const exports = authorizer.require({ rateLimits: "daily" }).protect(() => new Response("ok"));
    for (let i = 0; i < 120; i++) {
      const other = i === 0 ? key : await burstKeyOf(service);
      const request = new Request(`http://x/reports/${i}`, {
        method: i % 2 === 0 ? "GET" : `M${i}`,
        headers: { "x-api-key": other },
      });
      await assert.rejects(reports(request), TypeError);
    }
    await assert.rejects(
      exports(new Request("http://x/exports", { headers: { "x-api-key": key } })),
      TypeError,
    );
    assert.equal(lines.length, 2, `${lines.length} lines, the last: ${lines.at(-1)}`);
    assert.match(lines[0], /^api-keys: GET \/reports\/0: .*"hourly"/);
    assert.match(lines[1], /^api-keys: GET \/exports: .*"daily"/);
  });
});
