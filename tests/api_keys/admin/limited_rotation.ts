/**
 * A rate-limited, credit-limited `keys:write` caller key rotating through a
 * binding (Fetch over HTTP, Nest on Express and Fastify): the tenant's
 * unlimited admin key is refused as create refuses a key less limited than
 * the caller's; its own key rotates.
 */
import assert from "node:assert/strict";
import type { ApiKeysService } from "../../../api_keys/service.ts";

/** `POST /keys/:id/rotate` with `grace`, authenticated by the caller's key `callerKey`. */
export type RotateAs = (
  callerKey: string,
  id: string,
  grace: string,
) => Promise<{ status: number; json: { error?: { code: string; details: unknown } } }>;

/** Runs the scenario (see the module) on tenant `acme` of `service` (with a limiter) through `rotate`. */
export async function assertRotationKeepsCallerLimits(
  service: ApiKeysService,
  rotate: RotateAs,
): Promise<void> {
  const scopes = [
    { resource: "keys", level: "write" as const },
    { resource: "projects", level: "write" as const },
  ];
  const limited = await service.create({
    tenantId: "acme",
    name: "limited admin",
    scopes,
    rateLimits: [{ name: "minute", limit: 3, windowMs: 60_000 }],
    credits: { remaining: 5 },
  });
  const owner = await service.create({ tenantId: "acme", name: "owner admin", scopes });
  const refused = await rotate(limited.key, owner.id, "none");
  assert.equal(refused.status, 403, JSON.stringify(refused.json));
  assert.equal(refused.json.error?.code, "api_key_escalation_refused");
  assert.deepEqual(refused.json.error?.details, {
    key: "target",
    exceeds: { rateLimits: ["minute"], credits: ["no balance"] },
  });
  assert.equal((await service.verify(owner.key)).keyId, owner.id, "the owner's key still works");
  const own = await rotate(limited.key, limited.id, "1h");
  assert.equal(own.status, 201, JSON.stringify(own.json));
}
