/**
 * The Nest demo's partner route takes GitHub's real batches (1,000 tokens,
 * over Express's 100 KB default) on both adapters, and only that route is
 * raised: other JSON routes keep the 100 KB limit. The public route takes a
 * key sent as text/plain.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { LEAK_ROUTES } from "../../demo/leaks/handlers.ts";
import type { DemoServer } from "../../demo/server.ts";
import { call, startTestDemo } from "./_demo.ts";

for (const adapter of ["express", "fastify"] as const) {
  describe(`the partner route of the Nest demo (${adapter})`, () => {
    let server: DemoServer;
    before(async () => {
      server = await startTestDemo({ adapter });
    });
    after(() => server.close());

    it("accepts a signed batch of 1,000 tokens (over 200 KB) and revokes the genuine one", async () => {
      const leaked = server.keys!.reader.key;
      const matches = Array.from({ length: 1_000 }, (_, i) => ({
        token: i === 500 ? leaked : leaked.slice(0, -6) + String(100_000 + i),
        type: "saferoute_api_key",
        url: `https://github.com/example/repo/blob/main/config/environments/settings-${i}.env`,
        source: "content",
      }));
      const body = JSON.stringify(matches);
      assert.ok(body.length > 200_000, `${body.length} bytes`);
      const response = await fetch(server.url + LEAK_ROUTES.partner, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "Github-Public-Key-Identifier": server.signer.keyIdentifier,
          "Github-Public-Key-Signature": await server.signer.sign(body),
        },
        body,
      });
      const text = await response.text();
      assert.equal(response.status, 200, text.slice(0, 300));
      assert.ok(Array.isArray(JSON.parse(text)), text.slice(0, 300));
      assert.equal((await call(server, "GET", "/api/whoami", leaked)).status, 401);
    });

    it("takes a public report whose body is the key (text/plain) and revokes it", async () => {
      const leaked = server.keys!.restricted.key;
      assert.equal((await call(server, "GET", "/api/whoami", leaked)).status, 200);
      const response = await fetch(server.url + LEAK_ROUTES.report, {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body: leaked,
      });
      assert.equal(response.status, 202, await response.text());
      for (let i = 0; i < 50; i++) {
        if ((await call(server, "GET", "/api/whoami", leaked)).status === 401) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.fail("the reported key still works");
    });

    it("keeps the 100 KB limit elsewhere", { skip: adapter === "fastify" }, async () => {
      const answer = await call(server, "POST", "/api/projects", server.keys!.admin.key, {
        name: "x".repeat(200_000),
      });
      assert.equal(answer.status, 413);
    });
  });
}
