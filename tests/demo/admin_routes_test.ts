/**
 * The demo's admin routes are the library's (`./api-keys/admin`) at `/admin`,
 * behind the key check (scope `keys:write`): tenant isolation, the public
 * view, the no-escalation default over the admin key, usage recorded, on
 * Express and Fastify. The routes' own rules are tested in tests/api_keys/admin/.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeysService } from "../../api_keys/mod.ts";
import type { DemoServer } from "../../demo/server.ts";
import { call, startTestDemo } from "./_demo.ts";

for (const adapter of ["express", "fastify"] as const) {
  describe(`demo admin routes (${adapter})`, () => {
    let server: DemoServer;
    let admin: string;

    before(async () => {
      server = await startTestDemo({ adapter });
      admin = server.keys!.admin.key;
    });
    after(() => server?.close());

    it("lists the admin key's tenant only, without secrets", async () => {
      const { status, body, text } = await call(server, "GET", "/admin/keys", admin);
      assert.equal(status, 200);
      const ids = body.keys.map((key: { id: string }) => key.id);
      assert.ok(ids.includes(server.keys!.reader.id));
      assert.ok(!ids.includes(server.keys!.otherTenant.id));
      assert.ok(!text.includes("pepperVersion") && !text.includes(server.keys!.reader.key));
      assert.deepEqual(body.capabilities, { rename: true, conditionalRename: true, usage: true });
    });

    it("records usage: a request shows in lastUsedAt and the usage route within the 2 s flush", async () => {
      const { id, key } = server.keys!.test;
      assert.equal((await call(server, "GET", "/api/projects/prj_001", key)).status, 200);
      const deadline = Date.now() + 10_000;
      let accepted = 0;
      while (accepted === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const usage = await call(server, "GET", `/admin/keys/${id}/usage`, admin);
        assert.equal(usage.status, 200);
        accepted = usage.body.buckets.reduce(
          (sum: number, b: { accepted: number }) => sum + b.accepted,
          0,
        );
      }
      assert.equal(accepted, 1);
      const read = await call(server, "GET", `/admin/keys/${id}`, admin);
      assert.notEqual(read.body.lastUsedAt, null);
    });

    it("another tenant's key id is 404 on read, rename, rotate and revoke", async () => {
      const id = server.keys!.otherTenant.id;
      for (
        const [method, path, body] of [
          ["GET", `/admin/keys/${id}`, undefined],
          ["PATCH", `/admin/keys/${id}`, { name: "x" }],
          ["POST", `/admin/keys/${id}/rotate`, {}],
          ["DELETE", `/admin/keys/${id}`, undefined],
        ] as const
      ) {
        const answer = await call(server, method, path, admin, body);
        assert.equal(answer.status, 404, `${method} ${path}`);
        assert.equal(answer.body.error.code, "api_key_record_not_found");
      }
    });

    it("creates within the admin key's powers; refuses a scope it lacks", async () => {
      const created = await call(server, "POST", "/admin/keys", admin, {
        name: "ci",
        scopes: ["projects:read"],
        environment: "test",
      });
      assert.equal(created.status, 201, created.text);
      const used = await call(server, "GET", "/api/projects", created.body.key);
      assert.equal(used.status, 200);
      const refused = await call(server, "POST", "/admin/keys", admin, {
        name: "too much",
        scopes: ["billing:read"],
      });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, "api_key_escalation_refused");
      assert.deepEqual(refused.body.error.details.exceeds, { scopes: ["billing:read"] });
    });

    it("a test key with keys:write cannot act on live keys", async () => {
      const testAdmin = await server.app.get(ApiKeysService).create({
        tenantId: server.keys!.tenantId,
        name: "test admin",
        environment: "test",
        scopes: [{ resource: "keys", level: "write" }, { resource: "projects", level: "write" }],
      });
      const revoke = await call(
        server,
        "DELETE",
        `/admin/keys/${server.keys!.reader.id}`,
        testAdmin.key,
      );
      assert.equal(revoke.status, 403);
      assert.equal(revoke.body.error.details.key, "target");
    });

    it("the reader key (no keys:write) is refused by the key check", async () => {
      const answer = await call(server, "GET", "/admin/keys", server.keys!.reader.key);
      assert.equal(answer.status, 403);
      assert.equal(answer.body.error.code, "api_key_scope_insufficient");
    });
  });
}
