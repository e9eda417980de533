/**
 * The admin routes read a tenant's keys by lookups: with the storage
 * capabilities `listPageByTenant`, `findByReplacement`, `findTenantPool` and
 * `setTenantPool`, `GET /keys`, `GET /keys/:id`, rename, revoke, rotate and a
 * change of the tenant's pool never call `listByTenant` (every key of the
 * tenant); over the same records without the three (their fallback), every
 * answer is the same, byte for byte.
 * Run on the in-memory storage (tests/api_keys/admin/handler_test.ts) and on
 * Prisma over PostgreSQL (tests/postgres/prisma_storage_test.ts).
 */
import assert from "node:assert/strict";
import { createApiKeysAdminHandler } from "../../../api_keys/admin/handler.ts";
import type { ApiKeyStorage } from "../../../api_keys/mod.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../../rate_limits/memory_store.ts";
import { makeService, spyCalls } from "../helpers.ts";

const HIDDEN = new Set<PropertyKey>(["findByReplacement", "findTenantPool", "setTenantPool"]);

/** `inner` without the capabilities `findByReplacement`, `findTenantPool` and `setTenantPool`. */
function withoutLookups(inner: ApiKeyStorage): ApiKeyStorage {
  return new Proxy(inner, {
    get(target, property) {
      if (HIDDEN.has(property)) return undefined;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * Runs the admin routes over `inner` (empty, with `storesCredits`, the
 * lookups and `listPageByTenant`) twice, through the lookups and through the
 * fallback, and asserts the counts and the answers (see the module).
 */
export async function assertAdminReadsByLookups(inner: ApiKeyStorage): Promise<void> {
  assert.equal(typeof inner.findByReplacement, "function", "the storage has findByReplacement");
  assert.equal(typeof inner.findTenantPool, "function", "the storage has findTenantPool");
  assert.equal(typeof inner.setTenantPool, "function", "the storage has setTenantPool");
  const at = Date.parse("2030-01-01T00:00:00.000Z");
  const clock = () => new Date(at);
  const store = createMemoryRateLimitStore({ now: () => at });
  const limiter = createRateLimiter({ store, logger: () => {} });
  const lookups = spyCalls(inner);
  const fallback = spyCalls(withoutLookups(inner));
  const info = console.info;
  console.info = () => {}; // the start-up line naming the missing capabilities
  const [withLookups, withFallback] = [lookups, fallback].map(({ spied }) =>
    makeService({ storage: spied, limiter, clock, cache: false }).service
  );
  console.info = info;
  const refill = { amount: 100, interval: "daily" as const };
  const admin = await withLookups.create({
    tenantId: "acme",
    name: "admin",
    scopes: [{ resource: "keys", level: "write" }, { resource: "projects", level: "write" }],
    credits: { remaining: 100, refill, sharedBy: "tenant" },
  });
  const worker = await withLookups.create({
    tenantId: "acme",
    name: "worker",
    scopes: [{ resource: "projects", level: "read" }],
    credits: { remaining: 10, pool: { remaining: 100, refill } },
  });
  await withLookups.create({
    tenantId: "other",
    name: "theirs",
    scopes: [{ resource: "projects", level: "read" }],
    credits: { remaining: 7, sharedBy: "tenant" },
  });
  const [a, b] = [withLookups, withFallback].map((service) => {
    const handle = createApiKeysAdminHandler<null>({
      service,
      scopes: ["projects:read", "projects:write"],
      tenantOf: () => "acme",
      callerKeyIdOf: () => admin.id,
      canManage: () => true,
    });
    return async (method: string, path: string, body?: unknown) => {
      const answer = (await handle({
        method,
        path,
        query: () => null,
        headers: (name) => name.toLowerCase() === "x-requested-with" ? "api-keys-manager" : null,
        body: body === undefined ? null : JSON.stringify(body),
      }, null))!;
      assert.ok(answer.status < 300, `${method} ${path}: ${answer.status} ${answer.body}`);
      return answer.body;
    };
  });
  lookups.calls.length = 0;
  fallback.calls.length = 0;
  await withLookups.updateCredits("acme", null, { set: 60 }); // written back with setTenantPool

  const list = await a("GET", "/keys");
  assert.equal(list, await b("GET", "/keys"), "GET /keys");
  assert.equal(JSON.parse(list).tenantCredits.credits, 60, "the pool's balance");
  assert.equal(await a("GET", `/keys/${worker.id}`), await b("GET", `/keys/${worker.id}`));
  const rotated = JSON.parse(await a("POST", `/keys/${worker.id}/rotate`, { grace: "1h" }));
  const next = rotated.record.id as string;
  assert.equal(rotated.record.replacesKeyId, worker.id);
  assert.equal(JSON.stringify(rotated.record), await b("GET", `/keys/${next}`), "rotate");
  assert.equal(await a("GET", `/keys/${worker.id}`), await b("GET", `/keys/${worker.id}`));
  const renamed = await a("PATCH", `/keys/${next}`, { name: "renamed" });
  assert.equal(JSON.parse(renamed).replacesKeyId, worker.id, "rename answers the predecessor");
  assert.equal(renamed, await b("GET", `/keys/${next}`), "rename");
  const revoked = await a("DELETE", `/keys/${next}`);
  assert.equal(JSON.parse(revoked).status, "revoked");
  assert.equal(JSON.parse(revoked).replacesKeyId, worker.id, "revoke answers the predecessor");
  assert.equal(revoked, await b("GET", `/keys/${next}`), "revoke");
  assert.equal(await a("GET", "/keys"), await b("GET", "/keys"), "GET /keys at the end");

  const count = (calls: string[], name: string) => calls.filter((call) => call === name).length;
  assert.equal(count(lookups.calls, "listByTenant"), 0, `${lookups.calls}`);
  assert.ok(count(lookups.calls, "findByReplacement") >= 4, `${lookups.calls}`);
  assert.ok(count(lookups.calls, "findTenantPool") >= 2, `${lookups.calls}`);
  assert.equal(count(lookups.calls, "setTenantPool"), 1, `${lookups.calls}`);
  assert.equal(count(lookups.calls, "setCredits"), 0, `${lookups.calls}`);
  assert.ok(count(fallback.calls, "listByTenant") >= 8, `the fallback: ${fallback.calls}`);
}
