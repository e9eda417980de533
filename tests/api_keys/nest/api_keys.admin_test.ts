/**
 * `createApiKeysAdminController` in real Nest apps on Express and Fastify,
 * behind `ApiKeysGuard`: the tenant and the caller's key from the guard's
 * context, the no-escalation default, tenant binding, CSRF, bounded bodies.
 */
import "reflect-metadata";
import http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  Module,
  UseGuards,
} from "@nestjs/common";
import { APP_GUARD, NestFactory } from "@nestjs/core";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import { ApiKeysModule } from "../../../api_keys/nest/api_keys.module.ts";
import { ApiKeysGuard, getApiKeyContext } from "../../../api_keys/nest/api_keys.guard.ts";
import { RequireScope, SkipApiKey } from "../../../api_keys/nest/api_keys.decorators.ts";
import {
  type AdminHttpRequest,
  createApiKeysAdminController,
} from "../../../api_keys/nest/api_keys.admin.ts";
import { ApiKeysService } from "../../../api_keys/service.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import {
  appModule,
  boot,
  guardedAdminController,
  moduleOptions,
  moduleWarnings,
  PLATFORMS,
  type RunningApp,
} from "./test_app.ts";
import { assertRotationKeepsCallerLimits } from "../admin/limited_rotation.ts";

const CSRF = { "x-requested-with": "api-keys-manager", "content-type": "application/json" };

for (const platform of PLATFORMS) {
  describe(`createApiKeysAdminController (${platform})`, () => {
    let running: RunningApp;
    let service: ApiKeysService;
    let admin: { id: string; key: string };
    let theirs: { id: string; key: string };
    const decisions: string[] = [];

    before(async () => {
      const Admin = createApiKeysAdminController({
        path: "settings/api-keys",
        decorators: [UseGuards(ApiKeysGuard), RequireScope("keys", "write")],
        scopes: ["projects:read", "projects:write", "billing:read"],
        tenantOf: (request) => getApiKeyContext(request)?.tenantId,
        callerKeyIdOf: (request) => getApiKeyContext(request)?.keyId,
        actorOf: (request) => `key:${getApiKeyContext(request)?.keyId}`,
        allowedOrigins: ["https://app.example.com"],
        canManage: (_request, action) => {
          decisions.push(action);
          return true;
        },
      });
      @Module({ imports: [ApiKeysModule.forRoot(moduleOptions())], controllers: [Admin] })
      class AppModule {}
      running = await boot(AppModule, platform);
      service = running.service;
      admin = await service.create({
        tenantId: "acme",
        name: "admin",
        scopes: [{ resource: "keys", level: "write" }, { resource: "projects", level: "write" }],
      });
      theirs = await service.create({
        tenantId: "other",
        name: "theirs",
        scopes: [{ resource: "projects", level: "read" }],
      });
    });
    after(() => running.close());

    const call = async (
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = CSRF,
    ) => {
      const { port } = running.app.getHttpServer().address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}/settings/api-keys${path}`, {
        method,
        headers: {
          "x-api-key": admin.key,
          ...headers,
          // Fastify refuses an empty body sent as JSON.
          ...(body === undefined ? { "content-type": "text/plain" } : {}),
        },
        body: body === undefined
          ? undefined
          : typeof body === "string"
          ? body
          : JSON.stringify(body),
      });
      const text = await response.text();
      return {
        status: response.status,
        json: text === "" ? undefined : JSON.parse(text),
        text,
        headers: response.headers,
      };
    };

    it("serves the routes: config, create, list, read, rename, rotate, revoke", async () => {
      const config = await call("GET", "/config");
      assert.equal(config.status, 200);
      assert.deepEqual(config.json.capabilities, {
        rename: true,
        conditionalRename: true,
        usage: false,
      });
      const created = await call("POST", "/keys", { name: "ci", scopes: ["projects:read"] });
      assert.equal(created.status, 201, created.text);
      const { key, record } = created.json;
      assert.equal((await service.verify(key)).tenantId, "acme");
      const list = await call("GET", "/keys");
      assert.equal(list.json.keys.length, 2);
      assert.ok(!list.text.includes(key));
      assert.equal((await call("GET", `/keys/${record.id}`)).json.name, "ci");
      assert.equal((await call("PATCH", `/keys/${record.id}`, { name: "ci 2" })).json.name, "ci 2");
      const stale = await call("PATCH", `/keys/${record.id}`, { name: "ci 3", expectedName: "ci" });
      assert.equal(stale.status, 409, stale.text);
      assert.equal(stale.json.error.code, "api_key_name_changed");
      const named = await call("PATCH", `/keys/${record.id}`, {
        name: "ci 3",
        expectedName: "ci 2",
      });
      assert.equal(named.json.name, "ci 3");
      const rotated = await call("POST", `/keys/${record.id}/rotate`, { grace: "1h" });
      assert.equal(rotated.status, 201);
      const revoked = await call("DELETE", `/keys/${rotated.json.record.id}`);
      assert.equal(revoked.json.status, "revoked");
      assert.equal((await call("GET", `/keys/${record.id}/usage`)).status, 501);
      // Routed to the handler (Nest would answer 404): 501 without the service's audit option.
      assert.equal((await call("GET", "/audit")).status, 501);
      assert.ok(
        ["config", "create", "list", "read", "rename", "rotate", "revoke"].every((a) =>
          decisions.includes(a)
        ),
      );
    });

    it("GET keys query parameters pass through: limit, cursor, q, environment, sort; a repeated one is 400", async () => {
      for (const name of ["page a", "page b", "page c"]) {
        const created = await call("POST", "/keys", { name, scopes: ["projects:read"] });
        assert.equal(created.status, 201, created.text);
      }
      const first = await call("GET", "/keys?limit=2&q=PAGE&sort=name_asc&environment=live");
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(first.json.keys.map((key: { name: string }) => key.name), [
        "page a",
        "page b",
      ]);
      const cursor = encodeURIComponent(first.json.nextCursor);
      const second = await call("GET", `/keys?limit=2&q=page&sort=name_asc&cursor=${cursor}`);
      assert.deepEqual(second.json.keys.map((key: { name: string }) => key.name), ["page c"]);
      assert.equal(second.json.nextCursor, null);
      assert.deepEqual((await call("GET", "/keys?q=page&environment=test")).json.keys, []);
      const repeated = await call("GET", "/keys?limit=1&limit=2");
      assert.equal(repeated.status, 400);
      assert.equal(repeated.json.error.details.field, "limit");
      assert.equal((await call("GET", "/keys?sort=random")).status, 400);
      assert.equal((await call("GET", "/usage?keys=a,b")).status, 501);
    });

    it("HEAD on a GET route is answered as the GET without the body", async () => {
      for (const path of ["/config", "/keys", `/keys/${admin.id}`]) {
        const get = await call("GET", path);
        const head = await call("HEAD", path);
        assert.equal(get.status, 200, `GET ${path}: ${get.text}`);
        assert.equal(head.status, 200, `HEAD ${path}`);
        assert.equal(head.text, "", `HEAD ${path}`);
      }
    });

    it("a key id holding an escaped / is no route's: the envelope's 404, never another route", async () => {
      for (
        const [method, path] of [
          ["GET", `/keys/${admin.id}%2Fusage`],
          ["GET", `/keys/${admin.id}%2Frotate`],
          ["DELETE", `/keys/${admin.id}%2Fusage`],
          ["PATCH", `/keys/${admin.id}%2Frotate`],
        ]
      ) {
        const answer = await call(method, path, method === "PATCH" ? { name: "x" } : undefined);
        assert.equal(answer.status, 404, `${method} ${path}: ${answer.text}`);
        assert.equal(answer.json.error.code, "api_key_record_not_found", `${method} ${path}`);
        assert.equal(answer.headers.get("cache-control"), "no-store", `${method} ${path}`);
      }
      assert.equal((await call("GET", `/keys/${admin.id}`)).json.name, "admin");
    });

    it("the guard's key is the caller: no escalation, another tenant's key is 404", async () => {
      const escalation = await call("POST", "/keys", { name: "x", scopes: ["billing:read"] });
      assert.equal(escalation.status, 403);
      assert.equal(escalation.json.error.code, "api_key_escalation_refused");
      const foreign = await call("DELETE", `/keys/${theirs.id}`);
      assert.equal(foreign.status, 404);
      assert.equal(foreign.json.error.code, "api_key_record_not_found");
      assert.equal((await service.verify(theirs.key)).keyId, theirs.id);
    });

    it("without a key the guard answers 401 before any route runs", async () => {
      const { port } = running.app.getHttpServer().address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}/settings/api-keys/keys`);
      assert.equal(response.status, 401);
    });

    it("CSRF header required on state-changing routes", async () => {
      const answer = await call("POST", "/keys", { name: "x", scopes: ["projects:read"] }, {
        "content-type": "application/json",
      });
      assert.equal(answer.status, 403);
      assert.equal(answer.json.error.code, "csrf_refused");
    });

    it("createdBy from actorOf; a same-site request passes from an allowed Origin only", async () => {
      const body = { name: "dash", scopes: ["projects:read"] };
      const sameSite = { ...CSRF, "sec-fetch-site": "same-site" };
      const allowed = await call("POST", "/keys", body, {
        ...sameSite,
        origin: "https://app.example.com",
      });
      assert.equal(allowed.status, 201, allowed.text);
      assert.equal(allowed.json.record.createdBy, `key:${admin.id}`);
      const other = await call("POST", "/keys", body, { ...sameSite, origin: "https://x.example" });
      assert.equal(other.status, 403);
      assert.equal(other.json.error.code, "csrf_refused");
    });

    it("a rotate body sent as anything but application/json, or JSON that is no object, is refused, never run with the defaults", async () => {
      // Express parses JSON and forms, leaving others unparsed ({} on Express 4); Nest's Fastify
      // parses JSON, text and forms, and refuses another media type itself (415). JSON that is a
      // string (perhaps holding an object) is read once, as what it is.
      const cases = [
        ["text/plain", '{"grace":"none"}', 400],
        ["application/vnd.api+json", '{"grace":"none"}', platform === "express" ? 400 : 415],
        ["application/x-www-form-urlencoded", "grace=none", 400],
        ["application/json", '""', 400],
        ["application/json", JSON.stringify('{"grace":"none"}'), 400],
        ["application/json", '{"grace":"none"}', 201],
        ["application/json; charset=utf-8", '{"grace":"none"}', 201],
        ['application/json;charset="utf-8"', '{"grace":"none"}', 201],
        ["application/json;charset=UTF-8", '{"grace":"none"}', 201],
        ["application/json; charset = utf-8", '{"grace":"none"}', 201],
        // Types body-parser 1 refuses (Express 4's leaves {}): a parameter with no value, a tab, a
        // space before ";", an empty parameter.
        ["application/json; charset", '{"grace":"none"}', 400],
        ["application/json;\tcharset=utf-8", '{"grace":"none"}', 400],
        ["application/json ; charset=utf-8", '{"grace":"none"}', 400],
        ["application/json;", '{"grace":"none"}', 400],
      ] as const;
      for (const [type, body, status] of cases) {
        const leaked = await acmeReader(service, "leaked");
        const answer = await call("POST", `/keys/${leaked.id}/rotate`, body, {
          ...CSRF,
          "content-type": type,
        });
        const what = `${type} ${body}`;
        assert.equal(answer.status, status, `${what}: ${answer.text}`);
        const stored = (await service.list("acme")).find((record) => record.id === leaked.id);
        const valid = await service.verify(leaked.key).then(() => true, () => false);
        // Refused: not rotated. Read: no grace, the old key ends at once.
        assert.deepEqual(
          [stored?.replacedByKeyId === null, valid],
          status === 201 ? [false, false] : [true, true],
          what,
        );
      }
    });

    it("bodies: over 16 KiB is 413; unknown fields and __proto__ are refused", async () => {
      const large = await call("POST", "/keys", { name: "x".repeat(20_000), scopes: [] });
      assert.equal(large.status, 413);
      const unknown = await call("POST", "/keys", { name: "x", scopes: ["projects:read"], a: 1 });
      assert.equal(unknown.status, 400);
      const proto = await call(
        "POST",
        "/keys",
        '{"name":"x","scopes":["projects:read"],"__proto__":{"x":1}}',
      );
      assert.equal(proto.status, 400, "refused by the route or by Fastify's parser");
    });
  });
}

/** Tenant acme's admin key: it may manage keys and grant `projects:write`. */
function acmeAdmin(service: ApiKeysService) {
  return service.create({
    tenantId: "acme",
    name: "admin",
    scopes: [{ resource: "keys", level: "write" }, { resource: "projects", level: "write" }],
  });
}

/** A key of tenant acme named `name`, reading projects: the one the admin acts on. */
function acmeReader(service: ApiKeysService, name: string) {
  return service.create({
    tenantId: "acme",
    name,
    scopes: [{ resource: "projects", level: "read" }],
  });
}

for (const platform of PLATFORMS) {
  describe(`createApiKeysAdminController (${platform}): a key id that needs escaping`, () => {
    let running: RunningApp;
    let next = 0;

    before(async () => {
      const Admin = guardedAdminController("settings/api-keys");
      // An idFactory's ids (or imported ones) with characters a path segment must escape.
      const idFactory = () => `legacy key:${next++}+é`;
      @Module({
        imports: [ApiKeysModule.forRoot(moduleOptions({ idFactory }))],
        controllers: [Admin],
      })
      class AppModule {}
      running = await boot(AppModule, platform);
    });
    after(() => running.close());

    it("reads, renames and revokes it at the path the element sends (encodeURIComponent)", async () => {
      const { service } = running;
      const admin = await acmeAdmin(service);
      const target = await acmeReader(service, "old");
      const { port } = running.app.getHttpServer().address() as { port: number };
      const send = async (method: string, body?: unknown) => {
        const response = await fetch(
          `http://127.0.0.1:${port}/settings/api-keys/keys/${encodeURIComponent(target.id)}`,
          {
            method,
            headers: {
              "x-api-key": admin.key,
              "content-type": body === undefined ? "text/plain" : "application/json",
            },
            body: body === undefined ? undefined : JSON.stringify(body),
          },
        );
        return { status: response.status, json: JSON.parse(await response.text()) };
      };
      const read = await send("GET");
      assert.equal(read.status, 200);
      assert.equal(read.json.id, target.id);
      assert.equal((await send("PATCH", { name: "renamed" })).json.name, "renamed");
      assert.equal((await send("DELETE")).json.status, "revoked");
    });
  });
}

for (const platform of PLATFORMS) {
  describe(`createApiKeysAdminController (${platform}): the guard's key's limits`, () => {
    let running: RunningApp;

    before(async () => {
      const Admin = createApiKeysAdminController({
        path: "settings/api-keys",
        decorators: [UseGuards(ApiKeysGuard), RequireScope("keys", "write")],
        scopes: ["projects:read", "projects:write"],
        tenantOf: (request) => getApiKeyContext(request)?.tenantId,
        callerKeyIdOf: (request) => getApiKeyContext(request)?.keyId,
        canManage: () => true,
      });
      const limiter = createRateLimiter({ logger: () => {} });
      @Module({
        imports: [ApiKeysModule.forRoot(moduleOptions({ limiter }))],
        controllers: [Admin],
      })
      class AppModule {}
      running = await boot(AppModule, platform);
    });
    after(() => running.close());

    it("a rate-limited, credit-limited caller cannot rotate the tenant's unlimited admin key; its own it can", async () => {
      const { port } = running.app.getHttpServer().address() as { port: number };
      await assertRotationKeepsCallerLimits(running.service, async (callerKey, id, grace) => {
        const response = await fetch(
          `http://127.0.0.1:${port}/settings/api-keys/keys/${id}/rotate`,
          {
            method: "POST",
            headers: { ...CSRF, "x-api-key": callerKey },
            body: JSON.stringify({ grace }),
          },
        );
        return { status: response.status, json: JSON.parse(await response.text()) };
      });
    });
  });
}

describe("createApiKeysAdminController on Fastify: a key id over 100 characters", () => {
  it("is Fastify's 414 under its default maxParamLength; served with maxParamLength 200 (docs/settings-page.md)", async () => {
    const statuses: number[] = [];
    for (const maxParamLength of [undefined, 200]) {
      let next = 0;
      const idFactory = () => `imported-${next++}-`.padEnd(200, "x"); // ids may have 200
      @Module({
        imports: [ApiKeysModule.forRoot(moduleOptions({ idFactory }))],
        controllers: [guardedAdminController("admin")],
      })
      class AppModule {}
      const app = await NestFactory.create(
        AppModule,
        new FastifyAdapter(maxParamLength === undefined ? {} : { maxParamLength }),
        { logger: false },
      );
      await app.listen(0, "127.0.0.1");
      try {
        const service = app.get(ApiKeysService);
        const admin = await acmeAdmin(service);
        const target = await acmeReader(service, "leaked");
        assert.equal(target.id.length, 200);
        const { port } = app.getHttpServer().address() as { port: number };
        const response = await fetch(`http://127.0.0.1:${port}/admin/keys/${target.id}`, {
          method: "DELETE",
          headers: { "x-api-key": admin.key, "x-requested-with": "api-keys-manager" },
        });
        await response.body?.cancel();
        statuses.push(response.status);
      } finally {
        await app.close();
      }
    }
    assert.deepEqual(statuses, [414, 200]);
  });
});

describe("createApiKeysAdminController on Fastify over HTTP/2", () => {
  it("reads a JSON body sent without content-length (HTTP/2 needs none); refuses one sent without a content-type, which Fastify leaves unparsed", async () => {
    const Admin = createApiKeysAdminController({
      path: "admin",
      decorators: [UseGuards(ApiKeysGuard), RequireScope("keys", "write")],
      scopes: ["projects:read"],
      tenantOf: (request) => getApiKeyContext(request)?.tenantId,
      callerKeyIdOf: (request) => getApiKeyContext(request)?.keyId,
      canManage: () => true,
    });
    @Module({ imports: [ApiKeysModule.forRoot(moduleOptions())], controllers: [Admin] })
    class AppModule {}
    const app = await NestFactory.create(
      AppModule,
      new FastifyAdapter({ http2: true } as ConstructorParameters<typeof FastifyAdapter>[0]),
      { logger: false },
    );
    await app.listen(0, "127.0.0.1");
    const client = http2.connect(`http://127.0.0.1:${app.getHttpServer().address().port}`);
    try {
      const service = app.get(ApiKeysService);
      const admin = await acmeAdmin(service);
      for (const [type, status] of [["application/json", 201], [undefined, 400]] as const) {
        const leaked = await acmeReader(service, "leaked");
        const answered = await new Promise<number>((resolve, reject) => {
          const stream = client.request({
            ":method": "POST",
            ":path": `/admin/keys/${leaked.id}/rotate`,
            "x-api-key": admin.key,
            "x-requested-with": "api-keys-manager",
            ...(type === undefined ? {} : { "content-type": type }),
          });
          let answer = 0;
          stream.on("response", (headers) => (answer = Number(headers[":status"])));
          stream.on("data", () => {});
          stream.on("end", () => resolve(answer));
          stream.on("error", reject);
          stream.end('{"grace":"none"}');
        });
        assert.equal(answered, status, String(type));
        // Read: no grace, the old key ends at once. Refused: not rotated.
        const valid = await service.verify(leaked.key).then(() => true, () => false);
        assert.equal(valid, status !== 201, String(type));
      }
    } finally {
      client.close();
      await app.close();
    }
  });
});

describe("createApiKeysAdminController without ApiKeysModule", () => {
  const settings = { logger: false as const, abortOnError: false };
  const options = {
    scopes: ["projects:read"],
    tenantOf: () => "acme",
    canManage: () => true,
    policy: () => null,
    csrf: false as const,
  };

  it("serves through the `service` option alone", async () => {
    const service = new ApiKeysService(moduleOptions());
    const Admin = createApiKeysAdminController({ path: "admin", service, ...options });
    @Module({ controllers: [Admin] })
    class AppModule {}
    const app = await NestFactory.create(AppModule, settings);
    try {
      await app.listen(0, "127.0.0.1");
      const { port } = app.getHttpServer().address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}/admin/keys`);
      assert.equal(response.status, 200);
      assert.deepEqual((await response.json()).keys, []);
    } finally {
      await app.close();
      await service.close();
    }
  });

  it("refuses to boot with neither the option nor the module, saying so", async () => {
    const Admin = createApiKeysAdminController({ path: "admin", ...options });
    @Module({ controllers: [Admin] })
    class AppModule {}
    await assert.rejects(
      NestFactory.create(AppModule, settings),
      new TypeError(
        "createApiKeysAdminController: no ApiKeysService (pass options.service or import ApiKeysModule)",
      ),
    );
  });
});

describe("createApiKeysAdminController behind a session login (settings-page.md's Nest app)", () => {
  /** The app's own login: every request is user u_1 of acme. */
  @Injectable()
  class SessionGuard implements CanActivate {
    canActivate(context: ExecutionContext): boolean {
      context.switchToHttp().getRequest<{ user?: object }>().user = { orgId: "acme" };
      return true;
    }
  }
  const sessionAdmin = (decorators: ClassDecorator[]) =>
    createApiKeysAdminController<AdminHttpRequest & { user?: { orgId: string } }>({
      path: "account/api-keys",
      decorators,
      scopes: ["projects:read"],
      tenantOf: (request) => request.user?.orgId,
      actorOf: () => "user:u_1",
      canManage: () => true,
      policy: () => null,
    });

  for (const platform of PLATFORMS) {
    it(`under a global ApiKeysGuard, SkipApiKey() leaves the routes to the session (${platform})`, async () => {
      // The controller's own "not counted" RateLimit(false) asks nothing of a key.
      const Admin = sessionAdmin([SkipApiKey(), UseGuards(SessionGuard)]);
      const warned = await moduleWarnings(async () => {
        const running = await boot(
          appModule(ApiKeysModule.forRoot(moduleOptions()), [Admin], [
            { provide: APP_GUARD, useExisting: ApiKeysGuard },
          ]),
          platform,
        );
        try {
          const { status, body } = await running.request("/account/api-keys/config");
          assert.equal(status, 200, JSON.stringify(body));
        } finally {
          await running.close();
        }
      });
      assert.deepEqual(warned, []);
    });
  }

  it("without any ApiKeysGuard, logs no start-up warning: its routes ask nothing of a key", async () => {
    const warned = await moduleWarnings(async () => {
      const running = await boot(
        appModule(ApiKeysModule.forRoot(moduleOptions()), [
          sessionAdmin([UseGuards(SessionGuard)]),
        ]),
        "express",
      );
      await running.close();
    });
    assert.deepEqual(warned, []);
  });
});
