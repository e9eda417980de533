/**
 * The admin routes in process: tenant isolation, the scope-granting limit,
 * the public view of records, and body validation (400 with details,
 * nothing written). The other limits of delegated key management
 * (environment, allowlist, expiry) are in `admin_escalation_test.ts`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { DemoServer } from "../../demo/server.ts";
import { call, startTestDemo } from "./_demo.ts";

const PUBLIC_FIELDS = [
  "allowedIpCidrs",
  "createdAt",
  "createdBy",
  "environment",
  "expiresAt",
  "id",
  "lastUsedAt",
  "name",
  "prefix",
  "replacedByKeyId",
  "revokedAt",
  "rotatedAt",
  "scopes",
  "status",
  "tenantId",
];

for (const adapter of ["express", "fastify"] as const) {
  describe(`admin routes (${adapter})`, () => {
    let server: DemoServer;
    let admin: string;

    before(async () => {
      server = await startTestDemo({ adapter });
      admin = server.keys!.admin.key;
    });
    after(() => server?.close());

    /** Ids of the demo tenant's keys, revoked ones included. */
    async function keyIds(): Promise<string[]> {
      const { status, body } = await call(server, "GET", "/admin/keys?includeRevoked=true", admin);
      assert.equal(status, 200);
      return body.data.map((record: { id: string }) => record.id).sort();
    }

    describe("tenant isolation", () => {
      it("lists only the admin key's tenant", async () => {
        const { body } = await call(server, "GET", "/admin/keys", admin);
        const tenants = new Set(body.data.map((record: { tenantId: string }) => record.tenantId));
        assert.deepEqual([...tenants], ["demo"]);
        const ids = await keyIds();
        assert.ok(!ids.includes(server.keys!.otherTenant.id));
        assert.ok(ids.includes(server.keys!.reader.id));
      });

      it("answers 404 for another tenant's key id on read, rotate and revoke", async () => {
        const otherId = server.keys!.otherTenant.id;
        for (
          const [method, path, body] of [
            ["GET", `/admin/keys/${otherId}`, undefined],
            ["POST", `/admin/keys/${otherId}/rotate`, {}],
            ["DELETE", `/admin/keys/${otherId}`, undefined],
          ] as const
        ) {
          const answer = await call(server, method, path, admin, body);
          assert.equal(answer.status, 404, `${method} ${path}`);
          assert.equal(answer.body.error.code, "api_key_record_not_found");
        }
        const unknown = await call(server, "DELETE", "/admin/keys/no-such-id", admin);
        assert.deepEqual(
          unknown.body.error,
          (await call(
            server,
            "DELETE",
            `/admin/keys/${otherId}`,
            admin,
          )).body.error,
          "another tenant's id is indistinguishable from an unknown id",
        );
        // The other tenant's key was neither revoked nor rotated.
        const other = await call(server, "GET", "/api/whoami", server.keys!.otherTenant.key);
        assert.equal(other.status, 200);
        assert.equal(other.body.data.tenantId, "other");
      });
    });

    describe("scope-granting limit", () => {
      it("refuses a scope the admin key lacks, with a clear code, and writes nothing", async () => {
        const before = await keyIds();
        const { status, body } = await call(server, "POST", "/admin/keys", admin, {
          name: "too much",
          scopes: [{ resource: "projects", level: "read" }, { resource: "billing", level: "read" }],
        });
        assert.equal(status, 403);
        assert.equal(body.error.code, "api_key_escalation_refused");
        assert.deepEqual(body.error.details, { key: "new", exceeds: { scopes: ["billing:read"] } });
        assert.deepEqual(await keyIds(), before);
      });

      it("grants scopes the admin key holds, `read` included in a held `write`", async () => {
        const { status, body } = await call(server, "POST", "/admin/keys", admin, {
          name: "reader via write",
          scopes: [{ resource: "projects", level: "read" }, { resource: "keys", level: "write" }],
        });
        assert.equal(status, 201);
        assert.deepEqual(body.data.record.scopes.sort(), ["keys:write", "projects:read"]);
        assert.equal(body.data.record.tenantId, "demo");
      });

      it("refuses to rotate a key with scopes the calling admin key lacks", async () => {
        const created = await call(server, "POST", "/admin/keys", admin, {
          name: "narrow admin",
          scopes: [{ resource: "keys", level: "write" }],
        });
        assert.equal(created.status, 201);
        const narrow = created.body.data.key;
        const rotate = await call(
          server,
          "POST",
          `/admin/keys/${server.keys!.reader.id}/rotate`,
          narrow,
          {},
        );
        assert.equal(rotate.status, 403);
        assert.equal(rotate.body.error.code, "api_key_escalation_refused");
        assert.deepEqual(rotate.body.error.details, {
          key: "target",
          exceeds: { scopes: ["projects:read", "feed:read"] },
        });
        const reader = await call(server, "GET", `/admin/keys/${server.keys!.reader.id}`, admin);
        assert.equal(reader.body.data.status, "active", "the reader key was not rotated");
      });

      it("keeps the admin routes to keys with keys:write", async () => {
        const { status, body } = await call(server, "GET", "/admin/keys", server.keys!.reader.key);
        assert.equal(status, 403);
        assert.equal(body.error.code, "api_key_scope_insufficient");
      });
    });

    describe("public view", () => {
      it("never returns hash or pepperVersion, on create, list, read, rotate or revoke", async () => {
        const created = await call(server, "POST", "/admin/keys", admin, {
          name: "viewed",
          scopes: [{ resource: "feed", level: "read" }],
          allowedIpCidrs: ["10.0.0.0/8"],
        });
        const id = created.body.data.id;
        const answers = [
          created,
          await call(server, "GET", "/admin/keys?includeRevoked=true", admin),
          await call(server, "GET", `/admin/keys/${id}`, admin),
          await call(server, "POST", `/admin/keys/${id}/rotate`, admin, { gracePeriodMs: 1000 }),
          await call(server, "DELETE", `/admin/keys/${id}`, admin),
        ];
        for (const answer of answers) {
          assert.ok(answer.status === 200 || answer.status === 201, answer.text);
          assert.doesNotMatch(answer.text, /"hash"|"pepperVersion"/);
        }
        assert.deepEqual(Object.keys(created.body.data.record).sort(), PUBLIC_FIELDS);
        assert.deepEqual(created.body.data.record.allowedIpCidrs, ["10.0.0.0/8"]);
        assert.equal(answers[4].body.data.status, "revoked");
      });
    });

    describe("validation", () => {
      const invalidBodies: [string, unknown, RegExp][] = [
        ["no body fields", {}, /name/],
        ["empty scopes", { name: "x", scopes: [] }, /scopes/],
        [
          "a bad scope",
          { name: "x", scopes: [{ resource: "Projects!", level: "admin" }] },
          /scopes\.0\.(resource|level)/,
        ],
        [
          "a tenant in the body",
          { name: "x", scopes: [{ resource: "feed", level: "read" }], tenantId: "other" },
          /tenantId should not exist/,
        ],
        [
          "a bad environment",
          { name: "x", scopes: [{ resource: "feed", level: "read" }], environment: "prod" },
          /environment/,
        ],
        [
          "a date that is not ISO 8601",
          { name: "x", scopes: [{ resource: "feed", level: "read" }], expiresAt: "tomorrow" },
          /expiresAt/,
        ],
      ];

      for (const [label, body, detail] of invalidBodies) {
        it(`answers 400 with details for ${label}, and writes nothing`, async () => {
          const before = await keyIds();
          const answer = await call(server, "POST", "/admin/keys", admin, body);
          assert.equal(answer.status, 400);
          assert.equal(answer.body.success, false);
          assert.equal(answer.body.error.code, "BAD_REQUEST");
          assert.ok(Array.isArray(answer.body.error.details), answer.text);
          assert.ok(
            answer.body.error.details.some((line: string) => detail.test(line)),
            answer.text,
          );
          assert.deepEqual(await keyIds(), before);
        });
      }

      it("answers 400 api_key_invalid_input for a bad CIDR or a past expiry, writing nothing", async () => {
        const before = await keyIds();
        for (
          const extra of [
            { allowedIpCidrs: ["not-an-address"] },
            { expiresAt: "2000-01-01T00:00:00Z" },
          ]
        ) {
          const answer = await call(server, "POST", "/admin/keys", admin, {
            name: "x",
            scopes: [{ resource: "feed", level: "read" }],
            ...extra,
          });
          assert.equal(answer.status, 400, answer.text);
          assert.equal(answer.body.error.code, "api_key_invalid_input");
        }
        assert.deepEqual(await keyIds(), before);
      });

      it("validates the rotate body too", async () => {
        const answer = await call(
          server,
          "POST",
          `/admin/keys/${server.keys!.test.id}/rotate`,
          admin,
          { gracePeriodMs: -5 },
        );
        assert.equal(answer.status, 400);
        assert.ok(answer.body.error.details.some((line: string) => /gracePeriodMs/.test(line)));
        const test = await call(server, "GET", `/admin/keys/${server.keys!.test.id}`, admin);
        assert.equal(test.body.data.status, "active");
      });
    });
  });
}
