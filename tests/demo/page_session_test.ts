/**
 * The page's session (`demo/page_session.ts`): the seeded admin key goes to
 * the page only while the demo listens on loopback, and the body says when
 * the page should reload the list (the usage flush interval).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DEMO_USAGE } from "../../demo/admin/admin_routes.ts";
import { request } from "node:http";
import { pageAdminKey, pageSessionBody, pageSessionServes } from "../../demo/page_session.ts";
import { startTestDemo, startTestFetchDemo } from "./_demo.ts";
import type { DemoKeys } from "../../demo/seed.ts";

const keys = { admin: { id: "k1", key: "ak_live_admin" } } as DemoKeys;

describe("the demo page's session", () => {
  it("hands the admin key to the page on loopback only", () => {
    for (const host of ["127.0.0.1", "::1", "localhost"]) {
      assert.equal(pageAdminKey(host, keys), "ak_live_admin", host);
    }
    for (const host of ["0.0.0.0", "::", "192.0.2.1", "127.0.0.1.example"]) {
      assert.equal(pageAdminKey(host, keys), undefined, host);
    }
    assert.equal(pageAdminKey("127.0.0.1", undefined), undefined, "no seeded keys");
  });

  it("answers the token (null without one) and the usage flush interval", () => {
    assert.deepEqual(JSON.parse(pageSessionBody({ adminKey: "ak_live_admin" })), {
      token: "ak_live_admin",
      usageFlushMs: DEMO_USAGE.flushIntervalMs,
    });
    assert.equal(JSON.parse(pageSessionBody({ adminKey: undefined })).token, null);
  });

  it("answers only a loopback Host with the demo's port, and a matching Origin", () => {
    const session = { adminKey: "ak_live_admin", port: 4100 };
    for (const host of ["localhost:4100", "127.0.0.1:4100", "[::1]:4100"]) {
      assert.equal(pageSessionServes(session, host, null), true, host);
      assert.equal(pageSessionServes(session, host, `http://${host}`), true, `${host} + origin`);
    }
    for (
      const host of [
        null,
        "",
        "evil.example:4100",
        "localhost",
        "localhost:4101",
        "127.0.0.1:41000",
        "127.0.0.1.nip.io:4100",
        "LOCALHOST:4100x",
        "::1:4100",
      ]
    ) {
      assert.equal(pageSessionServes(session, host, null), false, String(host));
    }
    for (
      const origin of [
        "http://evil.example",
        "null",
        "http://localhost:4101",
        "https://localhost:4100",
      ]
    ) {
      assert.equal(pageSessionServes(session, "localhost:4100", origin), false, origin);
    }
    assert.equal(
      pageSessionServes({ adminKey: "k", port: undefined }, "localhost:4100", null),
      false,
      "before the demo listens",
    );
  });
});

/** GET /page-session with a raw `Host` (and `Origin`) header. */
function getSession(port: number, host: string, origin?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Host: host };
    if (origin !== undefined) headers.Origin = origin;
    const req = request({ host: "127.0.0.1", port, path: "/page-session", headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

for (const kind of ["nest", "fetch"] as const) {
  describe(`/page-session on the ${kind} demo (DNS rebinding)`, () => {
    it("refuses a foreign Host or Origin and serves the loopback one", async () => {
      const server = kind === "nest" ? await startTestDemo() : await startTestFetchDemo();
      try {
        const port = server.port;
        assert.equal(await getSession(port, `127.0.0.1:${port}`), 200);
        assert.equal(await getSession(port, `localhost:${port}`, `http://localhost:${port}`), 200);
        assert.equal(await getSession(port, `evil.example:${port}`), 403);
        assert.equal(await getSession(port, `localhost:${port}`, "http://evil.example"), 403);
      } finally {
        await server.close();
      }
    });
  });
}
