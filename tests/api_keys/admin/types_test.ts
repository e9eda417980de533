/** The admin types fit what the handler answers and the presets it accepts. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import type {
  AdminResponse,
  ApiKeysAdminHandler,
  ExpiryPreset,
  GracePreset,
} from "../../../api_keys/admin/types.ts";
import type * as Admin from "../../../api_keys/admin/mod.ts";
import { createApiKeysAdminHandler } from "../../../api_keys/admin/handler.ts";
import { makeService } from "../helpers.ts";

describe("api_keys/admin/types.ts", () => {
  it("the handler is an ApiKeysAdminHandler; its config lists every preset type's value", async () => {
    const { service } = makeService();
    const handle: ApiKeysAdminHandler<null> = createApiKeysAdminHandler<null>({
      service,
      scopes: ["a:read"],
      tenantOf: () => "t",
      canManage: () => true,
      policy: () => null,
    });
    const answer: AdminResponse = (await handle({
      method: "GET",
      path: "/config",
      query: () => null,
      headers: () => null,
      body: null,
    }, null))!;
    const grace: GracePreset[] = ["none", "1h", "24h", "7d"];
    const expiry: ExpiryPreset[] = ["7d", "30d", "90d", "1y", "never"];
    const config = JSON.parse(answer.body);
    assert.deepEqual(config.gracePresets, grace);
    assert.deepEqual(config.expiryPresets, expiry);
    assert.equal(handle.maxBodyBytes, 16_384);
  });

  const GUIDE = new URL("../../../docs/settings-page.md", import.meta.url);
  // The Node run's test tree holds the package's files, not the docs.
  const noDocs = !existsSync(GUIDE) && "docs/ is not in this test tree";
  it(
    "every shape docs/settings-page.md names is exported by ./api-keys/admin",
    { skip: noDocs },
    () => {
      const guide = readFileSync(GUIDE, "utf8");
      const named = [...guide.matchAll(/^interface (\w+)/gm)].map((match) => match[1]);
      assert.ok(named.length >= 9, `found ${named.join(", ")}`);
      const entry = readFileSync(
        new URL("../../../api_keys/admin/mod.ts", import.meta.url),
        "utf8",
      );
      for (const name of named) assert.match(entry, new RegExp(`^  ${name},$`, "m"), name);
    },
  );

  it("the handler's answers have the exported shapes", async () => {
    const { service } = makeService();
    const handle = createApiKeysAdminHandler<null>({
      service,
      scopes: ["a:read"],
      tenantOf: () => "t",
      canManage: () => true,
      policy: () => null,
      csrf: false,
    });
    const call = async (method: string, path: string, body: unknown = null) =>
      JSON.parse(
        (await handle({
          method,
          path,
          query: () => null,
          headers: () => null,
          body: body === null ? null : JSON.stringify(body),
        }, null))!.body,
      );
    const config: Admin.AdminConfig = await call("GET", "/config");
    assert.equal(config.csrf, null);
    const create: Admin.CreateKeyBody = { name: "CI", scopes: ["a:read"], expiresIn: "30d" };
    const issued: Admin.IssuedKey = await call("POST", "/keys", create);
    const view: Admin.KeyView = issued.record;
    // Every field the interface requires is in the answer (a typed record: the compiler lists them).
    const required: Record<
      Exclude<
        keyof Admin.KeyView,
        "credits" | "creditsNextRefillAt" | "creditsRefillAmount" | "creditsSharedBy"
      >,
      1
    > = {
      allowedIpCidrs: 1,
      createdAt: 1,
      createdBy: 1,
      environment: 1,
      expiresAt: 1,
      id: 1,
      lastUsedAt: 1,
      name: 1,
      prefix: 1,
      replacedByKeyId: 1,
      replacesKeyId: 1,
      revokedAt: 1,
      rotatedAt: 1,
      scopes: 1,
      status: 1,
    };
    assert.deepEqual(Object.keys(view).sort(), Object.keys(required).sort());
    const list: Admin.KeyList = await call("GET", "/keys");
    assert.deepEqual(list.keys.map((key) => key.id), [view.id]);
    assert.equal(list.nextCursor, null);
    assert.deepEqual(config.can, {
      create: true,
      rename: true,
      rotate: true,
      revoke: true,
      audit: false, // no audit option on this service
    });
    assert.equal(config.limits, null);
    const rotate: Admin.RotateKeyBody = { grace: "1h" };
    const rotated: Admin.RotatedKey = await call("POST", `/keys/${view.id}/rotate`, rotate);
    assert.equal(rotated.replacedKeyId, view.id);
    assert.equal(typeof rotated.graceExpiresAt, "string");
    assert.equal(rotated.record.replacesKeyId, view.id);
    const pair: Admin.KeyList = await call("GET", "/keys");
    assert.deepEqual(
      Object.fromEntries(pair.keys.map((key) => [key.id, key.replacesKeyId])),
      { [rotated.record.id]: view.id, [view.id]: null },
    );
  });
});
