/**
 * `applyApiKeysAdminRoutes` documents what the admin routes answer: every
 * answer of the real handler, success or error, validates against the
 * schema documented for its path, method and status.
 */
import "reflect-metadata";
import { describe, it } from "node:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import assert from "node:assert/strict";
import { Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { ApiSecurity, ApiTags, DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import { applyApiKeysAdminRoutes } from "../../../safe_response/openapi/admin_routes.ts";
import { applyGlobalErrors } from "../../../safe_response/openapi/safe_response.document.ts";
import { SafeResponseModule } from "../../../safe_response/nest/mod.ts";
import type { SafeResponseModuleOptions } from "../../../safe_response/options.ts";
import { ApiKeysModule } from "../../../api_keys/nest/mod.ts";
import { createApiKeysAdminController } from "../../../api_keys/nest/api_keys.admin.ts";
import { createApiKeysAdminHandler } from "../../../api_keys/admin/handler.ts";
import { makeService } from "../../api_keys/helpers.ts";
import {
  type ApiKeysService,
  ApiKeyStorageError,
  InMemoryApiKeyStorage,
} from "../../../api_keys/mod.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import {
  bodyValidator,
  documentedResponse,
  type Json,
  pathTemplate,
} from "./openapi_validation.ts";

/** The admin handler of tenant `t`, offering `projects:read` (the CSRF check on unless `false`). */
function adminHandler(service: ApiKeysService, options: { csrf?: false } = {}) {
  return createApiKeysAdminHandler<null>({
    service,
    scopes: ["projects:read"],
    tenantOf: () => "t",
    canManage: () => true,
    policy: () => null,
    ...options,
  });
}

describe("applyApiKeysAdminRoutes", () => {
  it("documents every route; every answer validates against its documented schema", async () => {
    const document: Json = applyApiKeysAdminRoutes({ paths: {} }, { prefix: "/admin" });
    assert.deepEqual(Object.keys(document.paths), [
      "/admin/config",
      "/admin/keys",
      "/admin/keys/{id}",
      "/admin/keys/{id}/rotate",
      "/admin/keys/{id}/usage",
      "/admin/usage",
      "/admin/audit",
    ]);
    const names = (path: string) =>
      document.paths[path].get.parameters.map((parameter: { name: string }) => parameter.name);
    assert.deepEqual(names("/admin/keys"), [
      "limit",
      "cursor",
      "q",
      "status",
      "environment",
      "sort",
    ]);
    assert.deepEqual(names("/admin/usage"), ["keys", "granularity", "from", "to"]);
    assert.deepEqual(names("/admin/keys/{id}/usage"), ["id", "granularity", "from", "to"]);
    assert.deepEqual(names("/admin/audit"), [
      "keyId",
      "actor",
      "action",
      "from",
      "to",
      "cursor",
      "limit",
    ]);
    const { service } = makeService({ limiter: createRateLimiter({ logger: () => {} }) });
    const reader = await service.create({
      tenantId: "t",
      name: "r",
      scopes: [{ resource: "projects", level: "read" }],
    });
    await service.create({
      tenantId: "t",
      name: "trial",
      scopes: [{ resource: "projects", level: "read" }],
      credits: { remaining: 5, refill: { amount: 5, interval: "daily" } },
    });
    const handle = adminHandler(service, { csrf: false });
    const validate = bodyValidator(document);
    const calls: [string, string, unknown][] = [
      ["GET", "/config", undefined],
      ["GET", "/keys", undefined],
      ["POST", "/keys", { name: "n", scopes: ["projects:read"] }],
      ["POST", "/keys", { name: "n", scopes: ["nope:read"] }],
      ["GET", `/keys/${reader.id}`, undefined],
      ["PATCH", `/keys/${reader.id}`, { name: "m" }],
      ["PATCH", `/keys/${reader.id}`, { name: "m2", expectedName: "m" }],
      ["PATCH", `/keys/${reader.id}`, { name: "m3", expectedName: "m" }],
      ["POST", `/keys/${reader.id}/rotate`, { grace: "1h" }],
      ["POST", `/keys/${reader.id}/rotate`, {}],
      ["DELETE", `/keys/${reader.id}`, undefined],
      ["DELETE", "/keys/missing", undefined],
      ["GET", `/keys/${reader.id}/usage`, undefined],
      ["GET", "/usage", undefined],
    ];
    const statuses = new Set<number>();
    for (const [method, path, body] of calls) {
      const answer = (await handle({
        method,
        path,
        query: () => null,
        headers: () => null,
        body: body === undefined ? null : JSON.stringify(body),
      }, null))!;
      statuses.add(answer.status);
      const documented = documentedResponse(
        document,
        pathTemplate(document, `/admin${path}`),
        method,
        answer.status,
      );
      assert.ok(documented, `${method} ${path} ${answer.status} is documented`);
      const schema = documented.content["application/json"].schema;
      assert.deepEqual(validate(schema, JSON.parse(answer.body)), [], `${method} ${path}`);
      if (method === "GET" && path === "/keys") {
        const view = document.components.schemas.ApiKeysAdminKeyView.properties;
        for (const key of JSON.parse(answer.body).keys) {
          for (const field of Object.keys(key)) assert.ok(field in view, `${field} is documented`);
        }
      }
    }
    assert.deepEqual([...statuses].sort(), [200, 201, 400, 404, 409, 501]);
  });

  it("documents 401, 500 and 503 on every route, and GET /audit with its page", async () => {
    const document: Json = applyApiKeysAdminRoutes({ paths: {} }, { prefix: "/admin" });
    const validate = bodyValidator(document);
    for (const [path, item] of Object.entries<Json>(document.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        for (const status of ["401", "403", "500", "503"]) {
          assert.ok(operation.responses[status], `${method} ${path} documents ${status}`);
        }
      }
    }
    const { service } = makeService({ audit: { checkpointKey: "k".repeat(40) } });
    const key = await service.create({
      tenantId: "t",
      name: "r",
      scopes: [{ resource: "projects", level: "read" }],
    });
    await service.revokeForTenant("t", key.id, { actor: "alice" });
    const options = {
      service,
      scopes: ["projects:read"],
      tenantOf: () => "t",
      canManage: () => true,
      policy: () => null,
      csrf: false as const,
      onError: () => {},
    };
    const storage = new InMemoryApiKeyStorage();
    const down = new Proxy(storage, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (/^(find|list)/.test(String(property))) throw new ApiKeyStorageError("down");
          return value.apply(target, args);
        };
      },
    });
    const handlers = {
      ok: createApiKeysAdminHandler<null>(options),
      anonymous: createApiKeysAdminHandler<null>({ ...options, tenantOf: () => null }),
      broken: createApiKeysAdminHandler<null>({
        ...options,
        canManage: () => {
          throw new Error("hook");
        },
      }),
      down: createApiKeysAdminHandler<null>({
        ...options,
        service: makeService({ storage: down as never }).service,
      }),
    };
    const calls: [keyof typeof handlers, string, string, Record<string, string>, number][] = [
      ["anonymous", "GET", "/config", {}, 401],
      ["anonymous", "GET", "/keys", {}, 401],
      ["anonymous", "GET", `/keys/${key.id}`, {}, 401],
      ["anonymous", "GET", "/audit", {}, 401],
      ["broken", "GET", "/keys", {}, 500],
      ["down", "GET", `/keys/${key.id}`, {}, 503],
      ["ok", "GET", "/audit", {}, 200],
      ["ok", "GET", "/audit", { keyId: key.id, action: "key.revoked", limit: "1" }, 200],
      ["ok", "GET", "/audit", { limit: "0" }, 400],
    ];
    for (const [handler, method, path, query, status] of calls) {
      const answer = (await handlers[handler]({
        method,
        path,
        query: (name) => query[name] ?? null,
        headers: () => null,
        body: null,
      }, null))!;
      assert.equal(answer.status, status, `${handler} ${method} ${path}: ${answer.body}`);
      const documented = documentedResponse(
        document,
        pathTemplate(document, `/admin${path}`),
        method,
        answer.status,
      );
      assert.ok(documented, `${method} ${path} ${answer.status} is documented`);
      const body = JSON.parse(answer.body);
      const schema = documented.content["application/json"].schema;
      assert.deepEqual(validate(schema, body), [], `${method} ${path} ${answer.status}`);
      if (path === "/audit" && status === 200) {
        assert.ok(body.records.length > 0);
        const fields = document.components.schemas.ApiKeysAdminAuditRecord.properties;
        for (const record of body.records) {
          for (const field of Object.keys(record)) {
            assert.ok(field in fields, `${field} documented`);
          }
          assert.notDeepEqual(
            validate(schema, { ...body, records: [{ ...record, seq: "1" }] }),
            [],
          );
        }
      }
    }
  });

  it("is a valid OpenAPI 3.0 document", async () => {
    const document = applyApiKeysAdminRoutes(
      { openapi: "3.0.3", info: { title: "t", version: "1" }, paths: {} } as never,
      { prefix: "/api-keys", security: [{ session: [] }] },
    );
    (document as Json).components.securitySchemes = {
      session: { type: "apiKey", in: "cookie", name: "session" },
    };
    await SwaggerParser.validate(structuredClone(document) as never);
  });

  it("applying twice changes nothing; a bad prefix throws", () => {
    const once = applyApiKeysAdminRoutes({}, { prefix: "/a", tags: ["keys"] });
    const twice = applyApiKeysAdminRoutes(structuredClone(once), { prefix: "/a", tags: ["keys"] });
    assert.deepEqual(twice, once);
    for (const prefix of ["a", "/a/", ""]) {
      assert.throws(() => applyApiKeysAdminRoutes({}, { prefix }), TypeError);
    }
  });
});

/** Options of an app whose guard errors are global (problem details or not). */
function appOptions(
  problem: boolean,
  globalErrors: number[] = [401, 403, 429, 500],
): SafeResponseModuleOptions {
  return {
    requestId: true,
    problemDetails: problem ? { baseUrl: "https://errors.example.com" } : false,
    swagger: { globalErrors },
  };
}

/** Builds `count` documents of a Nest app serving the admin routes under `/admin`. */
async function nestDocuments(
  problem: boolean,
  decorators: ClassDecorator[],
  count: number,
  globalErrors?: number[],
): Promise<Json[]> {
  const Admin = createApiKeysAdminController({
    path: "admin",
    decorators,
    scopes: ["projects:read"],
    tenantOf: () => "t",
    canManage: () => true,
    policy: () => null,
  });
  @Module({
    imports: [
      SafeResponseModule.register(appOptions(problem, globalErrors)),
      ApiKeysModule.forRoot({
        peppers: { 1: "a-pepper-of-at-least-thirty-two-bytes!!" },
        storage: new InMemoryApiKeyStorage(),
      }),
    ],
    controllers: [Admin],
  })
  class AdminModule {}
  const app = await NestFactory.create(AdminModule, { logger: false });
  try {
    await app.init();
    const config = new DocumentBuilder().setTitle("t").setVersion("1")
      .addApiKey({ type: "apiKey", in: "header", name: "X-API-Key" }, "api-key").build();
    return Array.from({ length: count }, () => SwaggerModule.createDocument(app, config));
  } finally {
    await app.close();
  }
}

/** What each admin operation documents: security, tags, parameters, statuses, media types, headers. */
function outline(document: Json): Json {
  const operations: Record<string, Json> = {};
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      operations[`${method} ${path}`] = {
        security: operation.security,
        tags: operation.tags,
        parameters: operation.parameters?.map((p: Json) => `${p.in}:${p.name}`),
        responses: Object.fromEntries(
          Object.entries<Json>(operation.responses).map(([status, response]) => [status, {
            media: Object.keys(response.content ?? {}).sort(),
            headers: Object.keys(response.headers ?? {}).sort(),
          }]),
        ),
      };
    }
  }
  return operations;
}

describe("applyApiKeysAdminRoutes on a Nest document", () => {
  for (const problem of [false, true]) {
    it(`keeps the controller's security, tags and the global errors, in either order (problem details: ${problem})`, async () => {
      const [first, second] = await nestDocuments(problem, [
        ApiTags("admin"),
        ApiSecurity("api-key"),
      ], 2);
      const admin = { prefix: "/admin", problemDetails: appOptions(problem).problemDetails };
      const globalFirst = applyApiKeysAdminRoutes(
        applyGlobalErrors(first, appOptions(problem)),
        admin,
      );
      const adminFirst = applyGlobalErrors(
        applyApiKeysAdminRoutes(second, admin),
        appOptions(problem),
      );
      assert.deepEqual(outline(globalFirst), outline(adminFirst));
      const media = problem
        ? ["application/json", "application/problem+json"]
        : ["application/json"];
      for (const [name, operation] of Object.entries<Json>(outline(globalFirst))) {
        assert.deepEqual(operation.security, [{ "api-key": [] }], name);
        assert.deepEqual(operation.tags, ["admin"], name);
        for (const status of ["401", "403", "429", "500", "503"]) {
          assert.ok(operation.responses[status], `${name} documents ${status}`);
          assert.ok(operation.responses[status].headers.includes("X-Request-Id"), name);
        }
        for (const status of ["401", "403"]) {
          assert.deepEqual(operation.responses[status].media, media, `${name} ${status}`);
        }
      }
      for (const document of [globalFirst, adminFirst]) {
        await SwaggerParser.validate(structuredClone(document));
      }
    });
  }

  for (const problem of [false, true]) {
    it(`gives the same document in either order with the app's problemDetails (problem details: ${problem})`, async () => {
      for (const globalErrors of [[401, 403, 429, 500], [429], []]) {
        const app = appOptions(problem, globalErrors);
        const [first, second] = await nestDocuments(problem, [], 2, globalErrors);
        const admin = { prefix: "/admin", problemDetails: app.problemDetails };
        const globalFirst = applyApiKeysAdminRoutes(applyGlobalErrors(first, app), admin);
        const adminFirst = applyGlobalErrors(applyApiKeysAdminRoutes(second, admin), app);
        assert.deepEqual(globalFirst, adminFirst, `global errors ${globalErrors}`);
        const media = problem
          ? ["application/json", "application/problem+json"]
          : ["application/json"];
        for (const [name, operation] of Object.entries<Json>(outline(globalFirst))) {
          assert.ok(
            operation.responses["401"].headers.includes("WWW-Authenticate"),
            `${name} 401 (global errors ${globalErrors})`,
          );
          for (const status of ["401", "403", "500", "503"]) {
            assert.deepEqual(operation.responses[status].media, media, `${name} ${status}`);
          }
        }
        await SwaggerParser.validate(structuredClone(globalFirst));
      }
    });
  }

  it("documents WWW-Authenticate on the 401 and problem details when told, alone", () => {
    const options = { prefix: "/a", problemDetails: true };
    const document: Json = applyApiKeysAdminRoutes({}, options);
    const unauthenticated = document.paths["/a/keys"].get.responses["401"];
    assert.ok(unauthenticated.headers?.["WWW-Authenticate"]);
    assert.deepEqual(Object.keys(unauthenticated.content), [
      "application/json",
      "application/problem+json",
    ]);
    assert.ok(document.components.schemas.SafeProblemDetails);
    const plain: Json = applyApiKeysAdminRoutes({}, { prefix: "/a" });
    assert.deepEqual(Object.keys(plain.paths["/a/keys"].get.responses["401"].content), [
      "application/json",
    ]);
  });

  it("keeps the operation's tags and security, unless given", async () => {
    const [bare, tagged] = await nestDocuments(false, [], 2);
    // Nest tags a controller's operations with its name (`autoTagControllers`).
    const nestTags = bare.paths["/admin/keys"].get.tags;
    assert.equal(nestTags.length, 1);
    const plain = applyApiKeysAdminRoutes(bare, { prefix: "/admin" });
    const given = applyApiKeysAdminRoutes(tagged, {
      prefix: "/admin",
      tags: ["keys"],
      security: [{ "api-key": [] }],
    });
    for (const operation of Object.values<Json>(outline(plain))) {
      assert.deepEqual(operation.tags, nestTags);
      assert.equal(operation.security, undefined);
    }
    for (const operation of Object.values<Json>(outline(given))) {
      assert.deepEqual(operation.tags, ["keys"]);
      assert.deepEqual(operation.security, [{ "api-key": [] }]);
    }
    const again = applyApiKeysAdminRoutes(structuredClone(given), { prefix: "/admin" });
    assert.deepEqual(again, given);
  });

  it("documents the CSRF header the handler requires on POST, PATCH and DELETE", async () => {
    const [nest] = await nestDocuments(false, [], 1);
    const document: Json = applyApiKeysAdminRoutes(nest, { prefix: "/admin" });
    await SwaggerParser.validate(structuredClone(document));
    const writes = ["post /admin/keys", "patch /admin/keys/{id}", "delete /admin/keys/{id}"];
    writes.push("post /admin/keys/{id}/rotate");
    for (const [path, item] of Object.entries<Json>(document.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        const csrf = (operation.parameters ?? []).filter((p: Json) => p.in === "header");
        if (!writes.includes(`${method} ${path}`)) {
          assert.deepEqual(csrf, [], `${method} ${path}`);
          continue;
        }
        assert.equal(csrf.length, 1, `${method} ${path}`);
        assert.equal(csrf[0].name.toLowerCase(), "x-requested-with");
        assert.equal(csrf[0].required, true);
        assert.deepEqual(csrf[0].schema, { type: "string", enum: ["api-keys-manager"] });
        assert.match(operation.responses["403"].description, /csrf_refused/);
      }
    }
    // A request built from the document alone passes the handler's CSRF check (default options).
    const { service } = makeService();
    const handle = adminHandler(service);
    const [parameter] = document.paths["/admin/keys"].post.parameters
      .filter((p: Json) => p.in === "header");
    const headers: Record<string, string> = {
      [parameter.name.toLowerCase()]: parameter.schema.enum[0],
      "content-type": "application/json",
    };
    const answer = (await handle({
      method: "POST",
      path: "/keys",
      query: () => null,
      headers: (name) => headers[name.toLowerCase()] ?? null,
      body: JSON.stringify({ name: "n", scopes: ["projects:read"] }),
    }, null))!;
    assert.equal(answer.status, 201, answer.body);
  });

  it("follows the csrf option: another header, or none with false; a bad one throws", () => {
    const named: Json = applyApiKeysAdminRoutes({}, {
      prefix: "/a",
      csrf: { header: "X-Csrf", value: "v" },
    });
    const [parameter] = named.paths["/a/keys"].post.parameters;
    assert.deepEqual(
      [parameter.name.toLowerCase(), parameter.in, parameter.schema.enum],
      ["x-csrf", "header", ["v"]],
    );
    const off: Json = applyApiKeysAdminRoutes({}, { prefix: "/a", csrf: false });
    assert.equal(off.paths["/a/keys"].post.parameters, undefined);
    assert.doesNotMatch(off.paths["/a/keys"].post.responses["403"].description, /csrf/);
    for (const header of ["bad header", "Content-Type", "Sec-Fetch-Site"]) {
      assert.throws(
        () => applyApiKeysAdminRoutes({}, { prefix: "/a", csrf: { header } }),
        TypeError,
        header,
      );
    }
  });
});
