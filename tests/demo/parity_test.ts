/**
 * The demo's parity features and OpenAPI document in process, on both HTTP
 * platforms: field selection on the projects list, the error catalog on the
 * archive route, `meta.apiVersion` from the `version` option, and
 * `/openapi.json` (valid OpenAPI 3) with the deprecated route and the global
 * errors in the format of the server's mode.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import SwaggerParser from "@apidevtools/swagger-parser";
import { DemoErrors } from "../../demo/errors.ts";
import { DEMO_API_VERSION, DEMO_GLOBAL_ERRORS } from "../../demo/safe_response_options.ts";
import type { DemoServer } from "../../demo/server.ts";
import { call, startTestDemo } from "./_demo.ts";

const GLOBAL_STATUSES = [
  ...new Set(DEMO_GLOBAL_ERRORS.map((error) =>
    String(
      typeof error === "number" ? error : error.status,
    )
  )),
];

for (const adapter of ["express", "fastify"] as const) {
  describe(`demo parity features (${adapter})`, () => {
    let server: DemoServer;
    let problem: DemoServer;

    before(async () => {
      server = await startTestDemo({ adapter });
      problem = await startTestDemo({ adapter, problemDetails: true });
    });
    after(async () => {
      await server?.close();
      await problem?.close();
    });

    it("trims each project to ?fields and lists them in meta.fields", async () => {
      const path = "/api/projects?limit=4&sort=name&fields=name,id";
      const { status, body } = await call(server, "GET", path, server.keys!.reader.key);
      assert.equal(status, 200);
      assert.equal(body.data.length, 4);
      for (const item of body.data) assert.deepEqual(Object.keys(item).sort(), ["id", "name"]);
      assert.deepEqual([...body.meta.fields].sort(), ["id", "name"]);
      assert.equal(body.meta.pagination.limit, 4);
    });

    it("answers without field selection when ?fields is absent", async () => {
      const { body } = await call(server, "GET", "/api/projects?limit=1", server.keys!.reader.key);
      assert.deepEqual(Object.keys(body.data[0]).sort(), ["createdAt", "id", "name", "status"]);
      assert.equal(body.meta.fields, undefined);
    });

    it("answers catalog errors with the key, status and catalog message", async () => {
      const admin = server.keys!.admin.key;
      const archived = await call(server, "POST", "/api/projects/prj_003/archive", admin);
      const definition = DemoErrors.get("PROJECT_ALREADY_ARCHIVED")!;
      assert.equal(archived.status, definition.status);
      assert.equal(archived.body.error.code, "PROJECT_ALREADY_ARCHIVED");
      assert.equal(archived.body.error.message, definition.message);
      assert.deepEqual(archived.body.error.details, { id: "prj_003" });
      const missing = await call(server, "POST", "/api/projects/prj_999/archive", admin);
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error.code, "PROJECT_NOT_FOUND");
    });

    it("archives an active project once, then refuses", async () => {
      const admin = server.keys!.admin.key;
      const first = await call(server, "POST", "/api/projects/prj_002/archive", admin);
      assert.equal(first.status, 200);
      assert.equal(first.body.data.status, "archived");
      const second = await call(server, "POST", "/api/projects/prj_002/archive", admin);
      assert.equal(second.status, 409);
    });

    it("puts meta.apiVersion on successes and errors", async () => {
      const ok = await call(server, "GET", "/api/whoami", server.keys!.reader.key);
      assert.equal(ok.body.meta.apiVersion, DEMO_API_VERSION);
      const refused = await call(server, "GET", "/api/whoami");
      assert.equal(refused.status, 401);
      assert.equal(refused.body.meta.apiVersion, DEMO_API_VERSION);
    });

    it("documents the deprecated route and the global errors as error envelopes", async () => {
      const { body } = await call(server, "GET", "/openapi.json");
      await SwaggerParser.validate(structuredClone(body));
      assert.equal(body.paths["/api/v0/projects"].get.deprecated, true);
      assert.equal(body.paths["/api/projects"].get.deprecated, undefined);
      for (
        const [path, item] of Object.entries<Record<string, { responses: object }>>(body.paths)
      ) {
        for (const [method, operation] of Object.entries(item)) {
          const statuses = Object.keys(operation.responses);
          for (const want of GLOBAL_STATUSES) {
            assert.ok(statuses.includes(want), `${method} ${path} lacks ${want}`);
          }
        }
      }
      // The admin routes document their own 401 (applyApiKeysAdminRoutes); an API route the guard's.
      const unauthorized = body.paths["/api/projects"].get.responses["401"].content;
      assert.deepEqual(Object.keys(unauthorized), ["application/json"]);
      assert.deepEqual(Object.keys(unauthorized["application/json"].examples).sort(), [
        "api_key_invalid",
        "api_key_missing",
      ]);
    });

    it("documents the global errors as problem details in problem-details mode", async () => {
      const { body } = await call(problem, "GET", "/openapi.json");
      await SwaggerParser.validate(structuredClone(body));
      const responses = body.paths["/api/feed"].get.responses;
      assert.deepEqual(Object.keys(responses["429"].content), ["application/problem+json"]);
      assert.ok(body.components.schemas.SafeProblemDetails !== undefined);
    });
  });
}
