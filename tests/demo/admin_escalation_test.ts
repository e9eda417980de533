/**
 * The admin routes over real HTTP on Express and Fastify: a key may create,
 * rotate or revoke only keys no more powerful than itself (environment,
 * scopes, IP allowlist, expiry), and a refused request writes nothing. See
 * docs/security.md, "Delegated key management (no escalation)".
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { DemoServer } from "../../demo/server.ts";
import { type Answer, call, startTestDemo } from "./_demo.ts";

const CODE = "api_key_escalation_refused";
const MINUTE = 60_000;

/** A scope of a request body. */
type BodyScope = { resource: string; level: "read" | "write" };

const KEYS_WRITE: BodyScope = { resource: "keys", level: "write" };
const PROJECTS_READ: BodyScope = { resource: "projects", level: "read" };
const FEED_READ: BodyScope = { resource: "feed", level: "read" };

const inMinutes = (minutes: number): string =>
  new Date(Date.now() + minutes * MINUTE).toISOString();

for (const adapter of ["express", "fastify"] as const) {
  describe(`admin routes refuse escalation (${adapter})`, () => {
    let server: DemoServer;
    let root: string;

    before(async () => {
      server = await startTestDemo({ adapter });
      root = server.keys!.admin.key;
    });
    after(() => server?.close());

    /** Creates a key with the seeded (live, unrestricted, never expiring) admin key. */
    async function issue(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
      const answer = await call(server, "POST", "/admin/keys", root, body);
      assert.equal(answer.status, 201, answer.text);
      return { id: answer.body.data.id, key: answer.body.data.key };
    }

    /** Ids of the tenant's keys, revoked ones included. */
    async function keyIds(): Promise<string[]> {
      const answer = await call(server, "GET", "/admin/keys?includeRevoked=true", root);
      assert.equal(answer.status, 200, answer.text);
      return answer.body.data.map((record: { id: string }) => record.id).sort();
    }

    async function status(id: string): Promise<string> {
      return (await call(server, "GET", `/admin/keys/${id}`, root)).body.data.status;
    }

    function assertRefused(answer: Answer, key: "new" | "target", exceeds: object): void {
      assert.equal(answer.status, 403, answer.text);
      assert.equal(answer.body.error.code, CODE, answer.text);
      assert.equal(answer.body.error.details.key, key, answer.text);
      assert.deepEqual(answer.body.error.details.exceeds, exceeds, answer.text);
    }

    describe("environment", () => {
      it("a test key with keys:write cannot mint live keys, explicit or by default", async () => {
        const testAdmin = await issue({
          name: "test admin",
          environment: "test",
          scopes: [KEYS_WRITE, PROJECTS_READ],
        });
        const before = await keyIds();
        for (const environment of ["live", undefined]) {
          const answer = await call(server, "POST", "/admin/keys", testAdmin.key, {
            name: "live from test",
            scopes: [PROJECTS_READ],
            environment,
          });
          assertRefused(answer, "new", { environment: ["live"] });
        }
        assert.deepEqual(await keyIds(), before, "nothing written");
        const test = await call(server, "POST", "/admin/keys", testAdmin.key, {
          name: "test from test",
          scopes: [PROJECTS_READ],
          environment: "test",
        });
        assert.equal(test.status, 201, test.text);
        assert.equal(test.body.data.record.environment, "test");
      });

      it("a test key cannot rotate or revoke a live key; a live key may mint test keys", async () => {
        const testAdmin = await issue({
          name: "test admin",
          environment: "test",
          scopes: [KEYS_WRITE, PROJECTS_READ],
        });
        const live = await issue({ name: "live target", scopes: [PROJECTS_READ] });
        assertRefused(
          await call(server, "POST", `/admin/keys/${live.id}/rotate`, testAdmin.key, {}),
          "target",
          { environment: ["live"] },
        );
        assertRefused(
          await call(server, "DELETE", `/admin/keys/${live.id}`, testAdmin.key),
          "target",
          { environment: ["live"] },
        );
        assert.equal(await status(live.id), "active");
      });
    });

    describe("IP allowlist", () => {
      // The tests connect from 127.0.0.1, so a key pinned there works.
      let pinned: string;
      before(async () => {
        pinned = (await issue({
          name: "pinned admin",
          scopes: [KEYS_WRITE, PROJECTS_READ],
          allowedIpCidrs: ["127.0.0.1"],
        })).key;
      });

      it("an IP-pinned admin key cannot mint a key without an allowlist or with a wider one", async () => {
        const before = await keyIds();
        assertRefused(
          await call(server, "POST", "/admin/keys", pinned, {
            name: "open",
            scopes: [PROJECTS_READ],
          }),
          "new",
          { allowedIpCidrs: ["0.0.0.0/0", "::/0"] },
        );
        assertRefused(
          await call(server, "POST", "/admin/keys", pinned, {
            name: "wider",
            scopes: [PROJECTS_READ],
            allowedIpCidrs: ["127.0.0.1", "127.0.0.0/8", "::1"],
          }),
          "new",
          { allowedIpCidrs: ["127.0.0.0/8", "::1/128"] },
        );
        assert.deepEqual(await keyIds(), before, "nothing written");
        const same = await call(server, "POST", "/admin/keys", pinned, {
          name: "as narrow",
          scopes: [PROJECTS_READ],
          allowedIpCidrs: ["::ffff:127.0.0.1"],
        });
        assert.equal(same.status, 201, same.text);
        assert.deepEqual(same.body.data.record.allowedIpCidrs, ["127.0.0.1/32"]);
      });

      it("an IP-pinned admin key cannot strip another key's allowlist on rotate", async () => {
        const target = await issue({
          name: "pinned target",
          scopes: [PROJECTS_READ],
          allowedIpCidrs: ["127.0.0.1"],
        });
        const before = await keyIds();
        assertRefused(
          await call(server, "POST", `/admin/keys/${target.id}/rotate`, pinned, {
            allowedIpCidrs: [],
          }),
          "new",
          { allowedIpCidrs: ["0.0.0.0/0", "::/0"] },
        );
        assert.deepEqual(await keyIds(), before, "nothing written");
        assert.equal(await status(target.id), "active", "the target was not rotated");
        const kept = await call(server, "POST", `/admin/keys/${target.id}/rotate`, pinned, {});
        assert.equal(kept.status, 201, kept.text);
        assert.deepEqual(kept.body.data.record.allowedIpCidrs, ["127.0.0.1/32"]);
      });

      it("an IP-pinned admin key cannot rotate or revoke a key usable from anywhere", async () => {
        const open = await issue({ name: "open target", scopes: [PROJECTS_READ] });
        for (
          const [method, path, body] of [
            ["POST", `/admin/keys/${open.id}/rotate`, { allowedIpCidrs: ["127.0.0.1"] }],
            ["DELETE", `/admin/keys/${open.id}`, undefined],
          ] as const
        ) {
          assertRefused(await call(server, method, path, pinned, body), "target", {
            allowedIpCidrs: ["0.0.0.0/0", "::/0"],
          });
        }
        assert.equal(await status(open.id), "active");
      });
    });

    describe("expiry", () => {
      let shortLived: string;
      let adminExpiry: string;
      before(async () => {
        adminExpiry = inMinutes(10);
        shortLived = (await issue({
          name: "short-lived admin",
          scopes: [KEYS_WRITE, PROJECTS_READ],
          expiresAt: adminExpiry,
        })).key;
      });

      it("a short-lived admin key cannot mint a never-expiring key or one that outlives it", async () => {
        const before = await keyIds();
        assertRefused(
          await call(server, "POST", "/admin/keys", shortLived, {
            name: "forever",
            scopes: [KEYS_WRITE],
          }),
          "new",
          { expiresAt: ["never"] },
        );
        const later = inMinutes(20);
        assertRefused(
          await call(server, "POST", "/admin/keys", shortLived, {
            name: "later",
            scopes: [KEYS_WRITE],
            expiresAt: later,
          }),
          "new",
          { expiresAt: [later] },
        );
        assert.deepEqual(await keyIds(), before, "nothing written");
        const sooner = inMinutes(5);
        const ok = await call(server, "POST", "/admin/keys", shortLived, {
          name: "sooner",
          scopes: [KEYS_WRITE],
          expiresAt: sooner,
        });
        assert.equal(ok.status, 201, ok.text);
        assert.equal(ok.body.data.record.expiresAt, sooner);
        const same = await call(server, "POST", "/admin/keys", shortLived, {
          name: "as long",
          scopes: [KEYS_WRITE],
          expiresAt: adminExpiry,
        });
        assert.equal(same.status, 201, same.text);
      });

      it("a short-lived admin key cannot rotate a key into one that outlives it", async () => {
        const target = await issue({
          name: "short target",
          scopes: [PROJECTS_READ],
          expiresAt: inMinutes(5),
        });
        const later = inMinutes(20);
        assertRefused(
          await call(server, "POST", `/admin/keys/${target.id}/rotate`, shortLived, {
            expiresAt: later,
          }),
          "new",
          { expiresAt: [later] },
        );
        assert.equal(await status(target.id), "active", "the target was not rotated");
      });

      it("a rotation without expiresAt keeps the old key's expiry", async () => {
        const targetExpiry = inMinutes(5);
        const target = await issue({
          name: "short target",
          scopes: [PROJECTS_READ],
          expiresAt: targetExpiry,
        });
        const rotated = await call(
          server,
          "POST",
          `/admin/keys/${target.id}/rotate`,
          shortLived,
          {},
        );
        assert.equal(rotated.status, 201, rotated.text);
        assert.equal(rotated.body.data.record.expiresAt, targetExpiry);
      });

      it("a short-lived admin key cannot rotate or revoke a never-expiring key", async () => {
        const forever = await issue({ name: "forever target", scopes: [PROJECTS_READ] });
        for (
          const [method, path, body] of [
            ["POST", `/admin/keys/${forever.id}/rotate`, { expiresAt: inMinutes(5) }],
            ["DELETE", `/admin/keys/${forever.id}`, undefined],
          ] as const
        ) {
          assertRefused(await call(server, method, path, shortLived, body), "target", {
            expiresAt: ["never"],
          });
        }
        assert.equal(await status(forever.id), "active");
      });
    });

    describe("scopes", () => {
      let narrow: { id: string; key: string };
      before(async () => {
        narrow = await issue({ name: "narrow admin", scopes: [KEYS_WRITE] });
      });

      it("a keys:write key cannot revoke a key with broader scopes", async () => {
        const broad = await issue({ name: "broad target", scopes: [PROJECTS_READ, FEED_READ] });
        assertRefused(
          await call(server, "DELETE", `/admin/keys/${broad.id}`, narrow.key),
          "target",
          { scopes: ["projects:read", "feed:read"] },
        );
        assert.equal(await status(broad.id), "active");
      });

      it("a keys:write key may revoke a key no more powerful than itself, itself included", async () => {
        const peer = await issue({ name: "peer", scopes: [KEYS_WRITE] });
        const revoked = await call(server, "DELETE", `/admin/keys/${peer.id}`, narrow.key);
        assert.equal(revoked.status, 200, revoked.text);
        assert.equal(revoked.body.data.status, "revoked");
        const self = await call(server, "DELETE", `/admin/keys/${narrow.id}`, narrow.key);
        assert.equal(self.status, 200, self.text);
      });
    });
  });
}
