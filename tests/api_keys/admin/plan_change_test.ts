/**
 * A tenant's plan changes (docs/settings-page.md, "Changing a tenant's
 * plan"): `keyLimits` answers the new plan's pool rule while the tenant's
 * pool keeps the old one. Creating a key is the server's error (500, the
 * provider told through `onError` what to do), never a 400 on a `credits`
 * field the customer never sent; once the provider changes the pool's rule
 * with `updateCredits(tenantId, null, { set, refill })`, keys are created again.
 * The same for a tenant-shared policy's new limit (its change goes in
 * `rateLimitResolver`); and a caller key's policy of the plan's name is kept
 * as it is by the keys it mints, whatever limit the plan now answers.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createApiKeysAdminHandler } from "../../../api_keys/admin/handler.ts";
import { InMemoryApiKeyStorage } from "../../../api_keys/mod.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../../rate_limits/memory_store.ts";
import type { ApiKeysServiceOptions } from "../../../api_keys/mod.ts";
import { makeService } from "../helpers.ts";

const CSRF = { "x-requested-with": "api-keys-manager" };
const STARTER = { remaining: 1_000, refill: { amount: 1_000, interval: "monthly" as const } };
const PRO = { remaining: 50_000, refill: { amount: 50_000, interval: "daily" as const } };
const NOW = Date.parse("2030-01-15T12:00:00.000Z");

/** A service with a limiter, its clock at `NOW`. */
function limitedService(overrides: Partial<ApiKeysServiceOptions> = {}) {
  return makeService({
    storage: new InMemoryApiKeyStorage(),
    limiter: createRateLimiter({
      store: createMemoryRateLimitStore({ now: () => NOW }),
      logger: () => {},
    }),
    clock: () => new Date(NOW),
    ...overrides,
  });
}

/** A request of the admin routes, CSRF header included. */
function request(method: string, path: string, body?: unknown) {
  return {
    method,
    path,
    query: () => null,
    headers: (header: string) => (CSRF as Record<string, string>)[header.toLowerCase()] ?? null,
    body: body === undefined ? null : JSON.stringify(body),
  };
}

/** How many of `count` requests of `keys` (in turn) the service serves. */
async function served(
  service: ReturnType<typeof limitedService>["service"],
  keys: string[],
  count: number,
) {
  let accepted = 0;
  for (let i = 0; i < count; i++) {
    await service.authorize(keys[i % keys.length]).then(() => accepted++, () => {});
  }
  return accepted;
}

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

  it("create: a tenant-shared policy's new limit is a 500 with the provider told (rateLimitResolver), never a 400 on rateLimits; through rateLimitResolver the new limit applies to every key at once", async () => {
    let limit = 2;
    const shared =
      () => [{ name: "tenant-minute", limit, windowMs: 60_000, sharedBy: "tenant" as const }];
    const { service } = limitedService();
    const errors: unknown[] = [];
    const handle = createApiKeysAdminHandler<null>({
      service,
      scopes: ["projects:read"],
      tenantOf: () => "acme",
      canManage: () => true,
      policy: () => null,
      keyLimits: () => ({ rateLimits: shared() }),
      onError: (error) => errors.push(error),
    });
    const create = async (name: string) => {
      const answer =
        (await handle(request("POST", "/keys", { name, scopes: ["projects:read"] }), null))!;
      return { status: answer.status, json: JSON.parse(answer.body) };
    };
    assert.equal((await create("first")).status, 201);
    limit = 5; // the tenant upgraded
    const refused = await create("second");
    assert.equal(refused.status, 500, JSON.stringify(refused.json));
    assert.equal(refused.json.error.code, "internal_error");
    assert.equal(
      JSON.stringify(refused.json).includes("rateLimits"),
      false,
      "no blame on rateLimits",
    );
    assert.equal(errors.length, 1);
    const told = errors[0] as Error;
    assert.ok(told instanceof TypeError);
    assert.match(told.message, /options\.keyLimits answered rateLimits/);
    assert.match(told.message, /"acme"/);
    assert.match(told.message, /rateLimitResolver/);
    assert.equal((await service.listSummaries("acme")).length, 1, "nothing created");

    // The documented path: the plan's shared policy per request, every key on the new limit.
    limit = 2;
    const resolved = limitedService({ rateLimitResolver: shared });
    const keys = [];
    for (const name of ["a", "b"]) {
      keys.push(
        (await resolved.service.create({
          tenantId: "acme",
          name,
          scopes: [{ resource: "projects", level: "read" }],
        })).key,
      );
    }
    assert.equal(await served(resolved.service, keys, 4), 2, "the starter plan, one counter");
    limit = 5;
    assert.equal(await served(resolved.service, keys, 6), 3, "the upgrade, at once");
  });

  it("create by a caller key after the plan changed a policy it carries: the new key keeps the caller's policy as it is (201, config.can.create), on the caller's counter", async () => {
    let limit = 2;
    const plan = () => [{ name: "minute", limit, windowMs: 60_000 }];
    const { service } = limitedService({
      audit: { checkpointKey: "checkpoint-key-0123456789abcdefghijklmnopq" },
    });
    const admin = await service.create({
      tenantId: "acme",
      name: "admin",
      scopes: [{ resource: "projects", level: "write" }],
      rateLimits: plan(),
    });
    const handle = createApiKeysAdminHandler<null>({
      service,
      scopes: ["projects:read"],
      tenantOf: () => "acme",
      canManage: () => true,
      callerKeyIdOf: () => admin.id,
      actorOf: () => "alice",
      keyLimits: () => ({
        rateLimits: [...plan(), { name: "day", limit: 100, windowMs: 86_400_000 }],
      }),
    });
    const call = async (method: string, path: string, body?: unknown) => {
      const answer = (await handle(request(method, path, body), null))!;
      return { status: answer.status, json: JSON.parse(answer.body) };
    };
    const caller = { name: "minute", limit: 2, windowMs: 60_000 };
    const day = { name: "day", limit: 100, windowMs: 86_400_000 };
    for (const [changed, name] of [[5, "upgrade"], [1, "downgrade"]] as const) {
      limit = changed;
      const config = (await call("GET", "/config")).json;
      assert.equal(config.can.create, true, name);
      assert.deepEqual(config.limits.policies, [caller, day], name);
      const made = await call("POST", "/keys", { name, scopes: ["projects:read"] });
      assert.equal(made.status, 201, `${name}: ${JSON.stringify(made.json)}`);
      const stored = (await service.listSummaries("acme")).find((k) =>
        k.id === made.json.record.id
      );
      assert.deepEqual(
        stored?.rateLimits,
        [{ ...caller, cost: 1 }, { ...day, cost: 1 }],
        `${name}: the caller's policy as it is`,
      );
      assert.equal(
        await served(service, [admin.key, made.json.key], 6),
        name === "upgrade" ? 2 : 0,
        `${name}: on the caller's window counter`,
      );
    }
    const audit = await service.auditLog("acme", {});
    assert.equal(audit.records.some((r) => r.action === "key.escalation_refused"), false);
  });
});
