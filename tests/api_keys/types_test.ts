import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_GRACE_PERIOD_MS, MAX_API_KEY_NAME_LENGTH } from "../../api_keys/types.ts";
import { makeService, READ_ORDERS, rejection } from "./helpers.ts";

describe("input limits", () => {
  it("MAX_API_KEY_NAME_LENGTH is the longest name create accepts", async () => {
    const { service } = makeService();
    const longest = "n".repeat(MAX_API_KEY_NAME_LENGTH);
    await service.create({ tenantId: "t", name: longest, scopes: READ_ORDERS });
    const error = await rejection(
      service.create({ tenantId: "t", name: longest + "n", scopes: READ_ORDERS }),
    );
    assert.deepEqual([error.code, error.field], ["api_key_invalid_input", "name"]);
  });

  it("DEFAULT_GRACE_PERIOD_MS is how long a rotated key keeps working by default", async () => {
    const { service, clocks } = makeService();
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const { graceExpiresAt } = await service.rotate(id);
    assert.equal(graceExpiresAt.getTime(), clocks.now + DEFAULT_GRACE_PERIOD_MS);
    assert.equal(DEFAULT_GRACE_PERIOD_MS, 86_400_000);
  });
});
