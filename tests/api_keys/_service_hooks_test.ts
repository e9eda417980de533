/** The per-service hooks that the leaked-key handlers use. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { attachServiceHooks, serviceHooks, serviceLog } from "../../api_keys/_service_hooks.ts";
import { compileKeyLayouts, generateKey } from "../../api_keys/key_format.ts";
import { makeService, READ_ORDERS } from "./helpers.ts";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";

describe("service hooks", () => {
  it("records hooks per object", () => {
    const withHooks = {};
    const hooks = {
      emitEvent: undefined,
      layouts: compileKeyLayouts(undefined, "layouts"),
      redact: (line: string) => line,
      verifyReported: () => Promise.reject(new Error("no")),
      revokeReported: () => Promise.resolve(),
      clock: () => new Date(0),
      allowsLifetime: () => true,
      defaultLifetimeMs: null,
      renameForTenant: undefined,
      conditionalRename: false,
      recordsUsage: false,
      audits: false,
      listPage: () => Promise.resolve({ summaries: [], predecessors: {} }),
      recordRefusal: undefined,
      createWithRecord: () => Promise.reject(new Error("no")),
      rotateWithRecord: () => Promise.reject(new Error("no")),
      summaryOf: () => Promise.resolve(null),
      summariesOf: () => Promise.resolve([]),
      keyLimitsOf: () => Promise.resolve([]),
      usageOfKeys: () => Promise.resolve([]),
      predecessorOf: () => Promise.resolve(null),
    };
    attachServiceHooks(withHooks, hooks);
    assert.equal(serviceHooks(withHooks), hooks);
    assert.equal(serviceHooks({}), undefined);
  });

  it("holds the onEvent dispatcher and the report check of every ApiKeysService", async () => {
    const { service, events } = makeService();
    const hooks = serviceHooks(service)!;
    assert.equal(typeof hooks.emitEvent, "function");
    const event = { type: "api_key.revoked", at: new Date(0) } as never;
    hooks.emitEvent!(event);
    assert.deepEqual(events, [event]);
    assert.equal(serviceHooks(makeService({ onEvent: undefined }).service)!.emitEvent, undefined);
    const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    assert.equal((await hooks.verifyReported(key)).keyId, id);
    const page = await hooks.listPage("t1", {
      limit: 10,
      after: null,
      q: null,
      status: "all",
      environment: null,
      sort: "created_desc",
      now: new Date(),
    });
    assert.deepEqual(page.summaries.map((summary) => summary.id), [id]);
    assert.equal("hash" in page.summaries[0], false, "summaries, never records");
    const summary = await hooks.summaryOf("t1", id);
    assert.deepEqual(summary, page.summaries[0]);
    assert.equal(await hooks.summaryOf("t2", id), null, "another tenant's key is unknown");
    assert.equal(await hooks.summaryOf("t1", "unknown"), null);
    assert.deepEqual(await hooks.summariesOf("t1", ["unknown", id]), [null, summary]);
    assert.deepEqual(await hooks.summariesOf("t2", [id]), [null], "another tenant's: null");
    assert.deepEqual(await hooks.summariesOf("t1", []), []);
    const next = await service.rotateForTenant("t1", id);
    assert.equal(await hooks.predecessorOf("t1", next.id), id);
    assert.equal(await hooks.predecessorOf("t1", id), null);
    assert.equal(await hooks.predecessorOf("t2", next.id), null, "another tenant's chain");
  });

  it("serviceLog redacts a service's key layouts, legacyKeyLayouts too; the current one's for another object", () => {
    const current = generateKey({ environment: "live" }).raw;
    const legacy = `ak_live_${"A".repeat(12)}_${"b".repeat(32)}`; // nestarc-v0
    const { service } = makeService({ legacyKeyLayouts: ["nestarc-v0"] });
    const lines: string[] = [];
    serviceLog(service, (line) => lines.push(line))(`a ${current} b ${legacy}`);
    serviceLog({}, (line) => lines.push(line))(`a ${current} b ${legacy}`);
    assert.deepEqual(lines, [
      "a [REDACTED_API_KEY] b [REDACTED_API_KEY]",
      `a [REDACTED_API_KEY] b ${legacy}`,
    ]);
  });

  it("keyLimitsOf: each key's policies, the key whose windows and balance it counts on, its pool; null for an unknown or another tenant's id", async () => {
    const at = Date.parse("2030-01-01T10:00:00.000Z");
    const store = createMemoryRateLimitStore({ now: () => at });
    const limiter = createRateLimiter({ store, logger: () => {} });
    const { service } = makeService({ limiter, clock: () => new Date(at) });
    const minute = { name: "minute", limit: 3, windowMs: 60_000, cost: 1 };
    const root = await service.create({
      tenantId: "t1",
      name: "root",
      scopes: READ_ORDERS,
      rateLimits: [minute],
      credits: { remaining: 5 },
    });
    const minted = await service.create({
      tenantId: "t1",
      name: "minted",
      scopes: READ_ORDERS,
      limitsOf: root.id,
    });
    const pooled = await service.create({
      tenantId: "t1",
      name: "pooled",
      scopes: READ_ORDERS,
      credits: { remaining: 2, pool: { remaining: 9 } },
    });
    const plain = await service.create({ tenantId: "t1", name: "plain", scopes: READ_ORDERS });
    const theirs = await service.create({ tenantId: "t2", name: "theirs", scopes: READ_ORDERS });
    const rotated = await service.rotate(minted.id);
    const ids = [root.id, rotated.id, pooled.id, plain.id, theirs.id, "nope"];
    assert.deepEqual(await serviceHooks(service)!.keyLimitsOf("t1", ids), [
      { rateLimits: [minute], windowsOf: root.id, balanceOf: root.id, pool: false },
      { rateLimits: [minute], windowsOf: root.id, balanceOf: root.id, pool: false },
      { rateLimits: [], windowsOf: pooled.id, balanceOf: pooled.id, pool: true },
      { rateLimits: [], windowsOf: plain.id, balanceOf: null, pool: false },
      null,
      null,
    ]);
  });

  it("summariesOf: each key as summaryOf gives it, balances read now (its own, the tenant's pool from its newest copy), in the order asked", async () => {
    const at = Date.parse("2030-01-01T10:00:00.000Z");
    const store = createMemoryRateLimitStore({ now: () => at });
    const limiter = createRateLimiter({ store, logger: () => {} });
    let balanceReads = 0;
    const readCredits = limiter.readCredits.bind(limiter);
    limiter.readCredits = (balances) => (balanceReads++, readCredits(balances));
    const { service } = makeService({ limiter, clock: () => new Date(at) });
    const hooks = serviceHooks(service)!;
    const create = (name: string, credits: { remaining: number; sharedBy?: "tenant" }) =>
      service.create({ tenantId: "t1", name, scopes: READ_ORDERS, credits });
    const own = await create("own", { remaining: 10 });
    const pooled = await create("pooled", { remaining: 5, sharedBy: "tenant" });
    const plain = await service.create({ tenantId: "t1", name: "plain", scopes: READ_ORDERS });
    for (const { key } of [own, own, pooled]) await service.authorize(key);
    const ids = [pooled.id, plain.id, own.id];
    const each = await Promise.all(ids.map((id) => hooks.summaryOf("t1", id)));
    balanceReads = 0;
    assert.deepEqual(await hooks.summariesOf("t1", ids), each);
    assert.equal(balanceReads, 1, "the balances of every key in one read");
    assert.equal(each[2]?.credits?.remaining, 8, "the own balance read now");
    assert.equal(each[0]?.tenantCredits?.remaining, 4, "the pool read now");
  });
});
