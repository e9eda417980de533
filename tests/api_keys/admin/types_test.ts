/** The admin types fit what the handler answers and the presets it accepts. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type {
  AdminResponse,
  ApiKeysAdminHandler,
  ExpiryPreset,
  GracePreset,
} from "../../../api_keys/admin/types.ts";
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
});
