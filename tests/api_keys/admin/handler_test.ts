/**
 * The admin routes' core: tenant binding, canManage and its containment, the
 * default no-escalation policy and a custom one, CSRF, bounded and validated
 * bodies, the presets, the optional rename and usage routes.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createApiKeysAdminHandler } from "../../../api_keys/admin/handler.ts";
import type {
  AdminAction,
  AdminTarget,
  ApiKeysAdminOptions,
} from "../../../api_keys/admin/types.ts";
import {
  type ApiKeyRecord,
  type ApiKeysServiceOptions,
  type ApiKeyStorage,
  ApiKeyStorageError,
  InMemoryApiKeyStorage,
} from "../../../api_keys/mod.ts";
import {
  API_KEY_USAGE_REFUSALS,
  type ApiKeyUsageKeysReadQuery,
  type ApiKeyUsageRefusalCode,
} from "../../../api_keys/metering/usage.ts";
import { makeService } from "../helpers.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../../rate_limits/memory_store.ts";
import { assertAdminReadsByLookups } from "./lookups.ts";
import { collectUnhandledRejections } from "../../reliability/harness.ts";

interface Caller {
  tenant: string | null;
  keyId?: string | null;
}

const CSRF = { "x-requested-with": "api-keys-manager" };
const HOUR = 3_600_000;
/** No refusal of any kind, as a usage row's `refused`. */
const NO_REFUSALS = Object.fromEntries(API_KEY_USAGE_REFUSALS.map((code) => [code, 0])) as Record<
  ApiKeyUsageRefusalCode,
  number
>;

/** A usage row of tenant acme's key `keyId`: `accepted` requests costing `cost` in the hour `bucket`. */
function usageRow(keyId: string, bucket: Date, accepted: number, cost: number) {
  return {
    keyId,
    tenantId: "acme",
    bucket,
    accepted,
    refused: NO_REFUSALS,
    cost,
    lastUsedAt: null,
  };
}

async function setup(
  overrides: Partial<ApiKeysAdminOptions<Caller>> = {},
  storage: ApiKeyStorage = new InMemoryApiKeyStorage(),
  serviceOptions: Partial<ApiKeysServiceOptions> = {},
) {
  const { service, clocks } = makeService({ storage, ...serviceOptions });
  const admin = await service.create({
    tenantId: "acme",
    name: "admin",
    scopes: [{ resource: "keys", level: "write" }, { resource: "projects", level: "write" }],
  });
  const reader = await service.create({
    tenantId: "acme",
    name: "reader",
    scopes: [{ resource: "projects", level: "read" }],
    environment: "test",
  });
  const billing = await service.create({
    tenantId: "acme",
    name: "billing",
    scopes: [{ resource: "billing", level: "read" }],
  });
  const foreign = await service.create({
    tenantId: "other",
    name: "theirs",
    scopes: [{ resource: "projects", level: "read" }],
  });
  const decisions: [AdminAction, AdminTarget][] = [];
  const errors: unknown[] = [];
  const handle = createApiKeysAdminHandler<Caller>({
    service,
    scopes: ["projects:read", "projects:write", { scope: "billing:read", description: "Bills" }],
    tenantOf: (caller) => caller.tenant,
    callerKeyIdOf: (caller) => caller.keyId,
    canManage: (_caller, action, target) => {
      decisions.push([action, target]);
      return true;
    },
    onError: (error) => errors.push(error),
    ...overrides,
  });
  const me: Caller = { tenant: "acme", keyId: admin.id };
  async function call(
    method: string,
    path: string,
    options: {
      body?: unknown;
      headers?: Record<string, string>;
      query?: Record<string, string>;
      caller?: Caller;
    } = {},
  ) {
    const headers: Record<string, string> = { ...CSRF, ...options.headers };
    const raw = options.body;
    const answer = await handle({
      method,
      path,
      query: (name) => options.query?.[name] ?? null,
      headers: (name) => headers[name.toLowerCase()] ?? null,
      body: raw === undefined ? null : typeof raw === "string" ? raw : JSON.stringify(raw),
    }, options.caller ?? me);
    if (answer === undefined) return undefined;
    return { ...answer, json: answer.body === "" ? undefined : JSON.parse(answer.body) };
  }
  return { service, clocks, handle, call, me, admin, reader, billing, foreign, decisions, errors };
}

/**
 * A storage whose reads by id fail (a driver error: a 503 through the
 * service) once `failAfterWrite` is set and a key was then written: the
 * write stored, its read-back refused.
 */
class ReadFailsAfterWrite extends InMemoryApiKeyStorage {
  failAfterWrite = false;
  failing = false;
  override async insert(...args: Parameters<InMemoryApiKeyStorage["insert"]>): Promise<void> {
    await super.insert(...args);
    this.failing = this.failAfterWrite;
  }
  override async rotateForTenant(
    ...args: Parameters<InMemoryApiKeyStorage["rotateForTenant"]>
  ): ReturnType<InMemoryApiKeyStorage["rotateForTenant"]> {
    const answer = await super.rotateForTenant(...args);
    this.failing = this.failAfterWrite;
    return answer;
  }
  override findManyByIds(tenantId: string, ids: readonly string[]): Promise<ApiKeyRecord[]> {
    if (this.failing) return Promise.reject(new Error("connection reset by peer"));
    return super.findManyByIds(tenantId, ids);
  }
}

/** Options of a handler on `service` with no policy (any caller may do anything). */
function openOptions(service: ApiKeysAdminOptions<unknown>["service"]) {
  return {
    service,
    scopes: ["projects:read"],
    tenantOf: () => "t",
    canManage: () => true,
    policy: () => null,
  };
}

/**
 * A call of tenant acme's handler on `service` offering `scopes`: of caller
 * key `callerKeyId` (the default policy), else with no policy. Answers the
 * parsed body too.
 */
function acmeCaller(
  service: ApiKeysAdminOptions<unknown>["service"],
  callerKeyId?: string,
  scopes: string[] = ["projects:read", "projects:write"],
) {
  const handle = createApiKeysAdminHandler<null>({
    ...openOptions(service),
    scopes,
    tenantOf: () => "acme",
    ...(callerKeyId === undefined ? {} : { policy: undefined, callerKeyIdOf: () => callerKeyId }),
  });
  return async (method: string, path: string, body?: unknown) => {
    const answer = (await handle({
      method,
      path,
      query: () => null,
      headers: (name) => CSRF[name.toLowerCase() as keyof typeof CSRF] ?? null,
      body: body === undefined ? null : JSON.stringify(body),
    }, null))!;
    return { ...answer, json: JSON.parse(answer.body) };
  };
}

/** A `keys:write` key limited to 3 requests a minute with 5 credits. */
function createLimitedAdmin(service: Awaited<ReturnType<typeof setup>>["service"]) {
  return service.create({
    tenantId: "acme",
    name: "limited admin",
    scopes: [{ resource: "keys", level: "write" }, { resource: "projects", level: "write" }],
    rateLimits: [{ name: "minute", limit: 3, windowMs: 60_000 }],
    credits: { remaining: 5 },
  });
}

/** A keys:write key of acme spending only the tenant's pool (3 credits, refilled daily). */
function createPooledAdmin(service: Awaited<ReturnType<typeof setup>>["service"]) {
  return service.create({
    tenantId: "acme",
    name: "pooled admin",
    scopes: [{ resource: "keys", level: "write" }, { resource: "projects", level: "write" }],
    credits: { remaining: 3, refill: { amount: 3, interval: "daily" }, sharedBy: "tenant" },
  });
}

/** A service whose limiter and clock read `at()`. */
function limitedService(at: () => number): Partial<ApiKeysServiceOptions> {
  const store = createMemoryRateLimitStore({ now: at });
  return { limiter: createRateLimiter({ store, logger: () => {} }), clock: () => new Date(at()) };
}

describe("createApiKeysAdminHandler", () => {
  it("config: the scopes and environments the caller may grant, presets, capabilities, CSRF header, what it may do", async () => {
    const { call } = await setup();
    const answer = (await call("GET", "/config"))!;
    assert.equal(answer.status, 200);
    assert.equal(answer.headers["cache-control"], "no-store");
    assert.deepEqual(answer.json, {
      // billing:read is offered, but the caller's key does not hold it.
      scopes: [{ scope: "projects:read" }, { scope: "projects:write" }],
      environments: ["live", "test"],
      gracePresets: ["none", "1h", "24h", "7d"],
      defaultGrace: "24h",
      expiryPresets: ["7d", "30d", "90d", "1y", "never"],
      defaultExpiry: "never",
      capabilities: { rename: true, conditionalRename: true, usage: false },
      csrf: { header: "x-requested-with", value: "api-keys-manager" },
      // No audit option on this service: GET /audit would answer 501.
      can: { create: true, rename: true, rotate: true, revoke: true, audit: false },
      limits: null,
    });
  });

  it("list: the caller's tenant only, public fields only", async () => {
    const { call, foreign, admin } = await setup();
    const answer = (await call("GET", "/keys"))!;
    assert.equal(answer.status, 200);
    const ids = answer.json.keys.map((key: { id: string }) => key.id);
    assert.equal(ids.length, 3);
    assert.ok(ids.includes(admin.id) && !ids.includes(foreign.id));
    assert.deepEqual(Object.keys(answer.json.keys[0]).sort(), [
      "allowedIpCidrs",
      "createdAt",
      "createdBy",
      "environment",
      "expiresAt",
      "id",
      "lastUsedAt",
      "name",
      "prefix",
      "replacedByKeyId",
      "replacesKeyId",
      "revokedAt",
      "rotatedAt",
      "scopes",
      "status",
    ]);
    assert.equal(answer.json.nextCursor, null);
    assert.ok(!answer.body.includes(admin.key.slice(-20)), "no secret in the list");
  });

  it("reads by lookups: GET /keys, read, rename, revoke and rotate never list the tenant; without the lookups, the same answers", async () => {
    await assertAdminReadsByLookups(new InMemoryApiKeyStorage());
  });

  it("list: a key with credits shows its balance and next refill", async () => {
    const at = Date.parse("2030-01-01T10:00:00.000Z");
    const store = createMemoryRateLimitStore({ now: () => at });
    const limiter = createRateLimiter({ store, logger: () => {} });
    const { call, service } = await setup({}, undefined, { limiter, clock: () => new Date(at) });
    const { id, key } = await service.create({
      tenantId: "acme",
      name: "trial",
      scopes: [{ resource: "projects", level: "read" }],
      credits: { remaining: 20, refill: { amount: 20, interval: "daily" } },
    });
    await service.authorize(key);
    const listed = (await call("GET", "/keys"))!.json.keys;
    const trial = listed.find((k: { id: string }) => k.id === id);
    assert.equal(trial.credits, 19);
    assert.equal(trial.creditsNextRefillAt, "2030-01-02T00:00:00.000Z");
    const other = listed.find((k: { id: string }) => k.id !== id);
    assert.ok(!("credits" in other) && !("creditsNextRefillAt" in other));
  });

  it("create: 201 with the secret once; the list never shows it", async () => {
    const { call, service, clocks } = await setup();
    const answer = (await call("POST", "/keys", {
      body: { name: "ci", scopes: ["projects:read"], environment: "test", expiresIn: "30d" },
    }))!;
    assert.equal(answer.status, 201);
    const { key, record } = answer.json;
    assert.equal((await service.verify(key)).keyId, record.id);
    assert.equal(record.environment, "test");
    assert.equal(Date.parse(record.expiresAt), clocks.now + 30 * 24 * HOUR);
    const list = (await call("GET", "/keys"))!;
    assert.ok(list.json.keys.some((k: { id: string }) => k.id === record.id));
    assert.ok(!list.body.includes(key));
  });

  it("scopes of the service's rule: capitals, '/', a 100-character resource offered, created and authorized exactly", async () => {
    const long = "R".repeat(100);
    const offered = [
      "Orders:read",
      "billing/invoices:write",
      "v2.Reports-x_1:read",
      `${long}:read`,
    ];
    const { service } = makeService();
    const admin = await service.create({
      tenantId: "acme",
      name: "admin",
      scopes: [
        { resource: "Orders", level: "write" },
        { resource: "billing/invoices", level: "write" },
        { resource: "v2.Reports-x_1", level: "read" },
        { resource: long, level: "read" },
      ],
    });
    const call = acmeCaller(service, admin.id, offered);
    const config = await call("GET", "/config");
    assert.equal(config.status, 200, config.body);
    assert.deepEqual(config.json.scopes, offered.map((scope) => ({ scope })));
    const created = await call("POST", "/keys", { name: "migrated", scopes: offered });
    assert.equal(created.status, 201, created.body);
    assert.deepEqual(created.json.record.scopes, offered);
    const { key } = created.json;
    for (
      const [resource, level] of [["Orders", "read"], ["billing/invoices", "write"], [
        long,
        "read",
      ]] as const
    ) {
      await service.authorize(key, { requiredScope: { resource, level } });
    }
    for (
      const [resource, level] of [["orders", "read"], ["Orders", "write"], [
        "billing",
        "read",
      ]] as const
    ) {
      const error = await service.authorize(key, { requiredScope: { resource, level } }).then(
        () => undefined,
        (error) => error,
      );
      assert.equal(error?.code, "api_key_scope_insufficient", `${resource}:${level}`);
    }
  });

  it("options.scopes: the service's resource rule (1-128 of [A-Za-z0-9._/-]) and a read or write level", () => {
    const { service } = makeService();
    const base = openOptions(service);
    const longest = "R".repeat(128);
    const handle = createApiKeysAdminHandler({
      ...base,
      scopes: [`${longest}:write`, "_a/B.c-1:read"],
    });
    assert.equal(typeof handle, "function");
    for (
      const scope of [
        `${"R".repeat(129)}:read`,
        ":read",
        "a:b:read",
        "a b:read",
        "a\tb:read",
        "ä:read",
        "orders",
        "orders:admin",
        "orders:Read",
        "orders:read ",
      ]
    ) {
      assert.throws(
        () => createApiKeysAdminHandler({ ...base, scopes: [scope] }),
        /options\.scopes: each must be a resource:level scope/,
        JSON.stringify(scope),
      );
    }
  });

  it("create: expiresAt, an ISO 8601 instant with its offset, instead of a preset", async () => {
    const { call } = await setup();
    for (
      const [expiresAt, expected] of [
        ["2030-02-01T12:30:00Z", "2030-02-01T12:30:00.000Z"],
        ["2030-02-01T12:30:00.250+02:00", "2030-02-01T10:30:00.250Z"],
        ["2030-02-01T12:30-05:30", "2030-02-01T18:00:00.000Z"],
      ]
    ) {
      const answer = (await call("POST", "/keys", {
        body: { name: "dated", scopes: ["projects:read"], expiresAt },
      }))!;
      assert.equal(answer.status, 201, expiresAt);
      assert.equal(answer.json.record.expiresAt, expected);
    }
  });

  it("create: expiresAt strictly parsed, in the future, within the TTL policy, never with expiresIn", async () => {
    const { call } = await setup({}, undefined, {
      ttlPolicy: { maxExpiresInMs: 90 * 24 * HOUR, allowNeverExpires: true },
    });
    const base = { name: "x", scopes: ["projects:read"] };
    for (
      const expiresAt of [
        "2030-02-01",
        "2030-02-01T00:00:00",
        "2030-02-30T00:00:00Z",
        "2030-13-01T00:00:00Z",
        "2030-02-01T24:00:00Z",
        "2030-02-01T00:00:00+25:00",
        "2030-02-01 00:00:00Z",
        "Feb 1 2030",
        " 2030-02-01T00:00:00Z",
        "+002030-02-01T00:00:00Z",
        1896134400000,
        null,
        "",
      ]
    ) {
      const answer = (await call("POST", "/keys", { body: { ...base, expiresAt } }))!;
      assert.equal(answer.status, 400, String(expiresAt));
      assert.equal(answer.json.error.code, "api_key_invalid_input", String(expiresAt));
      assert.equal(answer.json.error.details.field, "expiresAt");
    }
    const both = (await call("POST", "/keys", {
      body: { ...base, expiresIn: "7d", expiresAt: "2030-01-05T00:00:00Z" },
    }))!;
    assert.equal(both.status, 400);
    assert.equal(both.json.error.code, "api_key_invalid_input");
    assert.equal(both.json.error.details.field, "expiresAt");
    for (
      const expiresAt of ["2029-12-31T23:59:59Z", "2030-01-01T00:00:00Z", "2030-06-01T00:00:00Z"]
    ) {
      const answer = (await call("POST", "/keys", { body: { ...base, expiresAt } }))!;
      assert.equal(answer.status, 400, expiresAt);
      assert.equal(answer.json.error.details.field, "expiresAt", expiresAt);
    }
    const within = (await call("POST", "/keys", {
      body: { ...base, expiresAt: "2030-03-01T00:00:00Z" },
    }))!;
    assert.equal(within.status, 201);
  });

  it("create: expiresAt past the caller's own expiry is an escalation", async () => {
    const { call, service } = await setup();
    const narrow = await service.create({
      tenantId: "acme",
      name: "narrow",
      scopes: [{ resource: "projects", level: "write" }],
      expiresAt: new Date(Date.parse("2030-01-08T00:00:00Z")),
    });
    const caller = { tenant: "acme", keyId: narrow.id };
    const body = { name: "x", scopes: ["projects:read"] };
    const ok = (await call("POST", "/keys", {
      body: { ...body, expiresAt: "2030-01-07T23:00:00Z" },
      caller,
    }))!;
    assert.equal(ok.status, 201);
    const later = (await call("POST", "/keys", {
      body: { ...body, expiresAt: "2030-01-08T00:00:01Z" },
      caller,
    }))!;
    assert.equal(later.status, 403);
    assert.equal(later.json.error.code, "api_key_escalation_refused");
    assert.deepEqual(later.json.error.details.exceeds, { expiresAt: ["2030-01-08T00:00:01.000Z"] });
  });

  it("create: refuses an unoffered scope (400) and a scope the caller lacks (403)", async () => {
    const { call } = await setup();
    const unoffered =
      (await call("POST", "/keys", { body: { name: "x", scopes: ["keys:write"] } }))!;
    assert.equal(unoffered.status, 400);
    assert.equal(unoffered.json.error.code, "api_key_invalid_input");
    assert.equal(unoffered.json.error.details.field, "scopes");
    const escalation =
      (await call("POST", "/keys", { body: { name: "x", scopes: ["billing:read"] } }))!;
    assert.equal(escalation.status, 403);
    assert.equal(escalation.json.error.code, "api_key_escalation_refused");
    assert.deepEqual(escalation.json.error.details, {
      key: "new",
      exceeds: { scopes: ["billing:read"] },
    });
  });

  it("the default policy compares with the caller's own key: environment, allowlist, expiry", async () => {
    const { call, service } = await setup();
    const narrow = await service.create({
      tenantId: "acme",
      name: "narrow",
      scopes: [{ resource: "projects", level: "write" }],
      environment: "test",
      allowedIpCidrs: ["10.0.0.0/8"],
      expiresAt: new Date(Date.parse("2030-01-08T00:00:00Z")),
    });
    const caller = { tenant: "acme", keyId: narrow.id };
    const body = {
      name: "x",
      scopes: ["projects:read"],
      environment: "test",
      allowedIpCidrs: ["10.1.0.0/16"],
      expiresIn: "7d",
    };
    const ok = (await call("POST", "/keys", { body, caller }))!;
    assert.equal(ok.status, 201);
    for (
      const [change, exceeds] of [
        [{ environment: "live" }, "environment"],
        [{ allowedIpCidrs: [] }, "allowedIpCidrs"],
        [{ expiresIn: "30d" }, "expiresAt"],
      ] as const
    ) {
      const answer = (await call("POST", "/keys", { body: { ...body, ...change }, caller }))!;
      assert.equal(answer.status, 403, exceeds);
      assert.deepEqual(Object.keys(answer.json.error.details.exceeds), [exceeds]);
    }
  });

  it("the default policy: a caller without a key of the tenant is refused", async () => {
    const { call, foreign } = await setup();
    for (const keyId of [null, foreign.id, "no-such-key"]) {
      const answer = (await call("POST", "/keys", {
        body: { name: "x", scopes: ["projects:read"] },
        caller: { tenant: "acme", keyId },
      }))!;
      assert.equal(answer.status, 403);
      assert.deepEqual(answer.json.error.details, { key: "caller" });
    }
  });

  it("a caller key revoked or expired (a request verified before, an instance not told yet) has no powers: create, rotate, rename and revoke are refused, under a custom policy too", async () => {
    for (const custom of [false, true]) {
      const { call, service, admin, reader, clocks } = await setup(
        custom ? { policy: () => null } : {},
      );
      const expiring = await service.create({
        tenantId: "acme",
        name: "expiring admin",
        scopes: [{ resource: "keys", level: "write" }, { resource: "projects", level: "write" }],
        expiresAt: new Date(clocks.now + 60_000),
      });
      await service.revoke(admin.id);
      const routes = [
        ["POST", "/keys", { name: "minted", scopes: ["projects:read"] }],
        ["POST", `/keys/${reader.id}/rotate`, {}],
        ["PATCH", `/keys/${reader.id}`, { name: "renamed" }],
        ["DELETE", `/keys/${reader.id}`, undefined],
      ] as const;
      const expect = async (keyId: string, why: string) => {
        for (const [method, path, body] of routes) {
          const answer = (await call(method, path, { body, caller: { tenant: "acme", keyId } }))!;
          assert.equal(answer.status, 403, `${why}: ${method} ${path}`);
          assert.deepEqual(answer.json.error.details, { key: "caller" });
        }
      };
      await expect(admin.id, "revoked");
      clocks.advance(60_001);
      await expect(expiring.id, "expired");
      const keys = await service.list("acme");
      assert.ok(keys.every((key) => key.name !== "minted"), "nothing minted");
      assert.equal(keys.find((key) => key.id === reader.id)!.name, "reader", "not renamed");
      assert.equal(keys.find((key) => key.id === reader.id)!.revokedAt, null, "not revoked");
      assert.equal((await service.verify(reader.key)).keyId, reader.id, "not rotated");
    }
  });

  it("rotate, rename, revoke: a target more powerful than the caller is refused", async () => {
    const { call, billing, service } = await setup();
    for (
      const [method, path, body] of [
        ["POST", `/keys/${billing.id}/rotate`, {}],
        ["PATCH", `/keys/${billing.id}`, { name: "mine now" }],
        ["DELETE", `/keys/${billing.id}`, undefined],
      ] as const
    ) {
      const answer = (await call(method, path, { body }))!;
      assert.equal(answer.status, 403, `${method} ${path}`);
      assert.equal(answer.json.error.details.key, "target");
    }
    assert.equal((await service.verify(billing.key)).keyId, billing.id, "still usable");
  });

  it("tenant binding: another tenant's id answers exactly like an unknown id", async () => {
    const { call, foreign, service } = await setup();
    const routes = (id: string) =>
      [
        ["GET", `/keys/${id}`, undefined],
        ["PATCH", `/keys/${id}`, { name: "taken" }],
        ["DELETE", `/keys/${id}`, undefined],
        ["POST", `/keys/${id}/rotate`, {}],
      ] as const;
    for (const [i, [method, path, body]] of routes(foreign.id).entries()) {
      const theirs = (await call(method, path, { body }))!;
      const [, unknownPath, unknownBody] = routes("no-such-id")[i];
      const unknown = (await call(method, unknownPath, { body: unknownBody }))!;
      assert.equal(theirs.status, 404, `${method} ${path}`);
      assert.deepEqual(theirs.json, unknown.json);
    }
    const still = await service.verify(foreign.key);
    assert.equal(still.tenantId, "other");
    const [record] = await service.listSummaries("other");
    assert.equal(record.name, "theirs");
  });

  it("the tenant never comes from the body: a tenantId field is refused", async () => {
    const { call } = await setup();
    const answer = (await call("POST", "/keys", {
      body: { name: "x", scopes: ["projects:read"], tenantId: "other" },
    }))!;
    assert.equal(answer.status, 400);
    assert.match(answer.json.error.message, /unknown fields: tenantId/);
  });

  it("tenantOf: null answers 401, a throw 500 with the error to onError", async () => {
    const { call, errors } = await setup({
      tenantOf: (caller) => {
        if (caller.tenant === "boom") throw new Error("session store down");
        return caller.tenant;
      },
    });
    assert.equal((await call("GET", "/keys", { caller: { tenant: null } }))!.status, 401);
    const failed = (await call("GET", "/keys", { caller: { tenant: "boom" } }))!;
    assert.equal(failed.status, 500);
    assert.equal(failed.json.error.code, "internal_error");
    assert.ok(!failed.body.includes("session store"));
    assert.equal((errors[0] as Error).message, "session store down");
  });

  it("tenantOf answering a tenant id no key may have (blank, NUL, a line separator, too long): 500 on every route, a TypeError to onError naming the hook, never 200 nor a 400 on tenantId", async () => {
    for (const tenant of ["   ", "a\u0000b", "a\u2028b", "t".repeat(100_000)]) {
      const { call, errors } = await setup();
      for (
        const [method, path, body] of [
          ["GET", "/config"],
          ["GET", "/keys"],
          ["POST", "/keys", { name: "x", scopes: ["projects:read"] }],
          ["DELETE", "/keys/x"],
        ] as const
      ) {
        const answer = (await call(method, path, { caller: { tenant }, body }))!;
        assert.equal(answer.status, 500, `${method} ${path} ${JSON.stringify(tenant.slice(0, 8))}`);
        assert.equal(answer.json.error.code, "internal_error");
      }
      assert.equal(errors.length, 4);
      assert.ok(errors.every((e) => e instanceof TypeError && /options\.tenantOf/.test(e.message)));
    }
  });

  it("a route the service cannot serve (501) is said only to a caller past the CSRF check and tenantOf", async () => {
    const bare = await setup({ tenantOf: () => null }); // no usage, no audit on this service
    for (const path of ["/audit", "/usage"]) {
      const answer = (await bare.call("GET", path, { query: { keys: "x" } }))!;
      assert.equal(answer.status, 401, path);
    }
  });

  it("canManage is called for every action with the target; false → 403, a throw or rejection → 500", async () => {
    const { call, decisions, reader } = await setup();
    await call("GET", "/config");
    await call("GET", "/keys");
    await call("GET", `/keys/${reader.id}`);
    await call("PATCH", `/keys/${reader.id}`, { body: { name: "renamed" } });
    await call("POST", "/keys", { body: { name: "x", scopes: ["projects:read"] } });
    const rotated = (await call("POST", `/keys/${reader.id}/rotate`, { body: { grace: "1h" } }))!;
    await call("DELETE", `/keys/${rotated.json.record.id}`);
    assert.deepEqual(decisions.map(([action]) => action), [
      "config",
      // GET /config asks what the caller may do, with no key.
      "create",
      "rename",
      "rotate",
      "revoke",
      "audit",
      "list",
      "read",
      "rename",
      "create",
      "rotate",
      "revoke",
    ]);
    assert.ok(decisions.slice(0, 6).every(([, target]) => target.key === null));
    assert.equal(decisions[7][1].key!.id, reader.id);
    assert.deepEqual(decisions[9][1].proposed!.scopes, ["projects:read"]);
    for (
      const verdict of [
        () => false,
        () => "yes" as unknown as boolean,
        () => {
          throw new Error("policy db down");
        },
        () => Promise.reject(new Error("policy db down")),
      ]
    ) {
      const denied = await setup({ canManage: verdict });
      const answer = (await denied.call("DELETE", `/keys/${denied.reader.id}`))!;
      const errors = denied.errors;
      const thrown = errors.length > 0;
      assert.equal(answer.status, thrown ? 500 : 403);
      assert.equal(answer.json.error.code, thrown ? "internal_error" : "forbidden");
    }
  });

  it("CSRF: state-changing routes need the header and a same-site Sec-Fetch-Site", async () => {
    const { call } = await setup();
    const body = { name: "x", scopes: ["projects:read"] };
    const refused: Record<string, string>[] = [
      { "x-requested-with": "" },
      { "x-requested-with": "XMLHttpRequest" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
    ];
    for (const headers of refused) {
      const answer = (await call("POST", "/keys", { body, headers }))!;
      assert.equal(answer.status, 403, JSON.stringify(headers));
      assert.equal(answer.json.error.code, "csrf_refused");
    }
    for (const site of ["same-origin", "none"]) {
      const answer = (await call("POST", "/keys", { body, headers: { "sec-fetch-site": site } }))!;
      assert.equal(answer.status, 201);
    }
    const read = (await call("GET", "/keys", { headers: { "x-requested-with": "" } }))!;
    assert.equal(read.status, 200, "reads need no header");
    const custom = await setup({ csrf: { header: "X-CSRF", value: "1" } });
    assert.equal((await custom.call("POST", "/keys", { body }))!.status, 403);
    assert.equal(
      (await custom.call("POST", "/keys", { body, headers: { "x-csrf": "1" } }))!.status,
      201,
    );
    const off = await setup({ csrf: false });
    assert.equal(
      (await off.call("POST", "/keys", { body, headers: { "x-requested-with": "" } }))!.status,
      201,
    );
  });

  it("bodies: bounded, JSON objects of known own fields; unknown fields listed up to 10", async () => {
    const { call } = await setup({ maxBodyBytes: 1024 });
    const tooLarge = (await call("POST", "/keys", {
      body: { name: "x".repeat(2000), scopes: ["projects:read"] },
    }))!;
    assert.equal(tooLarge.status, 413);
    for (
      const body of ["{", "[]", "null", '"text"', new TextDecoder().decode(new Uint8Array([0xff]))]
    ) {
      const answer = (await call("POST", "/keys", { body }))!;
      assert.equal(answer.status, 400, body);
      assert.equal(answer.json.error.details.field, "body");
    }
    const proto = (await call("POST", "/keys", {
      body: '{"name":"x","scopes":["projects:read"],"__proto__":{"admin":true}}',
    }))!;
    assert.equal(proto.status, 400);
    assert.match(proto.json.error.message, /unknown fields: __proto__/);
    const many: Record<string, number> = { name: 1 };
    for (let i = 0; i < 30; i++) many[`f${i}${i === 0 ? "y".repeat(100) : ""}`] = i;
    const listed = (await call("POST", "/keys", { body: many }))!;
    assert.match(listed.json.error.message, /and 20 more \(known: name, /);
    assert.ok(listed.json.error.message.length < 1000);
    assert.ok(listed.json.error.message.includes("(a name of 102 characters), f1,"));
  });

  it("create validates each field", async () => {
    const { call } = await setup();
    for (
      const [body, field] of [
        [{ scopes: ["projects:read"] }, "name"],
        [{ name: "   ", scopes: ["projects:read"] }, "name"],
        [{ name: "x".repeat(201), scopes: ["projects:read"] }, "name"],
        [{ name: "x", scopes: [] }, "scopes"],
        [{ name: "x", scopes: "projects:read" }, "scopes"],
        [{ name: "x", scopes: ["projects:read"], environment: "prod" }, "environment"],
        [{ name: "x", scopes: ["projects:read"], expiresIn: "2d" }, "expiresIn"],
        [{ name: "x", scopes: ["projects:read"], allowedIpCidrs: ["300.1.1.1"] }, "allowedIpCidrs"],
        [{ name: "x", scopes: ["projects:read"], allowedIpCidrs: [1] }, "allowedIpCidrs"],
      ] as const
    ) {
      const answer = (await call("POST", "/keys", { body }))!;
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(answer.json.error.details.field, field);
    }
  });

  it("a name and q are up to 200 code points, as the OpenAPI document's maxLength counts: keys named 200 emoji are created, renamed, paged through by name_asc and searched", async () => {
    const { call } = await setup();
    const [lock, unlock, key] = ["\u{1F512}", "\u{1F513}", "\u{1F511}"].map((e) => e.repeat(200));
    const ids: string[] = [];
    for (const name of [lock, unlock, "x"]) {
      const created = (await call("POST", "/keys", { body: { name, scopes: ["projects:read"] } }))!;
      assert.equal(created.status, 201, created.body);
      ids.push(created.json.record.id);
    }
    const renamed = (await call("PATCH", `/keys/${ids[2]}`, { body: { name: key } }))!;
    assert.equal(renamed.status, 200, renamed.body);
    const tooLong = `${key}\u{1F511}`;
    const refused = (await call("POST", "/keys", { body: { name: tooLong, scopes: ["a"] } }))!;
    assert.equal(refused.json.error.details.field, "name");
    const names: string[] = [];
    let cursor = "";
    for (let n = 0; n < 10 && cursor !== null; n++) {
      const page =
        (await call("GET", "/keys", { query: { sort: "name_asc", limit: "1", cursor } }))!;
      assert.equal(page.status, 200, page.body);
      names.push(...page.json.keys.map((k: { name: string }) => k.name));
      cursor = page.json.nextCursor;
    }
    assert.equal(cursor, null);
    for (const name of [lock, unlock, key]) assert.ok(names.includes(name));
    const found = (await call("GET", "/keys", { query: { q: unlock } }))!;
    assert.deepEqual(found.json.keys.map((k: { id: string }) => k.id), [ids[1]]);
    assert.equal((await call("GET", "/keys", { query: { q: tooLong } }))!.status, 400);
  });

  it("create and rotate: a read-back failing after the write still answers 201 with the secret once and the record as written; the 503 to onError, no secret in it", async () => {
    const storage = new ReadFailsAfterWrite();
    const { call, service, errors, reader } = await setup({}, storage);
    storage.failAfterWrite = true;
    const created = (await call("POST", "/keys", {
      body: { name: "ci", scopes: ["projects:read"], environment: "test", expiresIn: "30d" },
    }))!;
    assert.equal(created.status, 201);
    const { key, record } = created.json;
    assert.equal((await service.verify(key)).keyId, record.id);
    assert.equal(record.name, "ci");
    assert.equal(record.environment, "test");
    assert.equal(record.status, "active");
    assert.deepEqual(record.scopes, ["projects:read"]);
    assert.ok(key.includes(record.prefix), "the record's prefix is the key's");
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof ApiKeyStorageError);
    assert.ok(!JSON.stringify(errors[0]).includes(key) && !String(errors[0]).includes(key));
    // No second key: the tenant lists the one key created, its secret never again.
    storage.failing = false;
    const list = (await call("GET", "/keys"))!;
    assert.equal(list.json.keys.filter((k: { name: string }) => k.name === "ci").length, 1);
    assert.ok(!list.body.includes(key));

    const rotated = (await call("POST", `/keys/${reader.id}/rotate`, { body: { grace: "1h" } }))!;
    assert.equal(rotated.status, 201);
    assert.equal(rotated.json.replacedKeyId, reader.id);
    assert.equal(rotated.json.record.replacesKeyId, reader.id);
    assert.equal(rotated.json.record.name, "reader");
    assert.equal((await service.verify(rotated.json.key)).keyId, rotated.json.record.id);
    assert.equal(errors.length, 2);
    assert.ok(!JSON.stringify(errors[1]).includes(rotated.json.key));
  });

  it("rotate: the storage failing at the new key's credit join write (its balance's rule changed meanwhile) still answers 201 with the secret; the failure to onError", async () => {
    const storage = new InMemoryApiKeyStorage();
    // Taken by the service when it is made: replaced before.
    const setCredits = storage.setCredits.bind(storage);
    let down = false;
    storage.setCredits = (...args) =>
      down ? Promise.reject(new Error("down")) : setCredits(...args);
    let release = () => {};
    const held = new Promise<void>((resolve) => release = resolve);
    const rotate = storage.rotateForTenant.bind(storage);
    storage.rotateForTenant = async (...args) => (await held, await rotate(...args));
    const { call, service, errors } = await setup({}, storage, limitedService(() => Date.now()));
    const metered = await service.create({
      tenantId: "acme",
      name: "metered",
      scopes: [{ resource: "projects", level: "read" }],
      credits: { remaining: 1_000, refill: { amount: 1_000, interval: "daily" } },
    });
    const warn = console.warn;
    console.warn = () => {}; // the service's own line (one per outage)
    try {
      const rotating = call("POST", `/keys/${metered.id}/rotate`, { body: { grace: "1h" } });
      await new Promise((resolve) => setTimeout(resolve, 10)); // it has read the balance's rule
      const monthly = { amount: 100, interval: "monthly" as const };
      await service.updateCredits("acme", metered.id, { set: 100, refill: monthly });
      down = true; // from the new key's join write on
      release();
      const rotated = (await rotating)!;
      down = false;
      assert.equal(rotated.status, 201);
      assert.equal((await service.verify(rotated.json.key)).keyId, rotated.json.record.id);
      assert.equal(errors.length, 1);
      assert.ok(errors[0] instanceof ApiKeyStorageError);
      assert.ok(!String(errors[0]).includes(rotated.json.key));
    } finally {
      console.warn = warn;
    }
  });

  it("storage failures: a 503 api_key_storage_unavailable, the error to onError; a throwing onError changes nothing", async () => {
    const storage = new ReadFailsAfterWrite();
    const handed: unknown[] = [];
    const { call } = await setup({
      onError: (error) => {
        handed.push(error);
        throw new Error("onError broke");
      },
    }, storage);
    storage.failing = true;
    const failed = (await call("GET", "/keys/whatever"))!;
    assert.equal(failed.status, 503);
    assert.equal(failed.json.error.code, "api_key_storage_unavailable");
    assert.ok(!failed.body.includes("connection reset"));
    assert.equal(handed.length, 1);
    assert.ok(handed[0] instanceof ApiKeyStorageError);
    assert.equal(((handed[0] as Error).cause as Error).message, "connection reset by peer");
  });

  it("the default onError logs one line per failure: the error's name and message, credentials and keys hidden, never its cause or stack", async () => {
    const error = console.error;
    const lines: string[] = [];
    console.error = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
    try {
      class Leaky extends InMemoryApiKeyStorage {
        override findManyByIds(): Promise<ApiKeyRecord[]> {
          return Promise.reject(
            new TypeError("Invalid URL: 'postgresql://app:s3cret PW@db:5432/app'"),
          );
        }
      }
      const { call } = await setup({ onError: undefined }, new Leaky());
      assert.equal((await call("GET", "/keys/whatever"))!.status, 503);
      const broken = await setup({
        onError: undefined,
        tenantOf: () => {
          throw new Error("session store postgresql://u:hunter2@sessions/x down");
        },
      });
      assert.equal((await broken.call("GET", "/keys"))!.status, 500);
      assert.deepEqual(lines, [
        "api-keys admin: ApiKeyStorageError: API key storage is unavailable",
        "api-keys admin: Error: session store postgresql://***@sessions/x down",
      ]);
    } finally {
      console.error = error;
    }
  });

  it("an async onError that rejects changes no answer and leaves no unhandled rejection", async () => {
    const storage = new ReadFailsAfterWrite();
    const handed: unknown[] = [];
    const onError = (error: unknown) => {
      handed.push(error);
      return Promise.reject(new Error("onError down"));
    };
    const rejections = collectUnhandledRejections();
    try {
      const { call } = await setup({ onError }, storage);
      storage.failing = true;
      const failed = (await call("GET", "/keys/whatever"))!;
      assert.equal(failed.status, 503);
      assert.equal(failed.json.error.code, "api_key_storage_unavailable");
      const broken = await setup({
        tenantOf: () => {
          throw new Error("session store down");
        },
        onError,
      });
      const hookFailed = (await broken.call("GET", "/keys"))!;
      assert.equal(hookFailed.status, 500);
      assert.equal(hookFailed.json.error.code, "internal_error");
    } finally {
      await rejections.stop();
    }
    assert.equal(handed.length, 2);
    assert.deepEqual(rejections.reasons, [], "an unhandled rejection escaped");
  });

  it("rotate: grace presets validated; the old key lasts the grace; 409 when not rotatable", async () => {
    const { call, reader, clocks, service } = await setup();
    const bad = (await call("POST", `/keys/${reader.id}/rotate`, { body: { grace: "2h" } }))!;
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.details.field, "grace");
    const answer = (await call("POST", `/keys/${reader.id}/rotate`, {
      body: { grace: "1h", name: "reader v2" },
    }))!;
    assert.equal(answer.status, 201);
    assert.equal(answer.json.replacedKeyId, reader.id);
    assert.equal(Date.parse(answer.json.graceExpiresAt), clocks.now + HOUR);
    assert.equal(answer.json.record.name, "reader v2");
    assert.deepEqual(answer.json.record.scopes, ["projects:read"]);
    assert.equal((await service.verify(answer.json.key)).keyId, answer.json.record.id);
    const again = (await call("POST", `/keys/${reader.id}/rotate`, {}))!;
    assert.equal(again.status, 409);
    assert.equal(again.json.error.code, "api_key_not_rotatable");
    const limited = await setup({ gracePresets: ["none"] });
    const none = (await limited.call("POST", `/keys/${limited.reader.id}/rotate`))!;
    assert.equal(Date.parse(none.json.graceExpiresAt), limited.clocks.now);
  });

  it("rotate under a TTL policy tightened since the key was made: its expiry kept as the service keeps it (at most now + maxExpiresInMs), never a 400 on a field the body lacks", async () => {
    const DAY = 24 * HOUR;
    const storage = new InMemoryApiKeyStorage();
    // Keys made before the policy (or imported: the TTL policy does not apply to imports).
    const before = makeService({ storage }).service;
    const made = (name: string, expiresAt: Date | null) =>
      before.create({
        tenantId: "acme",
        name,
        scopes: [{ resource: "projects", level: "read" }],
        expiresAt,
      });
    for (
      const [ttlPolicy, neverKept] of [
        [{ defaultExpiresInMs: 30 * DAY, maxExpiresInMs: 90 * DAY }, false],
        [{ defaultExpiresInMs: 30 * DAY, allowNeverExpires: true }, true],
      ] as const
    ) {
      const { call, clocks } = await setup({ policy: () => null }, storage, { ttlPolicy });
      const long = new Date(clocks.now + 365 * DAY);
      const kept = ttlPolicy.maxExpiresInMs === undefined
        ? long
        : new Date(clocks.now + ttlPolicy.maxExpiresInMs);
      for (const [old, expected] of [[long, kept], [null, neverKept ? null : "default"]] as const) {
        const key = await made(`old ${old?.toISOString() ?? "never"}`, old);
        const answer = (await call("POST", `/keys/${key.id}/rotate`, { body: { grace: "none" } }))!;
        assert.equal(answer.status, 201, `${JSON.stringify(ttlPolicy)} ${old}: ${answer.body}`);
        assert.equal(
          answer.json.record.expiresAt,
          expected === "default"
            ? new Date(clocks.now + 30 * DAY).toISOString()
            : expected?.toISOString() ?? null,
          `${JSON.stringify(ttlPolicy)}, old expiry ${old}`,
        );
      }
    }
  });

  it("rotate of a key without expiry under ttlPolicy { maxExpiresInMs } alone (no default, none allowed): 201, the new key expires at now + maxExpiresInMs", async () => {
    const DAY = 24 * HOUR;
    const storage = new InMemoryApiKeyStorage();
    // Keys made before the policy: none expires.
    const before = makeService({ storage }).service;
    const made = (name: string) =>
      before.create({
        tenantId: "acme",
        name,
        scopes: [{ resource: "keys", level: "write" }, { resource: "projects", level: "write" }],
      });
    const admin = await made("admin");
    const legacy = await made("legacy");
    const { service, clocks } = makeService({ storage, ttlPolicy: { maxExpiresInMs: 365 * DAY } });
    const call = acmeCaller(service, admin.id);
    const answer = await call("POST", `/keys/${legacy.id}/rotate`, { grace: "24h" });
    assert.equal(answer.status, 201, answer.body);
    const rotated = answer.json;
    assert.equal(rotated.record.expiresAt, new Date(clocks.now + 365 * DAY).toISOString());
    assert.equal(rotated.graceExpiresAt, new Date(clocks.now + DAY).toISOString());
    // service.rotate alike, without an expiresAt.
    const again = await service.rotate(admin.id, { gracePeriodMs: 0 });
    const successor = (await service.list("acme")).find((key) => key.id === again.id);
    assert.equal(successor?.expiresAt?.getTime(), clocks.now + 365 * DAY);
  });

  it("expiry presets follow the TTL policy: refused ones are not offered, the default is the policy's", async () => {
    const DAY = 24 * HOUR;
    for (
      const [ttlPolicy, presets, defaultExpiry] of [
        [undefined, ["7d", "30d", "90d", "1y", "never"], "never"],
        [
          { defaultExpiresInMs: 90 * DAY, maxExpiresInMs: 365 * DAY },
          ["7d", "30d", "90d", "1y"],
          "90d",
        ],
        [{ defaultExpiresInMs: 90 * DAY, maxExpiresInMs: 100 * DAY }, ["7d", "30d", "90d"], "90d"],
        [{ maxExpiresInMs: 365 * DAY }, ["7d", "30d", "90d", "1y"], "7d"],
        [{ defaultExpiresInMs: 30 * DAY, allowNeverExpires: true }, [
          "7d",
          "30d",
          "90d",
          "1y",
          "never",
        ], "30d"],
        [{ defaultExpiresInMs: 10 * DAY }, ["7d", "30d", "90d", "1y"], "7d"],
      ] as const
    ) {
      const { service, clocks } = makeService({ ttlPolicy });
      const call = acmeCaller(service);
      const label = JSON.stringify(ttlPolicy);
      const config = (await call("GET", "/config")).json;
      assert.deepEqual(
        [config.expiryPresets, config.defaultExpiry],
        [presets, defaultExpiry],
        label,
      );
      // The dialog's default works.
      const created = (await call("POST", "/keys", { name: "n", scopes: ["projects:read"] })).json;
      const lifetime =
        { "7d": 7 * DAY, "30d": 30 * DAY, "90d": 90 * DAY, never: null }[defaultExpiry];
      assert.equal(
        created.record?.expiresAt,
        lifetime === null ? null : new Date(clocks.now + lifetime).toISOString(),
        label,
      );
    }
  });

  it("expiry presets the TTL policy refuses, listed or named as the default: a TypeError naming them at construction", () => {
    const DAY = 24 * HOUR;
    const { service } = makeService({
      ttlPolicy: { defaultExpiresInMs: 30 * DAY, maxExpiresInMs: 90 * DAY },
    });
    const base = openOptions(service);
    for (
      const [options, named] of [
        [{ expiryPresets: ["30d", "1y"] }, /1y/],
        [{ expiryPresets: ["never", "30d"] }, /never/],
        [{ defaultExpiry: "never" }, /never/],
        [{ defaultExpiry: "1y" }, /1y/],
      ] as const
    ) {
      assert.throws(
        () => createApiKeysAdminHandler({ ...base, ...options } as ApiKeysAdminOptions<unknown>),
        (error: unknown) =>
          error instanceof TypeError && named.test(error.message) &&
          /ttlPolicy/.test(error.message),
        JSON.stringify(options),
      );
    }
    // No preset fits a policy whose maximum is under 7 days.
    const { service: short } = makeService({ ttlPolicy: { maxExpiresInMs: DAY } });
    assert.throws(
      () => createApiKeysAdminHandler({ ...base, service: short } as ApiKeysAdminOptions<unknown>),
      /ttlPolicy/,
    );
  });

  it("rotate and rename read their body before the key: a bad or too large body answers 400 or 413 for an unknown or another tenant's id too, as for the caller's", async () => {
    const { call, reader, foreign } = await setup({ maxBodyBytes: 1024 });
    for (const id of [reader.id, foreign.id, "unknown"]) {
      for (
        const [method, path, body, status, field] of [
          ["POST", `/keys/${id}/rotate`, "{bad", 400, "body"],
          ["POST", `/keys/${id}/rotate`, { grace: "x".repeat(2000) }, 413, undefined],
          ["POST", `/keys/${id}/rotate`, { grace: "2h" }, 400, "grace"],
          ["POST", `/keys/${id}/rotate`, { name: "   " }, 400, "name"],
          ["POST", `/keys/${id}/rotate`, { expiresAt: null }, 400, "body"],
          ["PATCH", `/keys/${id}`, "{bad", 400, "body"],
          ["PATCH", `/keys/${id}`, { name: "x".repeat(2000) }, 413, undefined],
          ["PATCH", `/keys/${id}`, { name: 7 }, 400, "name"],
          ["PATCH", `/keys/${id}`, { name: "deploy \ud83d" }, 400, "name"],
          ["POST", `/keys/${id}/rotate`, { name: "a\udc00" }, 400, "name"],
          ["PATCH", `/keys/${id}`, {}, 400, "name"],
        ] as const
      ) {
        const answer = (await call(method, path, { body }))!;
        const label = `${method} ${path} ${JSON.stringify(body).slice(0, 40)}`;
        assert.equal(answer.status, status, `${label}: ${answer.body}`);
        assert.equal(answer.json.error.details?.field, field, label);
      }
    }
  });

  it("GET /audit: an empty query value reads as absent (cursor=, keyId=, actor=, action=, from=, to=, limit=), as GET /keys and the usage routes read theirs", async () => {
    const info = console.info;
    console.info = () => {};
    const { call } = await setup({}, undefined, {
      audit: { checkpointKey: "an-audit-key-of-at-least-thirty-two-bytes" },
    });
    console.info = info;
    assert.equal(
      (await call("POST", "/keys", { body: { name: "n", scopes: ["projects:read"] } }))!.status,
      201,
    );
    const all = (await call("GET", "/audit"))!;
    assert.equal(all.status, 200);
    // The tenant's keys of setup() and the one created: four records, none filtered out.
    assert.equal(all.json.records.length, 4);
    const names = ["cursor", "keyId", "actor", "action", "from", "to", "limit"];
    for (const query of [...names.map((name) => [name]), names]) {
      const empty = (await call("GET", "/audit", {
        query: Object.fromEntries(query.map((name) => [name, ""])),
      }))!;
      assert.equal(empty.status, 200, `${query}: ${empty.body}`);
      assert.deepEqual(empty.json, all.json, `${query}`);
    }
  });

  it("revoke: idempotent, answers the revoked view", async () => {
    const { call, reader, service } = await setup();
    for (let i = 0; i < 2; i++) {
      const answer = (await call("DELETE", `/keys/${reader.id}`))!;
      assert.equal(answer.status, 200);
      assert.equal(answer.json.status, "revoked");
    }
    await assert.rejects(service.verify(reader.key), { code: "api_key_revoked" });
  });

  it("rename: 200 with the new name; 501 and capabilities.rename false without the capability", async () => {
    const { call, reader } = await setup();
    const answer = (await call("PATCH", `/keys/${reader.id}`, { body: { name: "ci reader" } }))!;
    assert.equal(answer.status, 200);
    assert.equal(answer.json.name, "ci reader");
    const memory = new InMemoryApiKeyStorage();
    const without = new Proxy(memory, {
      get: (target, property) => {
        const value = Reflect.get(target, property, target);
        if (property === "renameForTenant") return undefined;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const bare = await setup({}, without);
    const refused = (await bare.call("PATCH", `/keys/${bare.reader.id}`, { body: { name: "y" } }))!;
    assert.equal(refused.status, 501);
    assert.equal(refused.json.error.code, "not_implemented");
    assert.deepEqual((await bare.call("GET", "/keys"))!.json.capabilities, {
      rename: false,
      conditionalRename: false,
      usage: false,
    });
  });

  it("rename with expectedName: renames only while the key has that name, else 409 api_key_name_changed", async () => {
    const { call, reader, foreign, service } = await setup();
    const path = `/keys/${reader.id}`;
    const renamed =
      (await call("PATCH", path, { body: { name: "tab 1", expectedName: "reader" } }))!;
    assert.equal(renamed.status, 200, renamed.body);
    assert.equal(renamed.json.name, "tab 1");
    // The second tab still shows "reader": refused, the first tab's name kept.
    const stale = (await call("PATCH", path, { body: { name: "tab 2", expectedName: "reader" } }))!;
    assert.equal(stale.status, 409);
    assert.equal(stale.headers["cache-control"], "no-store");
    assert.equal(stale.json.error.code, "api_key_name_changed");
    assert.ok(!stale.body.includes("tab 1"), "the answer does not say the current name");
    assert.equal(
      (await service.listSummaries("acme")).find((k) => k.id === reader.id)!.name,
      "tab 1",
    );
    // null or omitted: no precondition, as before.
    for (const body of [{ name: "tab 3", expectedName: null }, { name: "tab 4" }]) {
      assert.equal((await call("PATCH", path, { body }))!.status, 200);
    }
    // Another tenant's key: 404 as an unknown id, whatever expectedName says.
    for (const expectedName of ["theirs", "not theirs"]) {
      const theirs = (await call("PATCH", `/keys/${foreign.id}`, {
        body: { name: "mine", expectedName },
      }))!;
      assert.equal(theirs.status, 404);
      assert.equal(theirs.json.error.code, "api_key_record_not_found");
    }
    assert.equal((await service.listSummaries("other"))[0].name, "theirs");
    // Checked as name is.
    for (const expectedName of ["", "   ", "x".repeat(201), 7]) {
      const bad = (await call("PATCH", path, { body: { name: "y", expectedName } }))!;
      assert.equal(bad.status, 400);
      assert.equal(bad.json.error.details.field, "expectedName");
    }
  });

  it("rename with expectedName without replaceNameForTenant: 501 before the key is read, capabilities.conditionalRename false", async () => {
    const memory = new InMemoryApiKeyStorage();
    const without = new Proxy(memory, {
      get: (target, property) => {
        const value = Reflect.get(target, property, target);
        if (property === "replaceNameForTenant") return undefined;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const { call, reader, foreign } = await setup({}, without);
    assert.deepEqual((await call("GET", "/config"))!.json.capabilities, {
      rename: true,
      conditionalRename: false,
      usage: false,
    });
    for (const id of [reader.id, foreign.id, "unknown"]) {
      const refused = (await call("PATCH", `/keys/${id}`, {
        body: { name: "y", expectedName: "reader" },
      }))!;
      assert.equal(refused.status, 501, id);
      assert.equal(refused.json.error.code, "not_implemented");
    }
    // Without expectedName, renames as before.
    const plain = (await call("PATCH", `/keys/${reader.id}`, { body: { name: "y" } }))!;
    assert.equal(plain.status, 200);
    assert.equal(plain.json.name, "y");
  });

  it("usage: 501 unless the service records usage; with it, the tenant-bound call and a bounded span", async () => {
    const { call, reader } = await setup();
    assert.equal((await call("GET", `/keys/${reader.id}/usage`))!.status, 501);
    const seen: ApiKeyUsageKeysReadQuery[] = [];
    class Spied extends InMemoryApiKeyStorage {
      override readUsageOfKeys(query: ApiKeyUsageKeysReadQuery) {
        seen.push(query);
        return super.readUsageOfKeys(query);
      }
    }
    const storage = new Spied();
    const withUsage = await setup({}, storage, { usage: true });
    const hour = new Date(Math.floor(withUsage.clocks.now / HOUR) * HOUR - HOUR);
    const refused = NO_REFUSALS;
    await storage.recordUsage([usageRow(withUsage.reader.id, hour, 3, 3)]);
    const fresh = createApiKeysAdminHandler<Caller>({
      service: withUsage.service,
      scopes: ["projects:read"],
      tenantOf: (caller) => caller.tenant,
      canManage: () => true,
      policy: () => null,
    });
    const ask = (path: string, query: Record<string, string> = {}) =>
      fresh({
        method: "GET",
        path,
        query: (name) => query[name] ?? null,
        headers: () => null,
        body: null,
      }, withUsage.me);
    const answer = (await ask(`/keys/${withUsage.reader.id}/usage`))!;
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body).buckets, [{
      start: hour.toISOString(),
      accepted: 3,
      refused,
      cost: 3,
    }]);
    const [query] = seen;
    assert.equal(query.tenantId, "acme");
    assert.deepEqual(query.keyIds, [withUsage.reader.id]);
    assert.equal(query.to.getTime() - query.from.getTime(), 24 * HOUR);
    assert.equal(JSON.parse((await ask("/config"))!.body).capabilities.usage, true);
    const wide = (await ask(`/keys/${withUsage.reader.id}/usage`, {
      from: "2029-01-01T00:00:00Z",
    }))!;
    assert.equal(wide.status, 400);
    assert.equal((await ask(`/keys/${withUsage.foreign.id}/usage`))!.status, 404);
  });

  it("list: pages by cursor, filters, sorts; the same pages with and without the storage capability; reads write nothing", async () => {
    for (const paged of [true, false]) {
      const storage = new InMemoryApiKeyStorage();
      const writes: string[] = [];
      const { call, service, clocks } = await setup({}, storage);
      for (let i = 0; i < 12; i++) {
        clocks.advance(1000);
        await service.create({
          tenantId: "acme",
          name: i % 3 === 0 ? `CI deploy ${i}` : `key ${String(i).padStart(2, "0")}`,
          scopes: [{ resource: "projects", level: "read" }],
          environment: i % 2 === 0 ? "live" : "test",
        });
      }
      const spied = storage as unknown as Record<string, unknown>;
      if (!paged) spied.listPageByTenant = undefined;
      for (
        const method of [
          "insert",
          "markRevoked",
          "markRevokedIfActive",
          "markRevokedForTenant",
          "touchLastUsed",
          "rotate",
          "rotateForTenant",
          "renameForTenant",
          "replaceNameForTenant",
          "setCredits",
        ]
      ) {
        const original = spied[method] as ((...args: unknown[]) => unknown) | undefined;
        if (original === undefined) continue;
        spied[method] = (...args: unknown[]) => {
          writes.push(method);
          return original.apply(storage, args);
        };
      }
      const pages = async (query: Record<string, string>) => {
        const names: string[] = [];
        let cursor = "";
        for (let n = 0; n < 10; n++) {
          const answer = (await call("GET", "/keys", { query: { ...query, cursor } }))!;
          assert.equal(answer.status, 200, answer.body);
          names.push(...answer.json.keys.map((key: { name: string }) => key.name));
          if (answer.json.nextCursor === null) return names;
          cursor = answer.json.nextCursor;
        }
        throw new Error("no last page");
      };
      const all = await pages({ limit: "5" });
      // 12 created + admin, reader, billing of setup, newest first.
      assert.equal(all.length, 15, `${paged}`);
      assert.deepEqual(all.slice(0, 3), ["key 11", "key 10", "CI deploy 9"]);
      assert.deepEqual(await pages({ limit: "2", q: "ci DEPLOY", sort: "name_asc" }), [
        "CI deploy 0",
        "CI deploy 3",
        "CI deploy 6",
        "CI deploy 9",
      ]);
      assert.deepEqual(await pages({ q: "deploy", environment: "test" }), [
        "CI deploy 9",
        "CI deploy 3",
      ]);
      assert.deepEqual(await pages({ limit: "100", status: "revoked" }), []);
      const first = (await call("GET", "/keys", { query: { limit: "1" } }))!.json.keys[0];
      assert.equal(
        (await call("DELETE", `/keys/${first.id}`))!.status,
        200,
      );
      writes.length = 0;
      assert.deepEqual(await pages({ status: "revoked" }), ["key 11"]);
      assert.equal((await pages({})).length, 14);
      assert.deepEqual(
        (await pages({ status: "all", sort: "created_asc", limit: "3" })).slice(-1),
        ["key 11"],
      );
      assert.deepEqual(writes, [], "a list read writes nothing");
    }
  });

  it("list: bad query parameters are 400 api_key_invalid_input naming the parameter", async () => {
    const { call } = await setup();
    const other = (await call("GET", "/keys", { query: { sort: "name_asc", limit: "1" } }))!;
    const cursor = other.json.nextCursor;
    for (
      const [query, field] of [
        [{ limit: "0" }, "limit"],
        [{ limit: "101" }, "limit"],
        [{ status: "gone" }, "status"],
        [{ environment: "staging" }, "environment"],
        [{ sort: "random" }, "sort"],
        [{ q: "q".repeat(201) }, "q"],
        [{ cursor: "%%%" }, "cursor"],
        [{ cursor }, "cursor"],
      ] as const
    ) {
      const answer = (await call("GET", "/keys", { query }))!;
      assert.equal(answer.status, 400, JSON.stringify(query));
      assert.equal(answer.json.error.code, "api_key_invalid_input");
      assert.equal(answer.json.error.details.field, field);
    }
  });

  it("list: q, or a cursor's id or name, holding U+0000 or a lone surrogate (text PostgreSQL refuses) is a 400 naming it on every storage, never reaching the storage", async () => {
    const { call, errors } = await setup();
    const cursorOf = (position: unknown[]) =>
      btoa(JSON.stringify(position)).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
    for (const bad of ["a\u0000b", "a\uD800b"]) {
      for (
        const [query, field] of [
          [{ q: bad }, "q"],
          [{ cursor: cursorOf(["created_desc", bad, "2020-01-01T00:00:00.000Z"]) }, "cursor"],
          [{ sort: "name_asc", cursor: cursorOf(["name_asc", "k", bad]) }, "cursor"],
          [{ sort: "name_asc", cursor: cursorOf(["name_asc", bad, "admin"]) }, "cursor"],
        ] as const
      ) {
        const answer = (await call("GET", "/keys", { query }))!;
        assert.equal(answer.status, 400, `${JSON.stringify(query)}: ${answer.body}`);
        assert.equal(answer.json.error.code, "api_key_invalid_input");
        assert.equal(answer.json.error.details.field, field);
      }
    }
    assert.deepEqual(errors, []);
  });

  it("usage window: the service's rule on both routes (granularity=day up to 366 days, hour up to 31); past it a 400 naming to", async () => {
    const { call, clocks, admin, reader } = await setup({}, new InMemoryApiKeyStorage(), {
      usage: true,
    });
    const ago = (days: number) => new Date(clocks.now - days * 24 * HOUR).toISOString();
    const to = new Date(clocks.now).toISOString();
    const routes: [string, Record<string, string>][] = [
      [`/keys/${reader.id}/usage`, {}],
      ["/usage", { keys: `${admin.id},${reader.id}` }],
    ];
    for (const [path, keys] of routes) {
      const ask = (granularity: string, days: number) =>
        call("GET", path, { query: { ...keys, granularity, from: ago(days), to } });
      for (const [granularity, days] of [["day", 200], ["day", 366], ["hour", 31]] as const) {
        const answer = (await ask(granularity, days))!;
        assert.equal(answer.status, 200, `${path} ${granularity} ${days} days: ${answer.body}`);
        assert.equal(answer.json.from, ago(days));
      }
      for (const [granularity, days] of [["day", 367], ["hour", 32], ["day", 0]] as const) {
        const answer = (await ask(granularity, days))!;
        assert.equal(answer.status, 400, `${path} ${granularity} ${days} days`);
        assert.equal(answer.json.error.code, "api_key_invalid_input");
        assert.equal(answer.json.error.details.field, "to", `${path} ${granularity} ${days} days`);
      }
      const before1970 = (await call("GET", path, {
        query: { ...keys, granularity: "day", from: "1969-12-01T00:00:00Z", to: ago(0) },
      }))!;
      assert.equal(before1970.status, 400);
      assert.equal(before1970.json.error.details.field, "from");
    }
  });

  it("usage window at the library's latest instant: a to whose bucket ends past 9999-12-31T23:59:59.999Z is a 400 naming to and the latest to it takes; the latest answered window's from and to, sent back, answer the same", async () => {
    const { call, admin, reader } = await setup({}, new InMemoryApiKeyStorage(), { usage: true });
    const routes: [string, Record<string, string>][] = [
      [`/keys/${reader.id}/usage`, {}],
      ["/usage", { keys: `${admin.id},${reader.id}` }],
    ];
    for (const [path, keys] of routes) {
      const ask = (granularity: string, from: string, to: string) =>
        call("GET", path, { query: { ...keys, granularity, from, to } });
      for (
        const [granularity, from, to] of [
          ["day", "9999-12-30T00:00:00Z", "9999-12-31T23:59:59.999Z"],
          ["day", "9999-12-30T00:00:00Z", "9999-12-31T00:00:00.001Z"],
          ["hour", "9999-12-31T22:00:00Z", "9999-12-31T23:30:00Z"],
          ["hour", "9999-12-31T22:00:00Z", "9999-12-31T23:59:59.999Z"],
        ]
      ) {
        const answer = (await ask(granularity, from, to))!;
        assert.equal(answer.status, 400, `${path} ${granularity} ${to}: ${answer.body}`);
        assert.equal(answer.json.error.code, "api_key_invalid_input");
        assert.equal(answer.json.error.details.field, "to", `${path} ${granularity} ${to}`);
        const latest = granularity === "day"
          ? "9999-12-31T00:00:00.000Z"
          : "9999-12-31T23:00:00.000Z";
        assert.match(answer.json.error.message, new RegExp(`must be at most ${latest} by `));
      }
      for (
        const [granularity, from, to] of [
          ["day", "9999-12-30T00:00:00Z", "9999-12-31T00:00:00Z"],
          ["hour", "9999-12-31T22:00:00Z", "9999-12-31T23:00:00Z"],
        ]
      ) {
        const answer = (await ask(granularity, from, to))!;
        assert.equal(answer.status, 200, `${path} ${granularity} ${to}: ${answer.body}`);
        assert.equal(answer.json.to, new Date(to).toISOString());
        const again = (await ask(granularity, answer.json.from, answer.json.to))!;
        assert.equal(again.status, 200, `${path} ${granularity}, sent back: ${again.body}`);
        assert.deepEqual(again.json, answer.json);
      }
    }
  });

  it("usage of a page: one request for up to 100 keys of the tenant, each allowed by canManage", async () => {
    const { call: plain, reader } = await setup();
    assert.equal((await plain("GET", "/usage", { query: { keys: reader.id } }))!.status, 501);
    const seen: string[] = [];
    const storage = new InMemoryApiKeyStorage();
    const read = storage.readUsageOfKeys.bind(storage);
    storage.readUsageOfKeys = (query) => (seen.push(...query.keyIds), read(query));
    const withUsage = await setup(
      {
        canManage: (_caller, action, target) =>
          action !== "usage" || target.key?.name !== "billing",
      },
      storage,
      { usage: true },
    );
    const { call, admin } = withUsage;
    const ids = [withUsage.reader.id, admin.id];
    const answer = (await call("GET", "/usage", { query: { keys: ids.join(",") } }))!;
    assert.equal(answer.status, 200, answer.body);
    assert.deepEqual(Object.keys(answer.json.keys), ids);
    assert.equal(answer.json.granularity, "hour");
    assert.deepEqual(seen, ids);
    const foreign = `${admin.id},${withUsage.foreign.id}`;
    assert.equal((await call("GET", "/usage", { query: { keys: foreign } }))!.status, 404);
    const denied = `${admin.id},${withUsage.billing.id}`;
    assert.equal((await call("GET", "/usage", { query: { keys: denied } }))!.status, 403);
    assert.equal((await call("GET", "/usage"))!.status, 400);
    assert.equal((await call("POST", "/usage"))!.status, 405);
    assert.equal(seen.length, 2, "no usage read for a refused request");
  });

  it("usage of a page is one storage read for all its keys (readUsageOfKeys), each key's buckets as its own read (the same path) gives them", async () => {
    const reads: string[] = [];
    class Counting extends InMemoryApiKeyStorage {}
    const parent = InMemoryApiKeyStorage.prototype as unknown as Record<
      string,
      (...args: unknown[]) => unknown
    >;
    for (const name of ["readUsage", "readUsageOfKeys"]) {
      if (typeof parent[name] !== "function") continue;
      Object.defineProperty(Counting.prototype, name, {
        value(this: unknown, ...args: unknown[]) {
          reads.push(name);
          return parent[name].apply(this, args);
        },
      });
    }
    const storage = new Counting();
    const { call, admin, reader, billing } = await setup({}, storage, { usage: true });
    const hour = new Date(Date.UTC(2026, 0, 1, 10));
    const refused = NO_REFUSALS;
    await storage.recordUsage([usageRow(admin.id, hour, 3, 3), usageRow(reader.id, hour, 5, 7)]);
    const ids = [admin.id, reader.id, billing.id];
    const window = { from: "2026-01-01T00:00:00.000Z", to: "2026-01-02T00:00:00.000Z" };
    const answer = (await call("GET", "/usage", { query: { keys: ids.join(","), ...window } }))!;
    assert.equal(answer.status, 200, answer.body);
    assert.deepEqual(reads, ["readUsageOfKeys"], "one read for the page");
    const start = hour.toISOString();
    assert.deepEqual(answer.json.keys[admin.id], [{ start, accepted: 3, refused, cost: 3 }]);
    assert.deepEqual(answer.json.keys[reader.id], [{ start, accepted: 5, refused, cost: 7 }]);
    assert.deepEqual(answer.json.keys[billing.id], []);
    // One key's detail: the same read, the same buckets.
    reads.length = 0;
    const one = (await call("GET", `/keys/${reader.id}/usage`, { query: window }))!;
    assert.equal(one.status, 200, one.body);
    assert.deepEqual(reads, ["readUsageOfKeys"], "the page's read, for one key");
    assert.deepEqual(one.json.buckets, answer.json.keys[reader.id]);
  });

  it("usage: the answer's from and to are its buckets' bounds (whole UTC hours or days), so its buckets sum to the window it states, on both routes", async () => {
    const storage = new InMemoryApiKeyStorage();
    const { call, reader } = await setup({}, storage, { usage: true });
    const day = Date.UTC(2026, 11, 1);
    // 100 requests in every hour of 2026-12-01 and 2026-12-02 (UTC).
    await storage.recordUsage(
      Array.from({ length: 48 }, (_, h) => usageRow(reader.id, new Date(day + h * HOUR), 100, 100)),
    );
    const cases = [
      {
        query: { granularity: "day", from: "2026-12-01T12:00:00Z", to: "2026-12-02T12:00:00Z" },
        from: "2026-12-01T00:00:00.000Z",
        to: "2026-12-03T00:00:00.000Z",
      },
      {
        query: { granularity: "hour", from: "2026-12-01T12:30:00Z", to: "2026-12-01T13:30:00Z" },
        from: "2026-12-01T12:00:00.000Z",
        to: "2026-12-01T14:00:00.000Z",
      },
      {
        query: { granularity: "hour", from: "2026-12-01T12:00:00Z", to: "2026-12-01T14:00:00Z" },
        from: "2026-12-01T12:00:00.000Z",
        to: "2026-12-01T14:00:00.000Z",
      },
    ];
    for (const { query, from, to } of cases) {
      const sum = (buckets: { accepted: number }[]) => buckets.reduce((n, b) => n + b.accepted, 0);
      const inWindow = (Date.parse(to) - Date.parse(from)) / HOUR * 100;
      const one = (await call("GET", `/keys/${reader.id}/usage`, { query }))!;
      assert.equal(one.status, 200, one.body);
      assert.deepEqual([one.json.from, one.json.to], [from, to], query.from);
      assert.equal(sum(one.json.buckets), inWindow, query.from);
      const page = (await call("GET", "/usage", { query: { keys: reader.id, ...query } }))!;
      assert.equal(page.status, 200, page.body);
      assert.deepEqual([page.json.from, page.json.to], [from, to], query.from);
      assert.equal(sum(page.json.keys[reader.id]), inWindow, query.from);
    }
  });

  it("usage of a page reads its keys in one storage read (findManyByIds), without it one findById per key: the same answers; another tenant's id answers as an unknown one", async () => {
    /** `GET /usage` over a storage with or without `findManyByIds`: its key reads and answers. */
    const run = async (capable: boolean) => {
      const reads: string[] = [];
      class Counting extends InMemoryApiKeyStorage {
        override findById(id: string) {
          reads.push("findById");
          return super.findById(id);
        }
        override findManyByIds(tenantId: string, ids: readonly string[]) {
          reads.push("findManyByIds");
          return super.findManyByIds(tenantId, ids);
        }
      }
      if (!capable) {
        Object.defineProperty(Counting.prototype, "findManyByIds", { value: undefined });
      }
      const storage = new Counting();
      const { service, call, admin, reader, billing, foreign, decisions } = await setup(
        {},
        storage,
        { usage: true },
      );
      const names: [string, string][] = [
        [admin.id, "admin"],
        [reader.id, "reader"],
        [billing.id, "billing"],
        [foreign.id, "foreign"],
      ];
      const ask = async (keys: string[]) => {
        reads.length = 0;
        decisions.length = 0;
        const answer = (await call("GET", "/usage", { query: { keys: keys.join(",") } }))!;
        // canManage sees each key as the tenant's list gives it (balances included).
        const summaries = await service.listSummaries("acme", { includeRevoked: true });
        for (const [action, target] of decisions) {
          assert.equal(action, "usage");
          assert.deepEqual(target.key, summaries.find(({ id }) => id === target.key?.id));
        }
        const body = names.reduce((text, [id, name]) => text.replaceAll(id, name), answer.body);
        return { status: answer.status, body, reads: [...reads], allowed: decisions.length };
      };
      return {
        all: await ask([billing.id, admin.id, reader.id]),
        foreign: await ask([admin.id, foreign.id]),
        unknown: await ask([admin.id, "no-such-key"]),
      };
    };
    const one = await run(true);
    assert.equal(one.all.status, 200, one.all.body);
    assert.deepEqual(Object.keys(JSON.parse(one.all.body).keys), ["billing", "admin", "reader"]);
    assert.equal(one.all.allowed, 3, "canManage asked of each key");
    for (const answer of [one.all, one.foreign, one.unknown]) {
      assert.deepEqual(answer.reads, ["findManyByIds"], "one storage read of the keys");
    }
    assert.equal(one.foreign.status, 404);
    assert.deepEqual(one.foreign, one.unknown, "another tenant's id: as an unknown id");
    assert.equal(one.foreign.allowed, 0, "canManage never sees another tenant's key");
    const apart = await run(false);
    assert.deepEqual(apart.all.reads, ["findById", "findById", "findById"]);
    assert.deepEqual(apart.foreign.reads, ["findById", "findById"]);
    for (const name of ["all", "foreign", "unknown"] as const) {
      const { reads: _, ...answer } = apart[name];
      const { reads: __, ...expected } = one[name];
      assert.deepEqual(answer, expected, `${name}: the same answer without the capability`);
    }
  });

  it("config: a viewer may do nothing; a caller without a key grants nothing; limits are the caller's", async () => {
    const viewer = await setup({ canManage: (_caller, action) => action === "config" });
    const config = (await viewer.call("GET", "/config"))!.json;
    assert.deepEqual(config.can, {
      create: false,
      rename: false,
      rotate: false,
      revoke: false,
      audit: false,
    });
    assert.deepEqual([config.scopes, config.environments, config.limits], [[], [], null]);
    const keyless = await setup();
    const none = (await keyless.call("GET", "/config", { caller: { tenant: "acme" } }))!.json;
    assert.equal(none.can.create, false);
    assert.deepEqual(none.scopes, []);
    const at = Date.parse("2030-01-01T10:00:00.000Z");
    /** GET /config of a limited admin (3/min, 5 credits) with `added` from keyLimits. */
    const configOfLimited = async (added: { name: string; limit: number; windowMs: number }) => {
      const limited = await setup(
        { keyLimits: () => ({ rateLimits: [added] }) },
        new InMemoryApiKeyStorage(),
        limitedService(() => at),
      );
      const caller = await createLimitedAdmin(limited.service);
      return (await limited.call("GET", "/config", {
        caller: { tenant: "acme", keyId: caller.id },
      }))!.json;
    };
    const answer = await configOfLimited({ name: "day", limit: 1000, windowMs: 86_400_000 });
    assert.equal(answer.can.create, true);
    assert.deepEqual(answer.limits, {
      policies: [
        { name: "minute", limit: 3, windowMs: 60_000 },
        { name: "day", limit: 1000, windowMs: 86_400_000 },
      ],
      credits: { amount: 5, refillAmount: null, refillEvery: null },
    });
    // keyLimits answering another limit under the name of a caller's policy: the caller's wins.
    const clash = await configOfLimited({ name: "minute", limit: 100, windowMs: 60_000 });
    assert.deepEqual([clash.can.create, clash.limits.policies], [true, [
      { name: "minute", limit: 3, windowMs: 60_000 },
    ]]);
    // A caller without credits: a key of its own balance, as keyLimits sets it.
    for (
      const [refill, every] of [
        [{ amount: 100, interval: "monthly", day: 15 }, "monthly:15"],
        [{ amount: 100, interval: "daily" }, "daily"],
        [{ amount: 100, everyMs: 3_600_000 }, "3600000ms"],
      ] as const
    ) {
      const own = await setup(
        { keyLimits: () => ({ credits: { remaining: 40, refill } }) },
        new InMemoryApiKeyStorage(),
        limitedService(() => at),
      );
      assert.deepEqual((await own.call("GET", "/config"))!.json.limits, {
        policies: [],
        credits: { amount: 40, refillAmount: 100, refillEvery: every },
      });
    }
  });

  it("defaultExpiry and defaultGrace: from the options, one of the presets", async () => {
    const { call, service, clocks, reader } = await setup({
      defaultExpiry: "30d",
      defaultGrace: "1h",
    });
    const config = (await call("GET", "/config"))!.json;
    assert.deepEqual([config.defaultExpiry, config.defaultGrace], ["30d", "1h"]);
    const created =
      (await call("POST", "/keys", { body: { name: "n", scopes: ["projects:read"] } }))!;
    assert.equal(
      Date.parse(created.json.record.expiresAt) - clocks.now,
      30 * 24 * HOUR,
    );
    const rotated = (await call("POST", `/keys/${reader.id}/rotate`))!;
    assert.equal(Date.parse(rotated.json.graceExpiresAt) - clocks.now, HOUR);
    for (
      const options of [
        { defaultExpiry: "5d" },
        { defaultExpiry: "never", expiryPresets: ["7d"] },
        { defaultGrace: "2h" },
      ]
    ) {
      assert.throws(
        () =>
          createApiKeysAdminHandler({
            service,
            scopes: ["a:read"],
            tenantOf: () => "t",
            canManage: () => true,
            policy: () => null,
            ...options,
          } as ApiKeysAdminOptions<unknown>),
        TypeError,
      );
    }
  });

  it("a custom policy replaces the default; its throw is a 500; an unusable answer too", async () => {
    const checks: unknown[] = [];
    const { call } = await setup({
      callerKeyIdOf: undefined,
      policy: (check) => {
        checks.push(check.role);
        if (check.key.environment === "live") return { environment: ["live"] };
        return null;
      },
    });
    const live = (await call("POST", "/keys", { body: { name: "x", scopes: ["billing:read"] } }))!;
    assert.equal(live.status, 403);
    const test = (await call("POST", "/keys", {
      body: { name: "x", scopes: ["billing:read"], environment: "test" },
    }))!;
    assert.equal(
      test.status,
      201,
      "billing:read is beyond the caller's key, allowed by the policy",
    );
    const circular: Record<string, unknown> = { scopes: ["billing:read"] };
    circular.self = circular;
    const unusable = [
      { scopes: [1n] }, // JSON cannot send it: the 403 itself would fail
      circular,
      { toJSON: () => "x" },
      { scopes: "billing:read" }, // not a list
      { scopes: ["billing:read"], note: "extra" }, // a field the answer does not have
      {
        get scopes(): string[] {
          throw new Error("a getter that throws");
        },
      },
    ];
    for (
      const policy of [
        () => Promise.reject(new Error("x")),
        () => undefined as never,
        ...unusable.map((answer) => () => answer as never),
      ]
    ) {
      const failing = await setup({ policy });
      const answer = (await failing.call("DELETE", `/keys/${failing.reader.id}`))!;
      assert.equal(answer.status, 500);
      assert.equal(failing.errors.length, 1);
    }
    // A usable answer is sent as its fields, copied.
    const refusing = await setup({ policy: () => ({ scopes: ["billing:read"], credits: [] }) });
    const refused = (await refusing.call("DELETE", `/keys/${refusing.reader.id}`))!;
    assert.equal(refused.status, 403);
    assert.deepEqual(JSON.parse(refused.body as string).error.details, {
      key: "target",
      exceeds: { scopes: ["billing:read"], credits: [] },
    });
  });

  it("routing: other paths are undefined; a known path with another method is 405", async () => {
    const { call, handle } = await setup();
    for (const path of ["/", "/keys/", "/keys/a/b/c", "/other", "/keys/a/rotate/x", "x"]) {
      assert.equal(await call("GET", path), undefined, path);
      assert.equal(handle.hasRoute(path), false, path);
    }
    const answer = (await call("PUT", "/keys"))!;
    assert.equal(answer.status, 405);
    assert.equal(answer.headers.allow, "GET, POST");
    for (const path of ["/config", "/keys", "/keys/a", "/keys/a/rotate", "/usage", "/audit"]) {
      assert.equal(handle.hasRoute(path), true, path);
    }
  });

  it("options are checked once", () => {
    const base = openOptions(makeService().service);
    for (
      const bad of [
        { service: {} },
        { tenantOf: undefined },
        { policy: undefined },
        { scopes: [] },
        { scopes: ["projects"] },
        { environments: ["prod"] },
        { gracePresets: ["1h", "1h"] },
        { csrf: { header: "bad header" } },
        { csrf: { header: "Content-Type", value: "text/plain" } },
        { csrf: { header: "Accept" } },
        { csrf: { header: "Sec-Fetch-Site", value: "same-origin" } },
        { csrf: { value: "a\nb" } },
        { maxBodyBytes: 0 },
        { actorOf: "user" },
        { allowedOrigins: "https://app.example.com" },
        { allowedOrigins: ["app.example.com"] },
        { allowedOrigins: ["https://app.example.com/"] },
        { allowedOrigins: ["https://app.example.com/path"] },
        { allowedOrigins: ["*"] },
        { allowedOrigins: ["null"] },
      ]
    ) {
      assert.throws(
        () => createApiKeysAdminHandler({ ...base, ...bad } as never),
        TypeError,
        JSON.stringify(bad),
      );
    }
  });

  it("actorOf names createdBy of created and rotated keys; a throw or bad answer is a contained 500", async () => {
    const { call, errors, service } = await setup({ actorOf: (caller) => `user:${caller.tenant}` });
    const created =
      (await call("POST", "/keys", { body: { name: "x", scopes: ["projects:read"] } }))!;
    assert.equal(created.status, 201);
    assert.equal(created.json.record.createdBy, "user:acme");
    const rotated = (await call("POST", `/keys/${created.json.record.id}/rotate`, { body: {} }))!;
    assert.equal(rotated.status, 201);
    assert.equal(rotated.json.record.createdBy, "user:acme");
    const asynchronous = await setup({ actorOf: () => Promise.resolve("svc:deploy") });
    const made = (await asynchronous.call("POST", "/keys", {
      body: { name: "y", scopes: ["projects:read"] },
    }))!;
    assert.equal(made.json.record.createdBy, "svc:deploy");
    assert.equal(errors.length, 0);
    const before = (await service.listSummaries("acme")).length;
    for (
      const actorOf of [
        () => {
          throw new Error("session store down");
        },
        () => Promise.reject(new Error("down")),
        () => null,
        () => "",
        () => 42,
        () => "x".repeat(201),
        // createdBy's own rule: no line break (a forged log line), NUL or bidi control.
        () => "alice\nFAKE api_key.revoked",
        () => "alice\u0000",
        () => "ci\u202egnp",
        () => " ",
      ]
    ) {
      const bad = await setup({ actorOf: actorOf as never });
      const refused = (await bad.call("POST", "/keys", {
        body: { name: "z", scopes: ["projects:read"] },
      }))!;
      assert.equal(refused.status, 500, String(actorOf));
      assert.equal(refused.json.error.code, "internal_error");
      assert.equal(bad.errors.length, 1);
      const rotate = (await bad.call("POST", `/keys/${bad.reader.id}/rotate`, { body: {} }))!;
      assert.equal(rotate.status, 500);
      assert.equal((await bad.service.listSummaries("acme")).length, 3, "nothing created");
    }
    assert.equal((await service.listSummaries("acme")).length, before);
  });

  it("allowedOrigins: same-site requests from a listed Origin pass the CSRF check; cross-site never", async () => {
    const origin = "https://app.example.com";
    const { call } = await setup({ allowedOrigins: [origin] });
    const body = { name: "x", scopes: ["projects:read"] };
    const pass = (await call("POST", "/keys", {
      body,
      headers: { "sec-fetch-site": "same-site", origin },
    }))!;
    assert.equal(pass.status, 201);
    const refused: Record<string, string>[] = [
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "same-site", origin: "https://evil.example.com" },
      { "sec-fetch-site": "same-site", origin: "https://APP.example.com." },
      { "sec-fetch-site": "same-site", origin: "http://app.example.com" },
      { "sec-fetch-site": "cross-site", origin },
      { "sec-fetch-site": "same-site", origin, "x-requested-with": "" },
    ];
    for (const headers of refused) {
      const answer = (await call("POST", "/keys", { body, headers }))!;
      assert.equal(answer.status, 403, JSON.stringify(headers));
      assert.equal(answer.json.error.code, "csrf_refused");
    }
    const without = await setup();
    const stillRefused = (await without.call("POST", "/keys", {
      body,
      headers: { "sec-fetch-site": "same-site", origin },
    }))!;
    assert.equal(stillRefused.status, 403, "same-site stays refused without allowedOrigins");
  });

  it("no escalation through limits and credits: a created key shares its creator's windows and balance", async () => {
    let at = Date.parse("2030-01-01T10:00:00.000Z");
    const { call, service } = await setup({}, undefined, limitedService(() => at));
    const limited = await createLimitedAdmin(service);
    const caller = { tenant: "acme", keyId: limited.id };
    const minted = (await call("POST", "/keys", {
      body: { name: "minted", scopes: ["projects:read"] },
      caller,
    }))!;
    assert.equal(minted.status, 201);
    const served = async (key: string) => {
      try {
        await service.authorize(key);
        return 1;
      } catch {
        return 0;
      }
    };
    let first = 0;
    for (let i = 0; i < 10; i++) first += await served(minted.json.key);
    first += await served(limited.key);
    assert.equal(first, 3, "both keys together serve the creator's 3 a minute");
    at += 61_000;
    let total = first;
    for (let i = 0; i < 10; i++) total += await served(minted.json.key);
    at += 61_000;
    for (let i = 0; i < 10; i++) total += await served(minted.json.key);
    assert.equal(total, 5, "both keys together spend the creator's 5 credits");
    const record = (await service.listSummaries("acme")).find((k) =>
      k.id === minted.json.record.id
    )!;
    assert.deepEqual(record.rateLimits?.map((p) => p.name), ["minute"]);
    // A key minted by that key shares the same windows and balance too: no way out by chaining.
    const grandchild = (await call("POST", "/keys", {
      body: { name: "grandchild", scopes: ["projects:read"] },
      caller: { tenant: "acme", keyId: minted.json.record.id },
    }))!;
    assert.equal(grandchild.status, 201);
    at += 61_000;
    assert.equal(await served(grandchild.json.key), 0, "the shared balance is spent");
    // Rotation keeps the source key's limits and balance.
    const rotated = (await call("POST", `/keys/${minted.json.record.id}/rotate`, {
      body: {},
      caller,
    }))!;
    assert.equal(rotated.status, 201);
    assert.equal(await served(rotated.json.key), 0, "the rotated key spends the same balance");
  });

  it("no escalation through limits and credits on rotate: a limited caller key rotates only keys on its own limits (create's check)", async () => {
    const at = () => Date.parse("2030-01-01T10:00:00.000Z");
    const { call, service, admin } = await setup({}, undefined, limitedService(at));
    const limited = await createLimitedAdmin(service);
    const caller = { tenant: "acme", keyId: limited.id };
    const worker = await service.create({
      tenantId: "acme",
      name: "worker",
      scopes: [{ resource: "projects", level: "read" }],
    });
    const refusedRotation = async (id: string, grace = "24h") => {
      const answer = (await call("POST", `/keys/${id}/rotate`, { body: { grace }, caller }))!;
      assert.equal(answer.status, 403, JSON.stringify(answer.json));
      assert.equal(answer.json.error.code, "api_key_escalation_refused");
      assert.equal(answer.json.error.details.key, "target");
      return answer.json.error.details.exceeds;
    };
    // A sibling without limits, and the tenant's unlimited owner key (same powers as the caller's).
    const noLimits = { rateLimits: ["minute"], credits: ["no balance"] };
    assert.deepEqual(await refusedRotation(worker.id), noLimits);
    assert.deepEqual(await refusedRotation(admin.id, "none"), noLimits);
    // The same policy and as many credits, but counters and a balance of its own: N x the caller's.
    const twin = await service.create({
      tenantId: "acme",
      name: "twin",
      scopes: [{ resource: "projects", level: "read" }],
      rateLimits: [{ name: "minute", limit: 3, windowMs: 60_000 }],
      credits: { remaining: 5 },
    });
    assert.deepEqual(await refusedRotation(twin.id), {
      rateLimits: ["minute"],
      credits: ["separate balance"],
    });
    // On the caller's windows and balance, but a looser policy of the same name.
    const looser = await service.create({
      tenantId: "acme",
      name: "looser",
      scopes: [{ resource: "projects", level: "read" }],
      limitsOf: limited.id,
      rateLimits: [{ name: "minute", limit: 50, windowMs: 60_000 }],
    });
    assert.deepEqual(await refusedRotation(looser.id), { rateLimits: ["minute"] });
    // Nothing rotated: every refused key still works, none has a successor.
    for (const key of [worker, admin, twin, looser]) {
      assert.equal((await service.verify(key.key)).keyId, key.id);
    }
    assert.equal((await service.listSummaries("acme")).filter((k) => k.rotatedAt).length, 0);
    // The keys on the caller's limits rotate: one it minted, and its own.
    const minted = (await call("POST", "/keys", {
      body: { name: "minted", scopes: ["projects:read"] },
      caller,
    }))!;
    const child = (await call("POST", `/keys/${minted.json.record.id}/rotate`, {
      body: { grace: "none" },
      caller,
    }))!;
    assert.equal(child.status, 201, JSON.stringify(child.json));
    const own = (await call("POST", `/keys/${limited.id}/rotate`, { body: {}, caller }))!;
    assert.equal(own.status, 201, JSON.stringify(own.json));
    // A person's session (no caller key) is unaffected: it rotates the unlimited key.
    const session = await setup({ policy: () => null }, undefined, limitedService(at));
    const unlimited = (await session.call("POST", `/keys/${session.admin.id}/rotate`, {
      body: { grace: "none" },
      caller: { tenant: "acme", keyId: null },
    }))!;
    assert.equal(unlimited.status, 201, JSON.stringify(unlimited.json));
  });

  it("no escalation through credits on rotate: a caller on the tenant's pool rotates only keys spending that pool", async () => {
    const at = () => Date.parse("2030-01-01T10:00:00.000Z");
    const { call, service } = await setup({}, undefined, limitedService(at));
    const pooled = await createPooledAdmin(service);
    const caller = { tenant: "acme", keyId: pooled.id };
    const own = await service.create({
      tenantId: "acme",
      name: "own balance",
      scopes: [{ resource: "projects", level: "read" }],
      credits: { remaining: 1_000 },
    });
    const unlimited = await service.create({
      tenantId: "acme",
      name: "unlimited",
      scopes: [{ resource: "projects", level: "read" }],
    });
    for (
      const [key, credits] of [[own, "separate balance"], [unlimited, "no balance"]] as const
    ) {
      const answer = (await call("POST", `/keys/${key.id}/rotate`, { body: {}, caller }))!;
      assert.equal(answer.status, 403, key.id);
      assert.deepEqual(answer.json.error.details, {
        key: "target",
        exceeds: { credits: [credits] },
      });
    }
    const onPool = await service.create({
      tenantId: "acme",
      name: "on the pool",
      scopes: [{ resource: "projects", level: "read" }],
      credits: { remaining: 3, refill: { amount: 3, interval: "daily" }, sharedBy: "tenant" },
    });
    const rotated = (await call("POST", `/keys/${onPool.id}/rotate`, { body: {}, caller }))!;
    assert.equal(rotated.status, 201, JSON.stringify(rotated.json));
  });

  it("keyLimits: the app's policies and credits per tenant or plan; a separate balance under a limited caller is refused", async () => {
    const at = () => Date.parse("2030-01-01T10:00:00.000Z");
    const plan = {
      rateLimits: [{ name: "plan", limit: 2, windowMs: 60_000 }],
      credits: { remaining: 100 },
    };
    const { call, service, errors } = await setup(
      { keyLimits: (_request, tenantId) => tenantId === "acme" ? plan : null },
      undefined,
      limitedService(at),
    );
    // The default caller (no credits of its own): the plan's policies and a balance of the plan's.
    const made = (await call("POST", "/keys", { body: { name: "p", scopes: ["projects:read"] } }))!;
    assert.equal(made.status, 201, JSON.stringify(made.json));
    let served = 0;
    for (let i = 0; i < 5; i++) {
      try {
        await service.authorize(made.json.key);
        served++;
      } catch { /* limited */ }
    }
    assert.equal(served, 2, "the plan's policy applies");
    assert.equal(made.json.record.credits, 100);
    // A caller with a balance: the plan's separate balance would be N keys x credits.
    const limited = await createLimitedAdmin(service);
    const refused = (await call("POST", "/keys", {
      body: { name: "q", scopes: ["projects:read"] },
      caller: { tenant: "acme", keyId: limited.id },
    }))!;
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error.code, "api_key_escalation_refused");
    assert.deepEqual(refused.json.error.details.exceeds, { credits: ["separate balance"] });
    // A hook answering a looser policy under the name of the caller's: the key keeps the caller's.
    const looser = await setup(
      { keyLimits: () => ({ rateLimits: [{ name: "minute", limit: 50, windowMs: 60_000 }] }) },
      undefined,
      limitedService(at),
    );
    const strict = await looser.service.create({
      tenantId: "acme",
      name: "strict",
      scopes: [{ resource: "keys", level: "write" }, { resource: "projects", level: "write" }],
      rateLimits: [{ name: "minute", limit: 3, windowMs: 60_000 }],
    });
    const loose = (await looser.call("POST", "/keys", {
      body: { name: "minted", scopes: ["projects:read"] },
      caller: { tenant: "acme", keyId: strict.id },
    }))!;
    assert.equal(loose.status, 201, JSON.stringify(loose.json));
    const summaries = await looser.service.listSummaries("acme");
    const [minted, mine] = ["minted", "strict"].map((name) =>
      summaries.find((k) => k.name === name)
    );
    assert.deepEqual(minted?.rateLimits, mine?.rateLimits);
    // A throw or an unusable answer of the hook is a contained 500.
    for (
      const keyLimits of [() => {
        throw new Error("plan db down");
      }, () => 7]
    ) {
      const bad = await setup({ keyLimits: keyLimits as never });
      const answer =
        (await bad.call("POST", "/keys", { body: { name: "s", scopes: ["projects:read"] } }))!;
      assert.equal(answer.status, 500);
      assert.equal(bad.errors.length, 1);
    }
    assert.equal(errors.length, 0);
  });

  it("the tenant's shared pool: GET /keys answers tenantCredits and creditsSharedBy; a key created by a pool caller spends the pool, never a separate balance", async () => {
    const at = () => Date.parse("2030-01-01T10:00:00.000Z");
    const { call, service } = await setup(
      { keyLimits: () => ({ credits: { remaining: 1_000 } }) },
      undefined,
      limitedService(at),
    );
    const none = (await call("GET", "/keys"))!;
    assert.equal(none.json.tenantCredits, null, "no key spends a pool yet");
    const pooled = await createPooledAdmin(service);
    const caller = { tenant: "acme", keyId: pooled.id };
    const refused = (await call("POST", "/keys", {
      body: { name: "n", scopes: ["projects:read"] },
      caller,
    }))!;
    assert.equal(refused.status, 403, "keyLimits' separate balance under a pool caller");
    assert.deepEqual(refused.json.error.details.exceeds, { credits: ["separate balance"] });
    const plain = await setup({}, undefined, limitedService(at));
    const poolAdmin = await createPooledAdmin(plain.service);
    const minted = (await plain.call("POST", "/keys", {
      body: { name: "minted", scopes: ["projects:read"] },
      caller: { tenant: "acme", keyId: poolAdmin.id },
    }))!;
    assert.equal(minted.status, 201, JSON.stringify(minted.json));
    assert.equal(minted.json.record.creditsSharedBy, "tenant");
    await plain.service.authorize(minted.json.key, { cost: 2 });
    await plain.service.authorize(poolAdmin.key);
    await assert.rejects(plain.service.authorize(minted.json.key), { creditBalance: "tenant" });
    const list = (await plain.call("GET", "/keys"))!;
    assert.deepEqual(list.json.tenantCredits, {
      credits: 0,
      nextRefillAt: "2030-01-02T00:00:00.000Z",
      refillAmount: 3,
    });
    const view = list.json.keys.find((k: { id: string }) => k.id === minted.json.record.id);
    assert.deepEqual(
      [view.credits, view.creditsSharedBy, view.creditsRefillAmount],
      [0, "tenant", 3],
    );
    const admin = list.json.keys.find((k: { id: string }) => k.id === plain.admin.id);
    assert.equal(admin.credits, undefined, "a key without credits shows none");
  });

  it("keyLimits' shared pool under a caller key on that pool: not a separate balance; the key it mints spends the pool (a caller off the pool is refused)", async () => {
    const at = () => Date.parse("2030-01-01T10:00:00.000Z");
    const plan = { remaining: 50_000, refill: { amount: 50_000, interval: "monthly" as const } };
    const { call, service } = await setup(
      { keyLimits: () => ({ credits: { ...plan, sharedBy: "tenant" } }) },
      undefined,
      limitedService(at),
    );
    const pooled = await service.create({
      tenantId: "acme",
      name: "pooled admin",
      scopes: [{ resource: "keys", level: "write" }, { resource: "projects", level: "write" }],
      credits: { ...plan, sharedBy: "tenant" },
    });
    await service.authorize(pooled.key, { cost: 49_000 });
    const caller = { tenant: "acme", keyId: pooled.id };
    const config = (await call("GET", "/config", { caller }))!;
    assert.equal(config.json.can.create, true, JSON.stringify(config.json));
    assert.deepEqual(
      [config.json.limits.credits.amount, config.json.limits.credits.sharedBy],
      [1_000, "tenant"],
      "the pool the minted key spends",
    );
    const minted = (await call("POST", "/keys", {
      body: { name: "minted", scopes: ["projects:read"] },
      caller,
    }))!;
    assert.equal(minted.status, 201, JSON.stringify(minted.json));
    assert.deepEqual(
      [minted.json.record.credits, minted.json.record.creditsSharedBy],
      [1_000, "tenant"],
    );
    await service.authorize(minted.json.key, { cost: 1_000 });
    await assert.rejects(service.authorize(pooled.key), { creditBalance: "tenant" });
    // A caller spending a balance of its own, off the pool: the plan's pool would be another one.
    const own = await createLimitedAdmin(service);
    const refused = (await call("POST", "/keys", {
      body: { name: "off pool", scopes: ["projects:read"] },
      caller: { tenant: "acme", keyId: own.id },
    }))!;
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.json.error.details.exceeds, { credits: ["separate balance"] });
  });

  it("config.limits of keyLimits' shared pool: the pool's balance now once the tenant has one, as the created key carries it", async () => {
    const at = () => Date.parse("2030-01-01T10:00:00.000Z");
    const plan = { remaining: 50_000, refill: { amount: 50_000, interval: "monthly" as const } };
    // A signed-in person (no caller key) under the app's plan: every key on the tenant's pool.
    const { call, service } = await setup(
      { keyLimits: () => ({ credits: { ...plan, sharedBy: "tenant" } }), policy: () => null },
      undefined,
      limitedService(at),
    );
    const person = { tenant: "acme", keyId: null };
    const first = (await call("GET", "/config", { caller: person }))!;
    assert.deepEqual(first.json.limits.credits, {
      amount: 50_000,
      refillAmount: 50_000,
      refillEvery: "monthly",
      sharedBy: "tenant",
    }, "no pool yet: the first key starts it");
    const made = (await call("POST", "/keys", {
      body: { name: "ci", scopes: ["projects:read"] },
      caller: person,
    }))!;
    assert.equal(made.status, 201, JSON.stringify(made.json));
    await service.authorize(made.json.key, { cost: 49_990 });
    const later = (await call("GET", "/config", { caller: person }))!;
    assert.deepEqual(
      [later.json.limits.credits.amount, later.json.limits.credits.sharedBy],
      [10, "tenant"],
      "the pool as a new key joins it",
    );
    const joined = (await call("POST", "/keys", {
      body: { name: "ci 2", scopes: ["projects:read"] },
      caller: person,
    }))!;
    assert.deepEqual(
      [joined.json.record.credits, joined.json.record.creditsSharedBy],
      [later.json.limits.credits.amount, "tenant"],
      "what config said the key carries",
    );
  });
});
