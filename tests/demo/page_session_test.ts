/**
 * The page's session (`demo/page_session.ts`): the seeded admin key goes to
 * the page only while the demo listens on loopback, and the body says when
 * the page should reload the list (the usage flush interval).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DEMO_USAGE } from "../../demo/admin/admin_routes.ts";
import { pageAdminKey, pageSessionBody } from "../../demo/page_session.ts";
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
});
