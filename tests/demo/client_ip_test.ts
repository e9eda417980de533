/**
 * The demo's client IP, end to end on both adapters: the demo trusts only a
 * proxy on the loopback interface, and an `X-Forwarded-For` it cannot read
 * leaves the client unknown, so the localhost-only key is refused (never
 * taken for 127.0.0.1).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { DemoServer } from "../../demo/server.ts";
import { startTestDemo } from "./_demo.ts";

for (const adapter of ["express", "fastify"] as const) {
  describe(`demo client IP (${adapter})`, () => {
    let server: DemoServer;

    before(async () => {
      server = await startTestDemo({ adapter });
    });
    after(() => server?.close());

    async function whoami(key: string, forwardedFor?: string) {
      const headers: Record<string, string> = { "X-API-Key": key };
      if (forwardedFor !== undefined) headers["X-Forwarded-For"] = forwardedFor;
      const response = await fetch(`${server.url}/api/whoami`, { headers });
      return { status: response.status, body: await response.json() };
    }

    it("takes the address the loopback proxy forwarded, and the peer without one", async () => {
      const reader = server.keys!.reader.key;
      assert.equal((await whoami(reader)).body.data.clientIp, "127.0.0.1");
      assert.equal((await whoami(reader, "203.0.113.7")).body.data.clientIp, "203.0.113.7");
      assert.equal(
        (await whoami(reader, "198.51.100.1, 203.0.113.7")).body.data.clientIp,
        "203.0.113.7",
      );
    });

    it("the localhost-only key passes from 127.0.0.1 only", async () => {
      const restricted = server.keys!.restricted.key;
      assert.equal((await whoami(restricted)).status, 200);
      assert.equal((await whoami(restricted, "127.0.0.1")).status, 200);
      const remote = await whoami(restricted, "203.0.113.7");
      assert.equal(remote.status, 403);
      assert.equal(remote.body.error.code, "api_key_ip_not_allowed");
    });

    it("a malformed X-Forwarded-For fails closed for the localhost-only key", async () => {
      const restricted = server.keys!.restricted.key;
      for (
        const value of [
          "garbage",
          "203.0.113.7, garbage",
          "127.0.0.1, not-an-ip",
          "127.0.0.1:99999x",
          "0x7f.0.0.1",
          "[::1",
        ]
      ) {
        const answer = await whoami(restricted, value);
        assert.equal(answer.status, 403, value);
        assert.equal(answer.body.error.code, "api_key_ip_not_allowed", value);
      }
    });
  });
}
