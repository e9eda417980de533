/**
 * `applyApiKeysAdminRoutes` documents what the admin routes answer: every
 * answer of the real handler, success or error, validates against the
 * schema documented for its path, method and status.
 */
import "reflect-metadata";
import { describe, it } from "node:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import assert from "node:assert/strict";
import { applyApiKeysAdminRoutes } from "../../../safe_response/openapi/admin_routes.ts";
import { createApiKeysAdminHandler } from "../../../api_keys/admin/handler.ts";
import { makeService } from "../../api_keys/helpers.ts";
import { ApiKeyStorageError, InMemoryApiKeyStorage } from "../../../api_keys/mod.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import {
  bodyValidator,
  documentedResponse,
  type Json,
  pathTemplate,
} from "./openapi_validation.ts";

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
    const handle = createApiKeysAdminHandler<null>({
      service,
      scopes: ["projects:read"],
      tenantOf: () => "t",
      canManage: () => true,
      policy: () => null,
      csrf: false,
    });
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
