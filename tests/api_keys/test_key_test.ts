import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createTestKey } from "../../api_keys/test_key.ts";
import { makeService } from "./helpers.ts";

describe("createTestKey", () => {
  it("creates a key with test defaults and returns the context verify yields", async () => {
    const { service } = makeService();
    const result = await createTestKey(service);
    assert.equal(result.context.environment, "test");
    assert.equal(result.context.tenantId, "test-tenant");
    assert.deepEqual(result.context.scopes, ["test:write"]);
    assert.deepEqual({ ...(await service.verify(result.key)) }, result.context);
  });

  it("honours options", async () => {
    const { service } = makeService();
    const result = await createTestKey(service, {
      tenantId: "acme",
      environment: "live",
      scopes: [{ resource: "orders", level: "read" }],
      allowedIpCidrs: ["10.1.2.3"],
    });
    assert.deepEqual({ ...(await service.verify(result.key)) }, result.context);
    assert.deepEqual(result.context.allowedIpCidrs, ["10.1.2.3/32"]);
  });
});
