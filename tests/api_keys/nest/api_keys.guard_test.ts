import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  Controller,
  Get,
  Injectable,
  InternalServerErrorException,
  Logger,
  Module,
  UseGuards,
} from "@nestjs/common";
import { APP_GUARD, ExternalContextCreator, NestFactory, Reflector } from "@nestjs/core";
import { generateKey } from "../../../api_keys/key_format.ts";
import { InMemoryApiKeyStorage } from "../../../api_keys/storage/in_memory.ts";
import { ApiKeyHttpException } from "../../../api_keys/nest/api_keys.exception.ts";
import {
  ApiKeysGuard,
  type ApiKeysGuardContext,
  getApiKeyContext,
} from "../../../api_keys/nest/api_keys.guard.ts";
import { ApiKeysModule } from "../../../api_keys/nest/api_keys.module.ts";
import type {
  ApiKeyClientIpResolver,
  ApiKeyContextWriter,
} from "../../../api_keys/nest/api_keys.constants.ts";
import { overrideStorage } from "../helpers.ts";
import {
  appModule,
  boot,
  issue,
  moduleOptions,
  PEPPER,
  PLATFORMS,
  type RunningApp,
  withKey,
} from "./test_app.ts";
import { ApiKeysService } from "../../../api_keys/service.ts";
import { collectUnhandledRejections } from "../../reliability/harness.ts";
import { createRateLimiter } from "../../../rate_limits/mod.ts";
import { RateLimit, RequireScope } from "../../../api_keys/nest/api_keys.decorators.ts";

const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg";

function assertFailure(
  response: { status: number; body: Record<string, unknown> },
  status: number,
  code: string,
  secrets: string[] = [],
): void {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.equal(response.body.statusCode, status);
  assert.equal(response.body.code, code);
  assert.equal(typeof response.body.message, "string");
  const text = JSON.stringify(response.body);
  for (const secret of secrets) assert.ok(!text.includes(secret), "response leaks a key");
}

for (const platform of PLATFORMS) {
  describe(`ApiKeysGuard over ${platform}`, () => {
    let running: RunningApp;
    before(async () => {
      running = await boot(appModule(ApiKeysModule.forRoot(moduleOptions())), platform);
    });
    after(() => running.close());

    it("answers 401 api_key_missing without a key", async () => {
      assertFailure(await running.request("/open"), 401, "api_key_missing");
    });

    it("answers 401 api_key_malformed for a value that is no key", async () => {
      const response = await running.request("/open", { headers: withKey("not-a-key") });
      assertFailure(response, 401, "api_key_malformed", ["not-a-key"]);
    });

    it("answers 401 api_key_invalid for a well-formed unknown key", async () => {
      const unknown = generateKey({ environment: "test" }).raw;
      const response = await running.request("/open", { headers: withKey(unknown) });
      assertFailure(response, 401, "api_key_invalid", [unknown]);
    });

    it("answers 401 api_key_revoked right after a revoke, even for a key just used", async () => {
      const { id, key } = await issue(running.service);
      assert.equal((await running.request("/open", { headers: withKey(key) })).status, 200);
      await running.service.revoke(id);
      const response = await running.request("/open", { headers: withKey(key) });
      assertFailure(response, 401, "api_key_revoked", [key]);
    });

    it("challenges every 401 with WWW-Authenticate, the same whatever the key's state; no challenge with a 403", async () => {
      const missing = await running.request("/open");
      assert.equal(missing.status, 401);
      assert.equal(missing.headers.get("www-authenticate"), "Bearer");
      const { id, key: revoked } = await issue(running.service);
      await running.service.revoke(id);
      const unknown = generateKey({ environment: "test" }).raw;
      for (const sent of ["not-a-key", unknown, revoked]) {
        const refused = await running.request("/open", { headers: withKey(sent) });
        assert.equal(refused.status, 401);
        assert.equal(refused.headers.get("www-authenticate"), 'Bearer error="invalid_token"');
      }
      const { key } = await issue(running.service, { environment: "test" });
      const forbidden = await running.request("/live", { headers: withKey(key) });
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.headers.get("www-authenticate"), null);
    });

    it("answers 403 api_key_environment_mismatch for a test key on a live route", async () => {
      const { key } = await issue(running.service, { environment: "test" });
      assertFailure(
        await running.request("/live", { headers: withKey(key) }),
        403,
        "api_key_environment_mismatch",
        [key],
      );
      const live = await issue(running.service, { environment: "live" });
      assert.equal((await running.request("/live", { headers: withKey(live.key) })).status, 200);
    });

    it("answers 403 api_key_scope_insufficient when the scope is missing or too low", async () => {
      const { key } = await issue(running.service, {
        scopes: [{ resource: "orders", level: "read" }],
      });
      assert.equal((await running.request("/orders", { headers: withKey(key) })).status, 200);
      assertFailure(
        await running.request("/orders", { method: "POST", headers: withKey(key) }),
        403,
        "api_key_scope_insufficient",
        [key],
      );
      const other = await issue(running.service, {
        scopes: [{ resource: "invoices", level: "write" }],
      });
      assertFailure(
        await running.request("/orders", { headers: withKey(other.key) }),
        403,
        "api_key_scope_insufficient",
      );
    });

    it("lets write imply read", async () => {
      const { key } = await issue(running.service, {
        scopes: [{ resource: "orders", level: "write" }],
      });
      const read = await running.request("/orders", { headers: withKey(key) });
      assert.deepEqual([read.status, read.body], [200, { ok: "read" }]);
      const write = await running.request("/orders", { method: "POST", headers: withKey(key) });
      assert.deepEqual([write.status, write.body], [201, { ok: "write" }]);
    });

    it("answers 403 api_key_ip_not_allowed outside the allowlist and 200 inside", async () => {
      const outside = await issue(running.service, { allowedIpCidrs: ["10.0.0.0/8"] });
      assertFailure(
        await running.request("/open", { headers: withKey(outside.key) }),
        403,
        "api_key_ip_not_allowed",
        [outside.key],
      );
      const inside = await issue(running.service, { allowedIpCidrs: ["127.0.0.0/8"] });
      assert.equal((await running.request("/open", { headers: withKey(inside.key) })).status, 200);
    });

    it("checks the IP before environment and scope, and environment before scope", async () => {
      const restricted = await issue(running.service, { allowedIpCidrs: ["10.0.0.0/8"] });
      assertFailure(
        await running.request("/live-orders", { headers: withKey(restricted.key) }),
        403,
        "api_key_ip_not_allowed",
      );
      const open = await issue(running.service);
      assertFailure(
        await running.request("/live-orders", { headers: withKey(open.key) }),
        403,
        "api_key_environment_mismatch",
      );
    });

    it("reads a Bearer key and ignores a JWT beside a key in X-API-Key", async () => {
      const { key } = await issue(running.service);
      const bearer = await running.request("/open", {
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(bearer.status, 200);
      const both = await running.request("/open", {
        headers: withKey(key, { authorization: `Bearer ${JWT}` }),
      });
      assert.equal(both.status, 200);
      assertFailure(
        await running.request("/open", { headers: { authorization: `Bearer ${JWT}` } }),
        401,
        "api_key_missing",
      );
    });

    it("answers 401 api_key_malformed for a bare key in Authorization (no scheme), never echoing it", async () => {
      const { key } = await issue(running.service);
      assertFailure(
        await running.request("/open", { headers: { authorization: key } }),
        401,
        "api_key_malformed",
        [key],
      );
      assertFailure(
        await running.request("/open", { headers: { authorization: "Basic dXNlcjpwYXNz" } }),
        401,
        "api_key_missing",
      );
    });

    it("answers 401 api_key_malformed for two different keys", async () => {
      const first = await issue(running.service);
      const second = await issue(running.service);
      assertFailure(
        await running.request("/open", {
          headers: withKey(first.key, { authorization: `Bearer ${second.key}` }),
        }),
        401,
        "api_key_malformed",
        [first.key, second.key],
      );
    });

    it("gives the handler the context through CurrentApiKey and request.apiKey", async () => {
      const { id, key } = await issue(running.service, {
        tenantId: "tenant-ctx",
        scopes: [{ resource: "orders", level: "write" }],
      });
      const { status, body } = await running.request("/open", { headers: withKey(key) });
      assert.equal(status, 200);
      const current = body.current as Record<string, unknown>;
      assert.equal(current.keyId, id);
      assert.equal(current.tenantId, "tenant-ctx");
      assert.equal(current.environment, "test");
      assert.deepEqual(current.scopes, ["orders:write"]);
      assert.deepEqual(body.property, current);
      assert.ok(!JSON.stringify(body).includes(key));
    });

    it("reads route metadata once per route, not per request", async () => {
      const reflector = running.app.get(Reflector);
      const original = reflector.getAllAndOverride;
      let reads = 0;
      reflector.getAllAndOverride = ((...args: Parameters<typeof original>) => {
        reads++;
        return original.apply(reflector, args);
      }) as typeof original;
      try {
        const { key } = await issue(running.service, {
          scopes: [{ resource: "orders", level: "write" }],
        });
        for (let i = 0; i < 3; i++) {
          assert.equal((await running.request("/orders", { headers: withKey(key) })).status, 200);
          assert.equal(
            (await running.request("/orders", { method: "POST", headers: withKey(key) })).status,
            201,
          );
        }
        const afterFirstRound = reads;
        for (let i = 0; i < 3; i++) {
          await running.request("/orders", { headers: withKey(key) });
        }
        assert.ok(afterFirstRound <= 4, `read ${afterFirstRound} times for two routes`);
        assert.equal(reads, afterFirstRound);
      } finally {
        reflector.getAllAndOverride = original;
      }
    });

    it("lets method-level requirements override class-level ones", async () => {
      const admin = await issue(running.service, {
        environment: "live",
        scopes: [{ resource: "admin", level: "write" }],
      });
      assert.equal((await running.request("/admin", { headers: withKey(admin.key) })).status, 200);
      const testAdmin = await issue(running.service, {
        environment: "test",
        scopes: [{ resource: "admin", level: "write" }],
      });
      assertFailure(
        await running.request("/admin", { headers: withKey(testAdmin.key) }),
        403,
        "api_key_environment_mismatch",
      );
      const reporter = await issue(running.service, {
        environment: "test",
        scopes: [{ resource: "reports", level: "read" }],
      });
      const reports = await running.request("/admin/reports", { headers: withKey(reporter.key) });
      assert.deepEqual([reports.status, reports.body], [200, { ok: "reports" }]);
      assertFailure(
        await running.request("/admin/reports", { headers: withKey(admin.key) }),
        403,
        "api_key_environment_mismatch",
      );
    });
  });

  describe(`RequireScope with capitals and '/' in the resource over ${platform}`, () => {
    @Controller("scoped")
    @UseGuards(ApiKeysGuard)
    class ScopedController {
      @Get("orders")
      @RequireScope("Orders", "read")
      orders() {
        return { ok: "Orders" };
      }

      @Get("invoices")
      @RequireScope("billing/invoices", "write")
      invoices() {
        return { ok: "billing/invoices" };
      }
    }

    it("passes a key holding the exact resource; refuses another case or a parent", async () => {
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions()), [ScopedController]),
        platform,
      );
      try {
        const { key } = await issue(running.service, {
          scopes: [
            { resource: "Orders", level: "read" },
            { resource: "billing/invoices", level: "write" },
          ],
        });
        for (const path of ["/scoped/orders", "/scoped/invoices"]) {
          assert.equal((await running.request(path, { headers: withKey(key) })).status, 200, path);
        }
        const lower = await issue(running.service, {
          scopes: [{ resource: "orders", level: "write" }, { resource: "billing", level: "write" }],
        });
        for (const path of ["/scoped/orders", "/scoped/invoices"]) {
          assertFailure(
            await running.request(path, { headers: withKey(lower.key) }),
            403,
            "api_key_scope_insufficient",
            [lower.key],
          );
        }
      } finally {
        await running.close();
      }
    });
  });

  describe(`ApiKeysGuard as APP_GUARD over ${platform}`, () => {
    @Controller("global")
    class GlobalController {
      @Get()
      index() {
        return { ok: true };
      }
    }

    it("protects controllers without @UseGuards", async () => {
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions()), [GlobalController], [
          { provide: APP_GUARD, useExisting: ApiKeysGuard },
        ]),
        platform,
      );
      try {
        assertFailure(await running.request("/global"), 401, "api_key_missing");
        const { key } = await issue(running.service);
        const ok = await running.request("/global", { headers: withKey(key) });
        assert.deepEqual([ok.status, ok.body], [200, { ok: true }]);
      } finally {
        await running.close();
      }
    });

    @Controller("guarded")
    @UseGuards(ApiKeysGuard)
    class GuardedController {
      @Get()
      @RateLimit("minute", { cost: 2 })
      index() {
        return { ok: true };
      }
    }

    it("charges a request once when it also runs on the controller (@UseGuards), the route's @RateLimit cost included: credits, windows, headers", async () => {
      const limiter = createRateLimiter({ logger: () => {} });
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions({ limiter })), [GuardedController], [
          { provide: APP_GUARD, useExisting: ApiKeysGuard },
        ]),
        platform,
      );
      try {
        const { key } = await issue(running.service, {
          rateLimits: [{ name: "minute", limit: 10, windowMs: 60_000 }],
          credits: { remaining: 10 },
        });
        const response = await fetch(
          `http://127.0.0.1:${running.app.getHttpServer().address().port}/guarded`,
          { headers: withKey(key) },
        );
        assert.equal(response.status, 200, await response.text());
        assert.match(response.headers.get("ratelimit") ?? "", /^"minute";r=8;t=\d+$/);
        const left = await running.service.authorize(key, { cost: 0 });
        assert.equal(left.creditResult?.remaining, 8, "one request of the route's cost, 2");
        assert.equal(left.rateLimitResults?.[0].remaining, 8);
      } finally {
        await running.close();
      }
    });
  });

  describe(`ApiKeysGuard with a failing storage over ${platform}`, () => {
    it("answers 503 with a generic body and no internals", async () => {
      const storage = overrideStorage(new InMemoryApiKeyStorage(), {
        findByPrefix: () => Promise.reject(new Error("connect ECONNREFUSED db-secret-host:5432")),
      });
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions({ storage }))),
        platform,
      );
      try {
        const { key } = await issue(running.service);
        const response = await running.request("/open", { headers: withKey(key) });
        assertFailure(response, 503, "api_key_storage_unavailable", [
          key,
          "db-secret-host",
          "ECONNREFUSED",
        ]);
      } finally {
        await running.close();
      }
    });
  });
}

/**
 * A client-IP resolver that fails (throws, rejects with an `Error`, rejects
 * with a non-`Error`) means "client IP unknown": keys without an allowlist
 * pass, allowlisted keys fail closed, and the failure is logged, redacted.
 */
/** A guard context over a request carrying `key` in `X-API-Key`, on a route without metadata. */
function contextFor(key: string): ApiKeysGuardContext {
  const request = {
    headers: { "x-api-key": key },
    rawHeaders: ["X-API-Key", key],
    ip: "127.0.0.1",
  };
  return {
    switchToHttp: () => ({ getRequest: () => request }),
    getHandler: () => contextFor,
    getClass: () => ApiKeysGuard,
  };
}

/** Resolvers failing in each way; `leak` goes into the error so the log line must redact it. */
function failingResolvers(leak: () => string): Record<string, ApiKeyClientIpResolver> {
  const error = () => {
    const failure = new TypeError(`no address in ${leak()}`);
    failure.name = `TypeError ${leak()}`;
    return failure;
  };
  return {
    "throws": () => {
      throw error();
    },
    "rejects with an Error": () => Promise.reject(error()),
    "rejects with a non-Error": () => Promise.reject(`no address in ${leak()}`),
  };
}

/**
 * The lines Nest's `Logger` writes (warn and error) in each test of the
 * enclosing `describe`, emptied before each; call it in the `describe`.
 */
function loggedLines(): string[] {
  const logged: string[] = [];
  const originals = { warn: Logger.prototype.warn, error: Logger.prototype.error };
  beforeEach(() => {
    logged.length = 0;
    for (const level of ["warn", "error"] as const) {
      Logger.prototype[level] = function (message: unknown) {
        logged.push(String(message));
      };
    }
  });
  afterEach(() => {
    Logger.prototype.warn = originals.warn;
    Logger.prototype.error = originals.error;
  });
  return logged;
}

describe("ApiKeysGuard with a failing client-IP resolver", () => {
  const logged = loggedLines();

  let leaked = "";
  for (const [mode, resolver] of Object.entries(failingResolvers(() => leaked))) {
    it(`${mode}: an open key passes, an allowlisted key fails closed, one redacted log line each`, async () => {
      const rejections = collectUnhandledRejections();
      const service = new ApiKeysService({
        peppers: { 1: PEPPER },
        storage: new InMemoryApiKeyStorage(),
      });
      const guard = new ApiKeysGuard(service, new Reflector(), null, resolver);
      const open = await issue(service);
      const pinned = await issue(service, { allowedIpCidrs: ["127.0.0.0/8"] });
      leaked = open.key;

      assert.equal(await guard.canActivate(contextFor(open.key)), true);
      const error = await guard.canActivate(contextFor(pinned.key)).then(() => null, (e) => e);
      assert.ok(error instanceof ApiKeyHttpException, String(error));
      assert.equal(error.getStatus(), 403);
      assert.equal(error.code, "api_key_ip_not_allowed");
      await rejections.stop();

      assert.deepEqual(rejections.reasons, []);
      assert.equal(logged.length, 2, logged.join("\n"));
      for (const line of logged) {
        assert.match(line, /clientIpResolver/);
        assert.ok(!line.includes(open.key), `log line leaks a key: ${line}`);
      }
      // The same allowlisted key passes when the resolver works.
      const working = new ApiKeysGuard(service, new Reflector(), null, () => "127.0.0.1");
      assert.equal(await working.canActivate(contextFor(pinned.key)), true);
    });
  }
});

/**
 * A context writer that fails (throws, rejects with an `Error`, rejects with a
 * non-`Error`) after the request is authorized: a 500 with Nest's generic
 * body, no context recorded, one redacted log line per error name.
 */
describe("ApiKeysGuard with a failing context writer", () => {
  const logged = loggedLines();

  let leaked = "";
  const failure = () => {
    const error = new Error(`cannot write ${leaked}`);
    error.name = `WriterError ${leaked}`;
    return error;
  };
  const writers: Record<string, ApiKeyContextWriter> = {
    "throws": () => {
      throw failure();
    },
    "rejects with an Error": () => Promise.reject(failure()),
    "rejects with a non-Error": () => Promise.reject(`cannot write ${leaked}`),
  };

  for (const [mode, writer] of Object.entries(writers)) {
    it(`${mode}: a generic 500, no context recorded, one redacted log line`, async () => {
      const rejections = collectUnhandledRejections();
      const service = new ApiKeysService({
        peppers: { 1: PEPPER },
        storage: new InMemoryApiKeyStorage(),
      });
      const guard = new ApiKeysGuard(service, new Reflector(), writer, null);
      const { key } = await issue(service);
      leaked = key;
      for (let attempt = 0; attempt < 2; attempt++) {
        const context = contextFor(key);
        const error = await guard.canActivate(context).then(() => null, (e) => e);
        assert.ok(error instanceof InternalServerErrorException, String(error));
        assert.equal(error.getStatus(), 500);
        const text = JSON.stringify(error.getResponse()) + error.message;
        assert.ok(!text.includes(key) && !text.includes("cannot write"), text);
        assert.equal(getApiKeyContext(context.switchToHttp().getRequest()), undefined);
      }
      await rejections.stop();
      assert.deepEqual(rejections.reasons, []);
      assert.equal(logged.length, 1, logged.join("\n"));
      assert.match(logged[0], /contextWriter/);
      assert.ok(!logged[0].includes(key), `log line leaks a key: ${logged[0]}`);
    });
  }

  for (const platform of PLATFORMS) {
    it(`over ${platform}: the request is answered 500 with a generic body; no log line (Nest's neither) carries the error's text`, async () => {
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions({ contextWriter: writers.throws }))),
        platform,
      );
      try {
        const { key } = await issue(running.service);
        leaked = key;
        const response = await running.request("/open", { headers: withKey(key) });
        assert.equal(response.status, 500);
        const text = JSON.stringify(response.body);
        assert.ok(!text.includes(key) && !text.includes("cannot write"), text);
        assert.equal(logged.length, 1, logged.join("\n"));
        assert.match(logged[0], /contextWriter/);
        assert.ok(!logged[0].includes(key) && !logged[0].includes("cannot write"), logged[0]);
      } finally {
        await running.close();
      }
    });
  }
});

/**
 * With `legacyKeyLayouts`, the guard's log lines redact the keys of those layouts too: a failing
 * client-IP resolver and a failing context writer whose error names carry one.
 */
describe("ApiKeysGuard with legacyKeyLayouts", () => {
  const logged = loggedLines();
  const legacy = `ak_test_${"A".repeat(12)}_${"b".repeat(32)}`; // nestarc-v0
  const failing = () => {
    const error = new Error("down");
    error.name = `LeakyError ${legacy}`;
    throw error;
  };

  for (const platform of PLATFORMS) {
    it(`over ${platform}: no log line carries a key of a legacy layout`, async () => {
      const running = await boot(
        appModule(
          ApiKeysModule.forRoot(
            moduleOptions({
              legacyKeyLayouts: ["nestarc-v0"],
              clientIpResolver: failing,
              contextWriter: failing,
            }),
          ),
        ),
        platform,
      );
      try {
        const { key } = await issue(running.service);
        const response = await running.request("/open", { headers: withKey(key) });
        assert.equal(response.status, 500);
        for (const kind of [/clientIpResolver failed/, /contextWriter failed/]) {
          assert.ok(logged.some((line) => kind.test(line)), `${kind}: ${logged.join("\n")}`);
        }
        assert.ok(logged.every((line) => !line.includes(legacy)), logged.join("\n"));
      } finally {
        await running.close();
      }
    });
  }
});

/**
 * Outside HTTP (microservice, WebSocket, GraphQL) `switchToHttp().getRequest()` is the message
 * payload or the socket, not a request: the guard refuses the call before reading it, so a key
 * and an `ip` in a payload open nothing.
 */
describe("ApiKeysGuard outside HTTP", () => {
  const logged = loggedLines();

  for (const type of ["rpc", "ws", "graphql"]) {
    it(`${type}: refuses before reading the payload, with an error naming the context; logged once`, async () => {
      const service = new ApiKeysService({
        peppers: { 1: PEPPER },
        storage: new InMemoryApiKeyStorage(),
      });
      const guard = new ApiKeysGuard(service, new Reflector(), null, null);
      const { key } = await issue(service, { allowedIpCidrs: ["10.0.0.0/8"] });
      let read = 0;
      const context = {
        getType: () => type,
        switchToHttp: () => {
          read++;
          return { getRequest: () => ({ headers: { "x-api-key": key }, ip: "10.1.1.1" }) };
        },
        getHandler: () => contextFor,
        getClass: () => ApiKeysGuard,
      };
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = await guard.canActivate(context).then(() => null, (e) => e);
        assert.ok(error instanceof Error, String(error));
        assert.match(error.message, new RegExp(`"${type}" context`));
        assert.match(error.message, /ApiKeysGuard protects HTTP routes only/);
        assert.ok(!error.message.includes(key));
      }
      assert.equal(read, 0);
      assert.equal(logged.length, 1, logged.join("\n"));
      assert.match(logged[0], new RegExp(`"${type}" context`));
    });
  }

  it("as APP_GUARD of a microservice-style handler: a key and an allowlisted ip in the payload open nothing", async () => {
    @Injectable()
    class Gateway {
      calls = 0;
      handle(..._args: unknown[]) {
        this.calls++;
        return "handled";
      }
    }
    @Module({
      imports: [ApiKeysModule.forRoot(moduleOptions())],
      providers: [Gateway, { provide: APP_GUARD, useExisting: ApiKeysGuard }],
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, {
      logger: false,
      abortOnError: false,
    });
    try {
      await app.init();
      const { key } = await issue(app.get(ApiKeysService), { allowedIpCidrs: ["10.0.0.0/8"] });
      const gateway = app.get(Gateway);
      const handle = app.get(ExternalContextCreator).create(
        gateway,
        gateway.handle,
        "handle",
        undefined,
        undefined,
        undefined,
        undefined,
        { guards: true, interceptors: false, filters: false },
        "rpc",
      );
      const payload = { headers: { "x-api-key": key }, ip: "10.1.1.1" };
      const error = await Promise.resolve(handle(payload, {})).then(() => null, (e) => e);
      assert.ok(error instanceof Error, String(error));
      assert.match(error.message, /"rpc" context/);
      assert.equal(gateway.calls, 0);
      assert.equal(logged.length, 1, logged.join("\n"));
    } finally {
      await app.close();
    }
  });
});
