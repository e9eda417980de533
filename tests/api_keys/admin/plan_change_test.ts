/**
 * A tenant's plan changes (docs/settings-page.md, "Changing a tenant's
 * plan"): `keyLimits` answers the new plan's pool rule while the tenant's
 * pool keeps the old one. Creating a key is the server's error (500, the
 * provider told through `onError` what to do), never a 400 on a `credits`
 * field the customer never sent; once the provider changes the pool's rule
 * with `updateCredits(tenantId, null, { set, refill })`, keys are created again.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createApiKeysAdminHandler } from "../../../api_keys/admin/handler.ts";
import { InMemoryApiKeyStorage } from "../../../api_keys/mod.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../../rate_limits/memory_store.ts";
import { makeService } from "../helpers.ts";

const CSRF = { "x-requested-with": "api-keys-manager" };
const STARTER = { remaining: 1_000, refill: { amount: 1_000, interval: "monthly" as const } };
const PRO = { remaining: 50_000, refill: { amount: 50_000, interval: "daily" as const } };

describe("the admin routes under a changed plan", () => {
  it("create: 500 internal_error with the provider told once what to do; after updateCredits(tenant, null, { set, refill }) the key joins the pool", async () => {
    const now = Date.parse("2030-01-15T12:00:00.000Z");
    const { service } = makeService({
      storage: new InMemoryApiKeyStorage(),
      limiter: createRateLimiter({
        store: createMemoryRateLimitStore({ now: () => now }),
        logger: () => {},
      }),
      clock: () => new Date(now),
    });
    let plan: typeof STARTER | typeof PRO = STARTER;
    const errors: unknown[] = [];
    const handle = createApiKeysAdminHandler<{ tenant: string }>({
      service,
      scopes: ["projects:read"],
      tenantOf: (caller) => caller.tenant,
      canManage: () => true,
      policy: () => null,
      keyLimits: () => ({ credits: { ...plan, sharedBy: "tenant" } }),
      onError: (error) => errors.push(error),
    });
    const create = async (name: string) => {
      const answer = (await handle({
        method: "POST",
        path: "/keys",
        query: () => null,
        headers: (header) => (CSRF as Record<string, string>)[header.toLowerCase()] ?? null,
        body: JSON.stringify({ name, scopes: ["projects:read"] }),
      }, { tenant: "acme" }))!;
      return { status: answer.status, json: JSON.parse(answer.body) };
    };
    assert.equal((await create("first")).status, 201);
    plan = PRO; // the tenant upgraded: the app's keyLimits answers the new plan
    const refused = await create("second");
    assert.equal(refused.status, 500, JSON.stringify(refused.json));
    assert.equal(refused.json.error.code, "internal_error");
    assert.equal(JSON.stringify(refused.json).includes("credits"), false, "no blame on credits");
    assert.equal(errors.length, 1);
    const told = errors[0] as Error;
    assert.match(told.message, /options\.keyLimits/);
    assert.match(told.message, /updateCredits\(tenantId, null, \{ set, refill \}\)/);
    assert.equal((await service.listSummaries("acme")).length, 1, "nothing created");
    await service.updateCredits("acme", null, { set: PRO.remaining, refill: PRO.refill });
    const made = await create("second");
    assert.equal(made.status, 201, JSON.stringify(made.json));
    assert.deepEqual(
      [
        made.json.record.credits,
        made.json.record.creditsSharedBy,
        made.json.record.creditsRefillAmount,
      ],
      [50_000, "tenant", 50_000],
    );
    assert.equal(errors.length, 1);
  });
});
