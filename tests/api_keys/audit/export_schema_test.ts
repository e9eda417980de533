/**
 * `AUDIT_EXPORT_SCHEMA` checked with ajv against a real export (records of
 * every kind the service writes, a refused escalation, checkpoints), and
 * refusing lines that stray from it.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { AUDIT_EXPORT_SCHEMA } from "../../../api_keys/audit/export_schema.ts";
import { AUDIT_ACTIONS } from "../../../api_keys/audit/types.ts";
import { InMemoryApiKeyStorage } from "../../../api_keys/mod.ts";
import { createApiKeysAdminHandler } from "../../../api_keys/admin/mod.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../../rate_limits/memory_store.ts";
import { makeService } from "../helpers.ts";

const SCOPES = [{ resource: "orders", level: "read" as const }];

function validator() {
  const ajv = new Ajv({ strict: true, allErrors: true });
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  return ajv.compile(AUDIT_EXPORT_SCHEMA);
}

describe("api_keys/audit/export_schema.ts", () => {
  it("every line of a real export validates; the actions are AUDIT_ACTIONS", async () => {
    const info = console.info;
    console.info = () => {};
    const { service } = makeService({
      storage: new InMemoryApiKeyStorage(),
      audit: { checkpointKey: "an-audit-key-of-at-least-thirty-two-bytes", checkpointEvery: 2 },
      limiter: createRateLimiter({ store: createMemoryRateLimitStore(), logger: () => {} }),
    });
    console.info = info;
    const { id } = await service.create(
      { tenantId: "t", name: "ci", scopes: SCOPES, credits: { remaining: 10 } },
      { actor: "alice", requestId: "req-1", clientAddress: "203.0.113.9" },
    );
    const rotated = await service.rotate(id, { name: "ci-2", gracePeriodMs: 60_000 });
    await service.updateCredits("t", rotated.id, { add: 5 }, { actor: "billing" });
    const handle = createApiKeysAdminHandler<string>({
      service,
      scopes: ["orders:read"],
      tenantOf: () => "t",
      actorOf: (user) => user,
      canManage: () => true,
      policy: () => ({ scopes: ["orders:write"] }),
    });
    const refused = await handle({
      method: "DELETE",
      path: `/keys/${rotated.id}`,
      query: () => null,
      headers: (name) => name === "x-requested-with" ? "api-keys-manager" : null,
      body: null,
    }, "mallory");
    assert.equal(refused?.status, 403);
    await service.revokeForTenant("t", rotated.id, { actor: "bob" });

    const validate = validator();
    const lines: Record<string, unknown>[] = [];
    for await (const line of service.exportAuditLog("t")) lines.push(JSON.parse(line));
    for (const line of lines) assert.ok(validate(line), JSON.stringify(validate.errors));
    assert.deepEqual(
      lines.map((line) => line.type === "record" ? line.action : "checkpoint"),
      [
        "key.created",
        "key.rotated",
        "checkpoint",
        "key.credits_updated",
        "key.escalation_refused",
        "checkpoint",
        "key.revoked",
        "checkpoint",
      ],
    );
    const record = AUDIT_EXPORT_SCHEMA.oneOf[0].properties as unknown as Record<
      string,
      { enum?: unknown }
    >;
    assert.deepEqual(record.action.enum, [...AUDIT_ACTIONS]);

    // Lines that stray from the schema are refused.
    const [line, , checkpoint] = lines;
    for (
      const bad of [
        { ...line, secret: "x" },
        { ...line, action: "key.deleted" },
        { ...line, hash: "ABC" },
        { ...line, seq: 0 },
        { ...line, at: "yesterday" },
        { ...line, changes: { name: { after: "x" } } },
        { ...checkpoint, mac: undefined },
        { ...checkpoint, type: "head" },
      ]
    ) {
      assert.equal(validate(JSON.parse(JSON.stringify(bad))), false, JSON.stringify(bad));
    }
  });
});
