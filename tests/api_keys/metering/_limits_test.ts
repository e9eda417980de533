import { sha256 } from "@noble/hashes/sha2";
import { bytesToHex } from "@noble/hashes/utils";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeyError,
  type ApiKeyRateLimitPolicy,
  ApiKeysService,
  type ApiKeyStorage,
  ApiKeyValidationError,
  InMemoryApiKeyStorage,
} from "../../../api_keys/mod.ts";
import {
  createMemoryRateLimitStore,
  createRateLimiter,
  type RateLimitStore,
} from "../../../rate_limits/mod.ts";
import {
  assertTenantSharedPolicies,
  counterSubjectOf,
  creditPartsOf,
  HashedIds,
  idOfSubject,
  keyRateLimits,
  rateLimitHeaders,
  RequestLimits,
  routeRateLimitOf,
} from "../../../api_keys/metering/_limits.ts";
import type { ApiKeyContext } from "../../../api_keys/types.ts";
import { PEPPER_1, READ_ORDERS } from "../helpers.ts";

const quiet = () => {};

/** A policy a test edits in place (a plan table, a config reload). */
type Editable = { name: string; limit: number; windowMs: number; sharedBy?: string };

/** A service over memory with a limiter on a fake clock. */
function setup(
  options: {
    storage?: ApiKeyStorage;
    store?: RateLimitStore;
    onStoreError?: "open" | "closed" | "local";
    rateLimitResolver?: ConstructorParameters<typeof ApiKeysService>[0]["rateLimitResolver"];
  } = {},
) {
  const clock = { now: 1_000_000 };
  const store = options.store ?? createMemoryRateLimitStore({ now: () => clock.now });
  const limiter = createRateLimiter({
    store,
    onStoreError: options.onStoreError,
    ...(options.onStoreError === "local" ? { instances: 2 } : {}),
    logger: quiet,
    timeoutMs: 200,
  });
  const storage = options.storage ?? new InMemoryApiKeyStorage();
  const service = new ApiKeysService({
    peppers: { 1: PEPPER_1 },
    storage,
    limiter,
    rateLimitResolver: options.rateLimitResolver,
  });
  const create = (rateLimits?: ApiKeyRateLimitPolicy[], tenantId = "t1") =>
    service.create({ tenantId, name: "ci", scopes: READ_ORDERS, rateLimits });
  return { service, clock, create, storage };
}

const BURST = { name: "burst", limit: 3, windowMs: 1_000 };
const HOUR = { name: "hour", limit: 5, windowMs: 3_600_000 };

async function denial(promise: Promise<unknown>): Promise<ApiKeyError> {
  const error = await promise.then(() => undefined, (e) => e);
  assert.ok(error instanceof ApiKeyError, `expected an ApiKeyError, got ${error}`);
  return error;
}

describe("rate limits in authorize", () => {
  it("counts the key's policies; the context carries each result; a denial is api_key_rate_limited (429)", async () => {
    const { service, create } = setup();
    const { key } = await create([BURST, HOUR]);
    for (let i = 1; i <= 3; i++) {
      const context = await service.authorize(key);
      assert.deepEqual(context.rateLimitResults?.map((r) => [r.name, r.remaining, r.windowMs]), [
        ["burst", 3 - i, 1_000],
        ["hour", 5 - i, 3_600_000],
      ]);
    }
    const error = await denial(service.authorize(key));
    assert.equal(error.code, "api_key_rate_limited");
    assert.equal(error.httpStatus, 429);
    assert.deepEqual(error.rateLimitResults?.map((r) => [r.name, r.allowed, r.remaining]), [
      ["burst", false, 0],
      ["hour", true, 2],
    ]);
  });

  it("all or nothing: when one policy denies, the other does not consume", async () => {
    const { service, create, clock } = setup();
    const { key } = await create([BURST, HOUR]);
    for (let i = 0; i < 3; i++) await service.authorize(key);
    for (let i = 0; i < 10; i++) await denial(service.authorize(key));
    clock.now += 1_100; // burst frees (a unit counts one window and one sub-bucket); hour still has 2 of 5
    const context = await service.authorize(key);
    assert.equal(context.rateLimitResults?.find((r) => r.name === "hour")?.remaining, 1);
  });

  it("cost weights the request, cost 0 checks without consuming", async () => {
    const { service, create } = setup();
    const { key } = await create([HOUR]);
    const peek = await service.authorize(key, { cost: 0 });
    assert.equal(peek.rateLimitResults?.[0].remaining, 5);
    const heavy = await service.authorize(key, { cost: 4 });
    assert.equal(heavy.rateLimitResults?.[0].remaining, 1);
    const error = await denial(service.authorize(key, { cost: 2 }));
    assert.equal(error.code, "api_key_rate_limited");
    assert.equal((await service.authorize(key, { cost: 1 })).rateLimitResults?.[0].remaining, 0);
    await assert.rejects(service.authorize(key, { cost: -1 }), TypeError);
  });

  it("runs after the secret, environment, IP and scope checks: a refused request counts nothing", async () => {
    const { service, create } = setup();
    const { key } = await create([{ name: "one", limit: 1, windowMs: 60_000 }]);
    const scope = await denial(
      service.authorize(key, { requiredScope: { resource: "billing", level: "read" } }),
    );
    assert.equal(scope.code, "api_key_scope_insufficient");
    const env = await denial(service.authorize(key, { requiredEnvironment: "test" }));
    assert.equal(env.code, "api_key_environment_mismatch");
    assert.equal((await service.authorize(key)).rateLimitResults?.[0].remaining, 0);
  });

  it("a route picks the key's policies by name, or adds its own", async () => {
    const { service, create } = setup();
    const { key } = await create([BURST, HOUR]);
    const picked = await service.authorize(key, { rateLimits: "hour" });
    assert.deepEqual(picked.rateLimitResults?.map((r) => r.name), ["hour"]);
    const own = await service.authorize(key, {
      rateLimits: keyRateLimits([{ name: "burst", limit: 50, windowMs: 1_000 }, {
        name: "export",
        limit: 2,
        windowMs: 60_000,
      }]),
    });
    assert.deepEqual(own.rateLimitResults?.map((r) => [r.name, r.limit]), [
      ["hour", 5],
      ["burst", 50],
      ["export", 2],
    ]);
  });

  it("a cached key's check is built once: the same policies, subjects and balances reach the limiter on every request, a route's pick too", async () => {
    const store = createMemoryRateLimitStore();
    const seen: unknown[][] = [];
    const limiter = createRateLimiter({ store, logger: quiet });
    // The memory store is in-process: the service checks through checkNow, never check.
    const spy = {
      ...limiter,
      check: () => Promise.reject(new Error("check called where checkNow serves")),
      checkNow: ((subject, policies, options) => {
        seen.push([subject, policies, options?.subjects, options?.credits, options?.slot]);
        return limiter.checkNow!(subject, policies, options);
      }) as typeof limiter.checkNow,
    };
    const service = new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage: new InMemoryApiKeyStorage(),
      cache: { ttlMs: 60_000 },
      limiter: spy,
    });
    const { key } = await service.create({
      tenantId: "t1",
      name: "ci",
      scopes: READ_ORDERS,
      rateLimits: [BURST, { ...HOUR, sharedBy: "tenant" }],
      credits: { remaining: 100, pool: { remaining: 100 } },
    });
    const route = routeRateLimitOf(["hour"], undefined, "test");
    for (let i = 0; i < 2; i++) {
      await service.authorize(key);
      await service.authorize(key, route);
    }
    const [whole, picked, whole2, picked2] = seen;
    for (let i = 1; i < 5; i++) {
      assert.equal(whole[i], whole2[i], `argument ${i} of the key's check is reused`);
      assert.equal(picked[i], picked2[i], `argument ${i} of the route's check is reused`);
    }
    assert.deepEqual(picked[2], ["tenant:t1"], "the pick keeps the shared policy's subject");
    assert.equal((picked[1] as { name: string }[])[0].name, "hour");
  });

  it("a key without policies passes uncounted; so does a service without a limiter", async () => {
    const { service, create } = setup();
    const { key } = await create();
    assert.equal((await service.authorize(key)).rateLimitResults, undefined);
  });

  it("a rotated key inherits the policies; rotate may replace them", async () => {
    const { service, create } = setup();
    const { id } = await create([BURST]);
    const rotated = await service.rotate(id);
    assert.deepEqual(
      (await service.authorize(rotated.key)).rateLimits?.map((p) => p.name),
      ["burst"],
    );
    const again = await service.rotate(rotated.id, { rateLimits: [HOUR] });
    assert.deepEqual((await service.authorize(again.key)).rateLimits?.map((p) => p.name), ["hour"]);
  });

  it("a bad policy is a TypeError naming it, at create and rotate; nothing is written", async () => {
    const { service, create, storage } = setup();
    await assert.rejects(create([{ name: "api", limit: 0, windowMs: 1 }]), /"api": limit/);
    await assert.rejects(
      create([{ ...BURST, sharedBy: "org" as "tenant" }]),
      /"burst": sharedBy must be "tenant"/,
    );
    assert.equal((await storage.listByTenant("t1")).length, 0);
    const { id } = await create([BURST]);
    await assert.rejects(service.rotate(id, { rateLimits: [] }), TypeError);
  });

  it("a policy's misspelt field (sharedby) is a TypeError at create and rotate, never a key without the tenant's cap", async () => {
    const { service, create, storage } = setup();
    const policy = { name: "day", limit: 2, windowMs: 60_000, sharedby: "tenant" };
    await assert.rejects(
      create([policy as never]),
      /rate-limit policy "day": unknown field `sharedby` \(known: name, limit, windowMs, cost, subSecond, sharedBy\)/,
    );
    assert.equal((await storage.listByTenant("t1")).length, 0);
    const { id } = await create([BURST]);
    await assert.rejects(service.rotate(id, { rateLimits: [policy as never] }), /`sharedby`/);
    // A route's own policies and a resolver's answer are input too.
    const { key } = await create();
    await assert.rejects(
      service.authorize(key, { rateLimits: [{ ...BURST, costs: 2 } as never] }),
      /rate-limit policy "burst": unknown field `costs`/,
    );
    assert.throws(
      () => routeRateLimitOf([{ ...BURST, sharedby: "tenant" }], undefined, "RateLimit"),
      /^TypeError: RateLimit: rate-limit policy "burst": unknown field `sharedby`/,
    );
    // A cost on a route counting nothing would be recorded as usage and never charged.
    assert.throws(
      () => routeRateLimitOf(false, 5, "RateLimit"),
      /^TypeError: RateLimit: a cost with rateLimits false is never charged/,
    );
    await assert.rejects(
      service.authorize(key, { rateLimits: false, cost: 5 }),
      /^TypeError: AuthorizeOptions: a cost with rateLimits false is never charged/,
    );
    assert.deepEqual(routeRateLimitOf(false, undefined, "RateLimit"), { rateLimits: false });
  });

  it("a stored policy with a field of its own (a record written by another version) still verifies, lists, rotates and lends its limits", async () => {
    const { create, storage } = setup();
    const { id, key } = await create([BURST, { ...HOUR, sharedBy: "tenant" }]);
    const stored = (storage as InMemoryApiKeyStorage).peekByPrefix(key.split("_")[2])!;
    const withExtra = stored.rateLimits!.map((policy) => ({ ...policy, label: "legacy plan" }));
    Object.assign(stored, { rateLimits: withExtra });
    const fresh = new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage,
      limiter: createRateLimiter({ logger: quiet }),
    });
    const context = await fresh.authorize(key);
    assert.deepEqual(context.rateLimits?.map((p) => p.name), ["burst", "hour"]);
    assert.deepEqual(Object.keys(context.rateLimits![0]), ["name", "limit", "windowMs", "cost"]);
    assert.equal((await fresh.list("t1"))[0].id, id);
    const [summary] = await fresh.listSummaries("t1");
    assert.deepEqual(summary.rateLimits?.map((p) => Object.keys(p).includes("label")), [
      false,
      false,
    ]);
    // The summary's policies, passed back as input (as the admin routes do for a caller's key).
    await fresh.create({
      tenantId: "t1",
      name: "copy",
      scopes: READ_ORDERS,
      rateLimits: summary.rateLimits as ApiKeyRateLimitPolicy[],
    });
    await fresh.create({ tenantId: "t1", name: "lent", scopes: READ_ORDERS, limitsOf: id });
    const rotated = await fresh.rotate(id);
    assert.deepEqual((await fresh.authorize(rotated.key)).rateLimits?.map((p) => p.name), [
      "burst",
      "hour",
    ]);
    await fresh.close();
  });

  it("a storage without storesRateLimits refuses rateLimits with a TypeError", async () => {
    const storage = new InMemoryApiKeyStorage();
    Object.defineProperty(storage, "storesRateLimits", { value: false });
    const { create } = setup({ storage });
    await assert.rejects(create([BURST]), /storesRateLimits/);
  });

  it('sharedBy "tenant": one counter for every key of the tenant; another limit or window is refused at create', async () => {
    const { service, create } = setup();
    const day = { name: "day", limit: 3, windowMs: 86_400_000, sharedBy: "tenant" as const };
    const a = await create([day]);
    const b = await create([day, BURST]);
    const other = await create([day], "t2");
    await service.authorize(a.key);
    await service.authorize(b.key);
    const third = await service.authorize(a.key);
    assert.equal(third.rateLimitResults?.[0].remaining, 0);
    assert.equal((await denial(service.authorize(b.key))).code, "api_key_rate_limited");
    assert.equal((await service.authorize(other.key)).rateLimitResults?.[0].remaining, 2);
    await assert.rejects(create([{ ...day, limit: 4 }]), ApiKeyValidationError);
    await assert.rejects(create([{ ...day, windowMs: 1_000 }]), ApiKeyValidationError);
    await create([{ ...day, limit: 4 }], "t3");
    assert.doesNotThrow(() => assertTenantSharedPolicies([day], []));
  });

  it("onStoreError closed: a failing store is api_key_rate_limit_unavailable (503); open lets the request pass", async () => {
    const failing: RateLimitStore = { checkBatch: () => Promise.reject(new Error("down")) };
    const closed = setup({ store: failing, onStoreError: "closed" });
    const { key } = await closed.create([BURST]);
    const error = await denial(closed.service.authorize(key));
    assert.equal(error.code, "api_key_rate_limit_unavailable");
    assert.equal(error.httpStatus, 503);
    const open = setup({ store: failing, onStoreError: "open" });
    const opened = await open.create([BURST]);
    assert.equal((await open.service.authorize(opened.key)).rateLimitResults, undefined);
  });

  it('onStoreError "local": while the store is down each policy counts this instance\'s share (429 past it); a credit spend is refused (503)', async () => {
    const failing: RateLimitStore = { checkBatch: () => Promise.reject(new Error("down")) };
    const { service, create } = setup({ store: failing, onStoreError: "local" });
    const { key } = await create([{ name: "minute", limit: 4, windowMs: 60_000 }]);
    const first = await service.authorize(key);
    assert.deepEqual(first.rateLimitResults?.map((r) => [r.limit, r.remaining]), [[2, 1]]);
    await service.authorize(key);
    assert.equal((await denial(service.authorize(key))).code, "api_key_rate_limited");
    // A share below the cost (a limit under the instances: a share of 0; a route's cost over it)
    // refuses until the store answers again, not forever: the 429 still says when to retry.
    const small = await create([{ name: "rare", limit: 1, windowMs: 60_000 }], "t2");
    const none = new Map(rateLimitHeaders(await denial(service.authorize(small.key)), true));
    assert.equal(none.get("X-RateLimit-Limit"), "0");
    assert.equal(none.get("Retry-After"), "60");
    const costly = await create([{ name: "minute", limit: 4, windowMs: 60_000 }], "t3");
    const over = new Map(
      rateLimitHeaders(await denial(service.authorize(costly.key, { cost: 3 })), true),
    );
    assert.equal(over.get("Retry-After"), "60");
    // A cost over the policy's own limit never fits, the store up or down: no Retry-After.
    const never = new Map(
      rateLimitHeaders(await denial(service.authorize(costly.key, { cost: 5 })), true),
    );
    assert.equal(never.get("Retry-After"), undefined);
    const funded = await service.create({
      tenantId: "t1",
      name: "ci",
      scopes: READ_ORDERS,
      credits: { remaining: 5 },
    });
    assert.equal(
      (await denial(service.authorize(funded.key))).code,
      "api_key_rate_limit_unavailable",
    );
  });

  it("rateLimitResolver picks the policies per request; its failure follows onStoreError, a bad policy is an error", async () => {
    const seen: unknown[] = [];
    const { service, create } = setup({
      rateLimitResolver: (context, request) => {
        seen.push(request);
        return [{ name: `plan-${context.tenantId}`, limit: 1, windowMs: 60_000 }];
      },
    });
    const { key } = await create([BURST]);
    const context = await service.authorize(key, { request: "req-1" });
    assert.deepEqual(context.rateLimitResults?.map((r) => r.name), ["plan-t1"]);
    assert.deepEqual(seen, ["req-1"]);
    assert.equal((await denial(service.authorize(key))).code, "api_key_rate_limited");

    const warn = console.warn;
    console.warn = quiet;
    try {
      const broken = setup({
        onStoreError: "closed",
        rateLimitResolver: () => [{ name: "BAD", limit: 1, windowMs: 1 }],
      });
      const made = await broken.create();
      await assert.rejects(
        broken.service.authorize(made.key),
        /rateLimitResolver answered a bad policy/,
      );
      const down = setup({
        onStoreError: "closed",
        rateLimitResolver: () => Promise.reject(new Error("plan lookup failed")),
      });
      const refused = await down.create();
      assert.equal(
        (await denial(down.service.authorize(refused.key))).code,
        "api_key_rate_limit_unavailable",
      );
      const throwing = setup({
        rateLimitResolver: () => {
          throw new Error("plan lookup failed");
        },
      });
      const ok = await throwing.create();
      assert.equal((await throwing.service.authorize(ok.key)).rateLimitResults, undefined);
    } finally {
      console.warn = warn;
    }
  });

  it("a resolver failing (its plan lookup down) under open still spends and refuses the key's credits, which need no resolver; under closed it serves nothing and spends nothing", async () => {
    const warn = console.warn;
    console.warn = quiet;
    try {
      for (const onStoreError of ["open", "closed"] as const) {
        let down = true;
        const { service } = setup({
          onStoreError,
          rateLimitResolver: () =>
            down
              ? Promise.reject(new Error("plan lookup failed"))
              : [{ name: "plan", limit: 100, windowMs: 60_000 }],
        });
        const { key } = await service.create({
          tenantId: "t1",
          name: "ci",
          scopes: READ_ORDERS,
          credits: { remaining: 2 },
        });
        const codes: (string | number | undefined)[] = [];
        for (let i = 0; i < 3; i++) {
          codes.push(
            await service.authorize(key).then(
              (context) => context.creditResult?.remaining,
              (error: ApiKeyError) => error.code,
            ),
          );
        }
        down = false;
        const after = await service.authorize(key).catch((e: ApiKeyError) => e.code);
        assert.deepEqual(
          [codes, typeof after === "string" ? after : after.creditResult?.remaining],
          onStoreError === "open"
            ? [[1, 0, "api_key_usage_exceeded"], "api_key_usage_exceeded"]
            : [Array(3).fill("api_key_rate_limit_unavailable"), 1],
          onStoreError,
        );
      }
    } finally {
      console.warn = warn;
    }
  });

  it("a resolver's list changed in place is read again: a lowered limit applies at once, a bad edit is an error, a sharedBy edit moves the counter", async () => {
    const plans = {
      pro: [{ name: "plan", limit: 100, windowMs: 60_000 }] as Editable[],
    };
    const { service, create } = setup({
      rateLimitResolver: () => plans.pro as ApiKeyRateLimitPolicy[],
    });
    const { key } = await create();
    const first = await service.authorize(key);
    assert.deepEqual(first.rateLimitResults?.map((r) => [r.limit, r.remaining]), [[100, 99]]);
    plans.pro[0].limit = 2; // a downgrade: the table edited in place
    const second = await service.authorize(key);
    assert.deepEqual(second.rateLimitResults?.map((r) => [r.limit, r.remaining]), [[2, 0]]);
    assert.equal((await denial(service.authorize(key))).code, "api_key_rate_limited");
    plans.pro[0].limit = -5;
    await assert.rejects(
      service.authorize(key),
      /rateLimitResolver answered a bad policy.*"plan": limit/,
    );
    plans.pro[0].limit = 2;
    plans.pro[0].sharedBy = "key";
    await assert.rejects(
      service.authorize(key),
      /rateLimitResolver answered a bad policy.*sharedBy/,
    );
    plans.pro[0].sharedBy = "tenant"; // the tenant's counter: unused so far
    const shared = await service.authorize(key);
    assert.deepEqual(shared.rateLimitResults?.map((r) => r.remaining), [1]);
    plans.pro.push({ name: "burst", limit: 1, windowMs: 1_000 });
    const grown = await service.authorize(key);
    assert.deepEqual(grown.rateLimitResults?.map((r) => [r.name, r.remaining]), [["plan", 0], [
      "burst",
      0,
    ]]);
  });

  it("a list unchanged since its compile answers the same stored form, and the stored form answers itself", async () => {
    const frozen = Object.freeze([Object.freeze({ name: "plan", limit: 2, windowMs: 60_000 })]);
    const { service, create } = setup({ rateLimitResolver: () => frozen });
    const { key } = await create();
    assert.equal(keyRateLimits(frozen), keyRateLimits(frozen));
    const stored = keyRateLimits(frozen);
    assert.equal(keyRateLimits(stored), stored);
    assert.deepEqual((await service.authorize(key)).rateLimitResults?.map((r) => r.remaining), [1]);
  });

  it("a route's own list or names changed in place are read again", async () => {
    const { service, create } = setup();
    const { key } = await create([BURST, HOUR]);
    const own = [{ name: "export", limit: 5, windowMs: 60_000 }];
    const names = ["hour"];
    const counted = async (rateLimits: typeof own | typeof names) =>
      (await service.authorize(key, { rateLimits, cost: 0 })).rateLimitResults?.map((r) =>
        `${r.name}:${r.limit}`
      );
    assert.deepEqual(await counted(own), ["burst:3", "hour:5", "export:5"]);
    assert.deepEqual(await counted(names), ["hour:5"]);
    own[0].limit = 1;
    names[0] = "burst";
    assert.deepEqual(await counted(own), ["burst:3", "hour:5", "export:1"]);
    assert.deepEqual(await counted(names), ["burst:3"]);
    own[0].windowMs = 10;
    await assert.rejects(
      service.authorize(key, { rateLimits: own, cost: 0 }),
      /"export": windowMs 10/,
    );
  });

  it("options: a limiter must be a RateLimiter, a resolver needs one", () => {
    const base = { peppers: { 1: PEPPER_1 }, storage: new InMemoryApiKeyStorage() };
    assert.throws(() => new ApiKeysService({ ...base, limiter: {} as never }), /limiter/);
    assert.throws(
      () => new ApiKeysService({ ...base, rateLimitResolver: () => undefined }),
      /needs a limiter/,
    );
  });
});

describe("policy compilation and headers", () => {
  it("keyRateLimits compiles a list once and fills the cost", () => {
    const input = [{ name: "api", limit: 10, windowMs: 1_000 }];
    const compiled = keyRateLimits(input);
    assert.equal(compiled, keyRateLimits(input));
    assert.equal(compiled, keyRateLimits(compiled));
    assert.equal(compiled[0].cost, 1);
    assert.ok(Object.isFrozen(compiled[0]));
  });

  it("keyRateLimits compiles a list changed in place again, and validates it again", () => {
    const input: Editable[] = [{ name: "api", limit: 10, windowMs: 1_000 }];
    const compiled = keyRateLimits(input);
    input[0].limit = 3;
    assert.equal(keyRateLimits(input)[0].limit, 3);
    assert.equal(keyRateLimits(input), keyRateLimits(input), "unchanged since: the same list");
    input[0].sharedBy = "tenant";
    assert.equal(keyRateLimits(input)[0].sharedBy, "tenant");
    input[0].limit = 0;
    assert.throws(() => keyRateLimits(input), /"api": limit/);
    assert.equal(compiled[0].limit, 10, "the stored form never changes");
  });

  it("routeRateLimitOf validates names, policies and cost where the route is declared", () => {
    assert.deepEqual(routeRateLimitOf("burst", 5, "RateLimit"), {
      rateLimits: ["burst"],
      cost: 5,
    });
    assert.throws(() => routeRateLimitOf([], undefined, "RateLimit"), /^TypeError: RateLimit:/);
    assert.throws(() => routeRateLimitOf("burst", 1.5, "RateLimit"), /cost/);
    assert.throws(
      () => routeRateLimitOf([{ name: "x", limit: -1, windowMs: 1 }], undefined, "RateLimit"),
      /"x": limit/,
    );
  });

  it("routeRateLimitOf refuses a name no policy can have and a name listed twice where the route is declared (never a 500 per request)", () => {
    for (const names of ["Hourly", "", ["burst", "1h"], ["burst", "x".repeat(65)]]) {
      assert.throws(
        () => routeRateLimitOf(names, undefined, "RateLimit"),
        /^TypeError: RateLimit: rateLimits: .*name must be 1-64 characters of a-z 0-9/,
        JSON.stringify(names),
      );
    }
    assert.throws(
      () => routeRateLimitOf(["hourly", "hourly"], undefined, "RateLimit"),
      /^TypeError: RateLimit: rateLimits: .*"hourly" is listed twice/,
    );
    // A list with a hole, of names or of policies: refused, never a route that answers 500.
    for (const rateLimits of [["hourly", , "burst"], [BURST, , BURST], [, "hourly"]]) {
      assert.throws(
        () => routeRateLimitOf(rateLimits, undefined, "RateLimit"),
        /^TypeError: RateLimit: (rateLimits: )?rate-limit policy #[01] is missing \(a hole in the list\)$/,
        String(rateLimits),
      );
    }
    assert.deepEqual(routeRateLimitOf(["burst", "day.*"], undefined, "RateLimit"), {
      rateLimits: ["burst", "day.*"],
    });
  });

  it("rateLimitHeaders: one item per policy, legacy trio of the least remaining, Retry-After on a denial", () => {
    const results = [
      {
        name: "burst",
        limit: 100,
        windowMs: 60_000,
        remaining: 50,
        resetMs: 29_001,
        allowed: true,
      },
      {
        name: "day",
        limit: 1_000,
        windowMs: 86_400_000,
        remaining: 0,
        resetMs: 5_000,
        allowed: false,
      },
    ];
    assert.deepEqual(rateLimitHeaders({ rateLimitResults: results }, true), [
      ["RateLimit-Policy", '"burst";q=100;w=60, "day";q=1000;w=86400'],
      ["RateLimit", '"burst";r=50;t=30, "day";r=0;t=5'],
      ["X-RateLimit-Limit", "1000"],
      ["X-RateLimit-Remaining", "0"],
      ["X-RateLimit-Reset", "5"],
      ["Retry-After", "5"],
    ]);
    assert.deepEqual(rateLimitHeaders({}, true), []);
  });

  it("rateLimitHeaders: on a denial the legacy trio is the denying policy's with the longest wait, not the least remaining", () => {
    // Costs differ per policy: "hour" (cost 5) refuses with 7 left, "burst" (cost 1) allows with 1.
    const results = [
      { name: "burst", limit: 3, windowMs: 60_000, remaining: 1, resetMs: 65_001, allowed: true },
      {
        name: "hour",
        limit: 12,
        windowMs: 3_600_000,
        remaining: 7,
        resetMs: 3_959_001,
        allowed: false,
      },
      { name: "min", limit: 9, windowMs: 60_000, remaining: 0, resetMs: 59_000, allowed: false },
    ];
    const headers = new Map(rateLimitHeaders({ rateLimitResults: results }, true));
    assert.deepEqual(
      ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"]
        .map((name) => headers.get(name)),
      ["12", "7", "3960", "3960"],
    );
  });

  it("rateLimitHeaders: a policy and a balance both refusing: Retry-After is the later of the two waits, none when the balance never refills", () => {
    const minute = {
      name: "minute",
      limit: 2,
      windowMs: 2_000,
      remaining: 0,
      resetMs: 3_000,
      allowed: false,
    };
    const retryAfter = (creditResult: { allowed: boolean; remaining: number; resetMs: number }) =>
      new Map(rateLimitHeaders({ rateLimitResults: [minute], creditResult }, false)).get(
        "Retry-After",
      );
    assert.equal(retryAfter({ allowed: false, remaining: 0, resetMs: 7_000 }), "7");
    assert.equal(retryAfter({ allowed: false, remaining: 0, resetMs: 1_000 }), "3");
    assert.equal(retryAfter({ allowed: false, remaining: 0, resetMs: -1 }), undefined);
    assert.equal(
      retryAfter({ allowed: true, remaining: 5, resetMs: 9_000 }),
      "3",
      "a balance that allows waits for nothing",
    );
  });

  it("rateLimitHeaders: no Retry-After when a refusing policy's cost exceeds its limit (it never fits)", async () => {
    const { service, create } = setup();
    const { key } = await create([{ name: "minute", limit: 3, windowMs: 60_000 }, HOUR]);
    const routeCost = new Map(
      rateLimitHeaders(await denial(service.authorize(key, { cost: 4 })), true),
    );
    assert.equal(routeCost.get("Retry-After"), undefined);
    assert.equal(routeCost.get("X-RateLimit-Limit"), "3", "the trio still names it");
    const own = await create([{ name: "big", limit: 2, windowMs: 60_000, cost: 3 }], "t2");
    const policyCost = new Map(rateLimitHeaders(await denial(service.authorize(own.key)), true));
    assert.equal(policyCost.get("Retry-After"), undefined);
    // A cost that fits a later window keeps its Retry-After.
    await service.authorize(key, { cost: 3 });
    const later = new Map(
      rateLimitHeaders(await denial(service.authorize(key, { cost: 1 })), false),
    );
    assert.match(later.get("Retry-After") ?? "", /^\d+$/);
  });

  it("rateLimitHeaders: a denying policy's t is the wait until the request's cost fits (its Retry-After), an allowed one's until remaining next grows (docs/rate-limits.md, Headers)", async () => {
    const { service, create, clock } = setup();
    const { key } = await create([{ name: "min", limit: 10, windowMs: 60_000 }]);
    const fields = (answers: Parameters<typeof rateLimitHeaders>[0]) =>
      new Map(rateLimitHeaders(answers, false));
    const t = (headers: Map<string, string>) =>
      Number(/;t=(\d+)$/.exec(headers.get("RateLimit") ?? "")?.[1]);
    await service.authorize(key, { cost: 1 });
    clock.now += 30_000;
    await service.authorize(key, { cost: 8 });
    clock.now += 1_000;
    // Remaining (1) grows when the first unit leaves; 5 units fit only once the 8 leave, later.
    const allowed = fields(await service.authorize(key, { cost: 0 }));
    const denied = fields(await denial(service.authorize(key, { cost: 5 })));
    assert.equal(t(denied), Number(denied.get("Retry-After")));
    assert.ok(t(allowed) > 0 && t(denied) > t(allowed) + 20, `${t(allowed)} s, ${t(denied)} s`);
  });

  it("rateLimitHeaders: both credit balances refused (own and pool): Retry-After is the later refill, none when one never refills enough", () => {
    const credit = (resetMs: number, allowed = false) => ({ allowed, remaining: 0, resetMs });
    const retryAfter = (own: ReturnType<typeof credit>, pool: ReturnType<typeof credit>) => {
      const answers = { creditResult: own, tenantCreditResult: pool };
      return new Map(rateLimitHeaders(answers, false)).get("Retry-After");
    };
    assert.equal(retryAfter(credit(30_000), credit(3_600_000)), "3600");
    assert.equal(retryAfter(credit(30_000), credit(3_600_000, true)), "30");
    assert.equal(retryAfter(credit(30_000, true), credit(3_600_000)), "3600");
    assert.equal(retryAfter(credit(30_000), credit(-1)), undefined);
  });

  it("rateLimitHeaders: a remaining below 0 (a rotation lowered the limit of a counter) is sent as 0; the result keeps its value", async () => {
    const { service, create } = setup();
    const minute = { name: "minute", limit: 10, windowMs: 60_000 };
    const { id, key } = await create([minute, HOUR]);
    for (let i = 0; i < 4; i++) await service.authorize(key);
    const rotated = await service.rotate(id, { rateLimits: [{ ...minute, limit: 1 }, HOUR] });
    const error = await denial(service.authorize(rotated.key));
    assert.deepEqual(error.rateLimitResults?.map((r) => [r.name, r.remaining]), [
      ["minute", -3],
      ["hour", 1],
    ]);
    const headers = new Map(rateLimitHeaders(error, true));
    assert.match(headers.get("RateLimit")!, /^"minute";r=0;t=\d+, "hour";r=1;t=\d+$/);
    assert.equal(headers.get("X-RateLimit-Remaining"), "0");
    assert.equal(headers.get("X-RateLimit-Limit"), "1", "the legacy trio of the least remaining");
  });

  it("rateLimitHeaders: a credit denial's Retry-After is the next refill (none without one); with a denying policy, the later of the two", () => {
    const credit = (resetMs: number, allowed = false) => ({ allowed, remaining: 0, resetMs });
    assert.deepEqual(rateLimitHeaders({ creditResult: credit(3_600_001) }, false), [
      ["Retry-After", "3601"],
    ]);
    assert.deepEqual(rateLimitHeaders({ creditResult: credit(-1) }, false), []);
    assert.deepEqual(rateLimitHeaders({ creditResult: credit(5_000, true) }, false), []);
    const policy = { name: "p", limit: 1, windowMs: 1_000, remaining: 0, resetMs: 1_000 };
    assert.deepEqual(
      rateLimitHeaders({
        rateLimitResults: [{ ...policy, allowed: false }],
        creditResult: credit(9_000),
      }, false).find(([name]) => name === "Retry-After"),
      ["Retry-After", "9"],
    );
    assert.deepEqual(
      rateLimitHeaders({
        rateLimitResults: [{ ...policy, remaining: 1, allowed: true }],
        creditResult: credit(9_000),
      }, false).find(([name]) => name === "Retry-After"),
      ["Retry-After", "9"],
    );
  });
});

describe("closed on bugs, loud on mistakes (issue 40)", () => {
  /** Runs `fn` with console.warn and console.error captured. */
  async function logged(fn: () => Promise<void>): Promise<string[]> {
    const lines: string[] = [];
    const [warn, error] = [console.warn, console.error];
    console.warn = console.error = (...args: unknown[]) => lines.push(args.join(" "));
    try {
      await fn();
    } finally {
      [console.warn, console.error] = [warn, error];
    }
    return lines;
  }

  it("a tenant id of any length create accepts is counted: long subjects are hashed, short ones readable", async () => {
    const { service } = setup();
    const tenantId = "é".repeat(90);
    const { key } = await service.create({
      tenantId,
      name: "ci",
      scopes: READ_ORDERS,
      rateLimits: [{ name: "org", limit: 2, windowMs: 60_000, sharedBy: "tenant" }],
    });
    assert.equal((await service.authorize(key)).rateLimitResults?.[0].remaining, 1);
    await service.authorize(key);
    assert.equal((await denial(service.authorize(key))).code, "api_key_rate_limited");
    // A lone surrogate is refused at create (the audit chain hashes tenant ids as UTF-8); one
    // stored by an earlier release still has a subject of its own.
    await assert.rejects(
      service.create({ tenantId: "\uD800x", name: "ci", scopes: READ_ORDERS }),
      { name: "ApiKeyValidationError", field: "tenantId" },
    );
    assert.equal(counterSubjectOf("tenant", "t1"), "tenant:t1");
    const long = counterSubjectOf("tenant", "é".repeat(90));
    assert.match(long, /^tenant#[0-9a-f]{64}$/);
    assert.notEqual(long, counterSubjectOf("tenant", "é".repeat(91)));
    assert.notEqual(counterSubjectOf("key", "\uD800"), counterSubjectOf("key", "\uDC00"));
    // The subject of earlier releases (noble's bytesToHex of the UTF-16 units): counters carry over.
    const units = new Uint8Array(180);
    for (let i = 0; i < 90; i++) units[2 * i] = 0xe9;
    assert.equal(long, `tenant#${bytesToHex(sha256(units))}`);
  });

  it(
    "a hashed subject asked before SHA-256 has loaded throws (the check fails closed), a readable one answers",
    { skip: !("Deno" in globalThis) && "it starts a fresh Deno process" },
    async () => {
      const limits = new URL("../../../api_keys/metering/_limits.ts", import.meta.url).href;
      const code = `const { counterSubjectOf } = await import(${JSON.stringify(limits)});
        console.log(counterSubjectOf("tenant", "t1"));
        try { counterSubjectOf("tenant", "é".repeat(90)); console.log("answered"); }
        catch (error) { console.log(String(error)); }`;
      const { stdout } = await new Deno.Command(Deno.execPath(), {
        args: ["eval", code],
        stdout: "piped",
        stderr: "null",
      }).output();
      assert.deepEqual(new TextDecoder().decode(stdout).trim().split("\n"), [
        "tenant:t1",
        "Error: api-keys: the SHA-256 of a long tenant id is still loading",
      ]);
    },
  );

  it("a TypeError reaching the check is an error answer (never an open pass), the log naming its cause", async () => {
    const { service } = setup({ onStoreError: "open" });
    const { key } = await service.create({
      tenantId: "t1",
      name: "ci",
      scopes: READ_ORDERS,
      credits: { remaining: 2 },
    });
    let error: unknown;
    const lines = await logged(async () => {
      error = await service.authorize(key, { cost: 2e15 }).then(() => undefined, (e) => e);
    });
    assert.ok(error instanceof TypeError, `got ${error}`);
    assert.match((error as Error).message, /cost must be at most/);
    assert.ok(!lines.some((line) => line.includes("rateLimitResolver")), lines.join("\n"));
  });

  it("a resolver's bad policy is an error answer naming the policy and the field", async () => {
    const { service, create } = setup({
      onStoreError: "open",
      rateLimitResolver: () => [{ name: "plan", limit: 0, windowMs: 1_000 }],
    });
    const { key } = await create();
    let error: unknown;
    const lines = await logged(async () => {
      error = await service.authorize(key).then(() => undefined, (e) => e);
    });
    assert.ok(error instanceof TypeError, `got ${error}`);
    assert.match((error as Error).message, /rateLimitResolver.*"plan": limit/);
    assert.equal(lines.length, 0, "the binding logs it, once, with the route");
  });

  it("a resolver's programming error (TypeError, ReferenceError, RangeError) is a bug answered as an error naming it, never its message; a SyntaxError (its plan service answered HTML) is that service down", async () => {
    for (const thrown of [TypeError, ReferenceError, RangeError]) {
      const { service, create } = setup({
        onStoreError: "open",
        rateLimitResolver: () => {
          throw new thrown("plans of customer-42 is not defined");
        },
      });
      const { key } = await create();
      const error = await service.authorize(key).then(() => undefined, (e) => e);
      assert.ok(error instanceof TypeError, `${thrown.name}: got ${error}`);
      assert.equal((error as Error).message, `rateLimitResolver threw a ${thrown.name}`);
      assert.ok((error as Error).cause instanceof thrown);
    }
    const warn = console.warn;
    const lines: string[] = [];
    console.warn = (line: string) => lines.push(line);
    try {
      const { service, create } = setup({
        onStoreError: "open",
        rateLimitResolver: () => JSON.parse("<html>502 Bad Gateway</html>"),
      });
      const { key } = await create();
      assert.equal((await service.authorize(key)).rateLimitResults, undefined, "passed open");
      assert.equal(lines.length, 1);
      assert.match(lines[0], /rateLimitResolver failed \(SyntaxError\)/);
      assert.doesNotMatch(lines[0], /html|Gateway/);
    } finally {
      console.warn = warn;
    }
  });

  it("a route naming no policy of the key is refused at the request (a key without policies passes)", async () => {
    const { service, create } = setup();
    const { key } = await create([BURST]);
    const error = await service.authorize(key, { rateLimits: "hourly" }).then(
      () => undefined,
      (e) => e,
    );
    assert.ok(error instanceof TypeError, `got ${error}`);
    assert.match((error as Error).message, /"hourly"/);
    assert.match((error as Error).message, /burst/);
    const twice = await service.authorize(key, { rateLimits: ["burst", "burst"] });
    assert.deepEqual(twice.rateLimitResults?.map((r) => r.name), ["burst"]);
    const plain = await create();
    assert.equal(
      (await service.authorize(plain.key, { rateLimits: "hourly" })).rateLimitResults,
      undefined,
    );
  });

  it("rateLimits false: the route counts no policy and spends no credits", async () => {
    const { service } = setup();
    const { key } = await service.create({
      tenantId: "t1",
      name: "ci",
      scopes: READ_ORDERS,
      rateLimits: [{ name: "one", limit: 1, windowMs: 60_000 }],
      credits: { remaining: 1 },
    });
    for (let i = 0; i < 3; i++) {
      const context = await service.authorize(key, { rateLimits: false });
      assert.equal(context.rateLimitResults, undefined);
      assert.equal(context.creditResult, undefined);
    }
    assert.equal((await service.authorize(key)).creditResult?.remaining, 0);
  });

  it("route costs are validated where declared: a safe integer 0..MAX_CREDITS", () => {
    assert.throws(
      () => routeRateLimitOf(undefined, 2e15, "RateLimit"),
      /RateLimit: cost must be at most/,
    );
    assert.throws(() => routeRateLimitOf(undefined, -1, "RateLimit"), /RateLimit: cost/);
    assert.deepEqual(routeRateLimitOf(false, undefined, "RateLimit"), { rateLimits: false });
  });

  it("rateLimits on a key of a service without a limiter is a TypeError", async () => {
    const service = new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage: new InMemoryApiKeyStorage(),
    });
    await assert.rejects(
      service.create({ tenantId: "t1", name: "ci", scopes: READ_ORDERS, rateLimits: [BURST] }),
      (error: unknown) => error instanceof TypeError && /limiter/.test(error.message),
    );
  });

  it("a rotation's keys share the window counters: a 3-per-minute key rotated twice serves at most 3 in a minute", async () => {
    const { service, create } = setup();
    const first = await create([{ name: "minute", limit: 3, windowMs: 60_000 }]);
    const second = await service.rotate(first.id);
    const third = await service.rotate(second.id);
    let served = 0;
    for (let i = 0; i < 5; i++) {
      for (const { key } of [first, second, third]) {
        served += await service.authorize(key).then(() => 1, () => 0);
      }
    }
    assert.equal(served, 3);
  });

  it("a storage that keeps no rateLimitKeyId (PrismaApiKeyStorage today): a credited chain still shares its windows through balanceKeyId", async () => {
    const storage = new InMemoryApiKeyStorage();
    const insert = storage.insert.bind(storage);
    const rotate = storage.rotate.bind(storage);
    const strip = <T extends { rateLimitKeyId?: string }>(record: T): T => {
      const { rateLimitKeyId: _, ...rest } = record;
      return rest as T;
    };
    storage.insert = (record) => insert(strip(record));
    storage.rotate = (rotation) => rotate({ ...rotation, newRecord: strip(rotation.newRecord) });
    const { service } = setup({ storage });
    const first = await service.create({
      tenantId: "t1",
      name: "ci",
      scopes: READ_ORDERS,
      rateLimits: [{ name: "minute", limit: 3, windowMs: 60_000 }],
      credits: { remaining: 100 },
    });
    const second = await service.rotate(first.id);
    let served = 0;
    for (let i = 0; i < 3; i++) {
      for (const { key } of [first, second]) {
        served += await service.authorize(key).then(() => 1, () => 0);
      }
    }
    assert.equal(served, 3);
  });
});

describe("the answered context of an allowed check (RequestLimits.apply)", () => {
  const minute = { name: "minute", limit: 100, windowMs: 60_000 };
  const credits = { remaining: 50, updatedAt: new Date(0) };
  const pool = { remaining: 70, updatedAt: new Date(0) };
  const base = { keyId: "k1", tenantId: "t1", environment: "live" as const, prefix: "p1" };
  const CASES: Record<string, Partial<ApiKeyContext>> = {
    "a policy": { rateLimits: [minute] },
    "credits": { credits },
    "credits and the tenant's pool": { credits: { ...credits, pool } },
    "the pool only": { credits: { ...pool, sharedBy: "tenant" } },
    "a policy and both balances, with an allowlist and a chain": {
      allowedIpCidrs: ["10.0.0.0/8"],
      rateLimits: [minute],
      rateLimitKeyId: "k0",
      credits: { ...credits, pool },
    },
  };
  /** A check of `context` through a limiter of its own (a fresh store at a fixed time). */
  const applyOnce = async (context: ApiKeyContext) => {
    const store = createMemoryRateLimitStore({ now: () => 1_000_000 });
    const limits = new RequestLimits(createRateLimiter({ store, logger: quiet }), undefined);
    return await limits.apply(context, {});
  };

  for (const [name, fields] of Object.entries(CASES)) {
    it(`${name}: the copy of a frozen context equals the one of a context that can change, in the same field order`, async () => {
      const context = () =>
        ({ ...base, scopes: [...READ_ORDERS], ...structuredClone(fields) }) as ApiKeyContext;
      const frozen = await applyOnce(Object.freeze(context()));
      const open = await applyOnce(context());
      assert.deepEqual(frozen, open);
      assert.deepEqual(Object.keys(frozen), Object.keys(open));
      const answers = ["rateLimitResults", "creditResult", "creditBalance", "tenantCreditResult"];
      assert.deepEqual(
        Object.keys(frozen).slice(Object.keys(context()).length),
        answers.filter((key) => key in open),
      );
      assert.equal(frozen.rateLimitResults?.[0].remaining, fields.rateLimits ? 99 : undefined);
      const { own, pool: shared } = fields.credits ? creditPartsOf(fields.credits) : {};
      assert.equal(frozen.creditResult?.remaining, own ? 49 : shared ? 69 : undefined);
      assert.equal(frozen.tenantCreditResult?.remaining, shared ? 69 : undefined);
    });
  }

  it("a cached key without policies or credits answers its own context, until a route adds a policy", async () => {
    const limits = new RequestLimits(createRateLimiter({ logger: quiet }), undefined);
    const context = Object.freeze({ ...base, scopes: [] }) as ApiKeyContext;
    assert.equal(await limits.apply(context, {}), context);
    assert.equal(await limits.apply(context, {}), context);
    const routed = await limits.apply(context, { rateLimits: [minute] });
    assert.equal(routed.rateLimitResults?.[0].remaining, 99);
    assert.equal(await limits.apply(context, { rateLimits: ["minute"] }), context);
    assert.equal(await limits.apply(context, {}), context);
    assert.equal(
      (await limits.apply(context, { rateLimits: [minute] })).rateLimitResults?.[0].remaining,
      98,
    );
  });

  it("contexts asked in turn each keep their own plan: a key's re-read record (new context) is checked as it is now", async () => {
    const store = createMemoryRateLimitStore({ now: () => 1_000_000 });
    const limits = new RequestLimits(createRateLimiter({ store, logger: quiet }), undefined);
    const credited = Object.freeze({ ...base, scopes: [], credits }) as ApiKeyContext;
    const plain = Object.freeze({ ...base, scopes: [] }) as ApiKeyContext;
    const limited = Object.freeze({ ...base, scopes: [], rateLimits: [minute] }) as ApiKeyContext;
    const remaining = [];
    for (let round = 0; round < 2; round++) {
      remaining.push((await limits.apply(credited, {})).creditResult?.remaining);
      assert.equal(await limits.apply(plain, {}), plain, "no check for a context without any");
      remaining.push((await limits.apply(limited, {})).rateLimitResults?.[0].remaining);
      remaining.push((await limits.apply(limited, {})).creditResult?.remaining);
    }
    assert.deepEqual(remaining, [49, 99, undefined, 48, 97, undefined]);
  });

  it("a cached context's answers in a row: each the request's own copy, in the same fields, the earlier ones unchanged", async () => {
    const store = createMemoryRateLimitStore({ now: () => 1_000_000 });
    const limits = new RequestLimits(createRateLimiter({ store, logger: quiet }), undefined);
    const context = Object.freeze({
      ...base,
      scopes: [],
      rateLimits: [minute],
      credits: { ...credits, remaining: 3, pool },
    }) as ApiKeyContext;
    const first = await limits.apply(context, {});
    const second = await limits.apply(context, {});
    const routed = await limits.apply(context, { rateLimits: ["minute"] });
    for (const answer of [first, second, routed]) {
      assert.ok(answer !== context);
      assert.deepEqual(Object.keys(answer), [
        ...Object.keys(context),
        "rateLimitResults",
        "creditResult",
        "creditBalance",
        "tenantCreditResult",
      ]);
      assert.equal(answer.creditBalance, "key");
    }
    assert.ok(first !== second && second !== routed);
    const remaining = (answer: ApiKeyContext) => [
      answer.rateLimitResults?.[0].remaining,
      answer.creditResult?.remaining,
      answer.tenantCreditResult?.remaining,
    ];
    assert.deepEqual([first, second, routed].map(remaining), [[99, 2, 69], [98, 1, 68], [
      97,
      0,
      67,
    ]]);
    let denied: (ApiKeyError & Partial<ApiKeyContext>) | undefined;
    try {
      await limits.apply(context, {});
    } catch (error) {
      denied = error as ApiKeyError & Partial<ApiKeyContext>;
    }
    assert.equal(denied?.code, "api_key_usage_exceeded");
    assert.equal(denied?.keyId, undefined, "a refusal carries the answers only");
    assert.deepEqual([denied?.creditResult?.remaining, denied?.creditBalance], [0, "key"]);
    const after = await limits.apply(context, { cost: 0 });
    assert.deepEqual(remaining(after), [97, 0, 67]);
    assert.deepEqual(remaining(first), [99, 2, 69], "an answer given is never changed");
  });

  it("an allowed answer is the request's own: a write to it reaches neither the cached context nor the next answer", async () => {
    const store = createMemoryRateLimitStore({ now: () => 1_000_000 });
    const limits = new RequestLimits(createRateLimiter({ store, logger: quiet }), undefined);
    const context = Object.freeze({
      ...base,
      scopes: Object.freeze(["orders:read"]),
      rateLimits: Object.freeze([minute]),
      credits: Object.freeze({ ...credits, remaining: 3 }),
    }) as ApiKeyContext;
    const first = await limits.apply(context, {}) as ApiKeyContext & { note?: string };
    first.tenantId = "written";
    first.note = "added";
    assert.ok(Object.isFrozen(context) && Object.isFrozen(context.scopes), "shared: frozen");
    assert.ok(Object.isFrozen(first.scopes), "its arrays are the shared ones, frozen");
    assert.throws(() => (first.scopes as string[]).push("orders:write"), TypeError);
    const second = await limits.apply(context, {}) as ApiKeyContext & { note?: string };
    assert.deepEqual([context.tenantId, second.tenantId, second.note], ["t1", "t1", undefined]);
    assert.deepEqual([second.creditResult?.remaining, second.rateLimitResults?.[0].remaining], [
      1,
      98,
    ]);
  });

  it("a cached context's later answers carry each request's results; a context that changes is copied as it is now", async () => {
    const limits = new RequestLimits(createRateLimiter({ logger: quiet }), undefined);
    const frozen = Object.freeze({ ...base, scopes: [], rateLimits: [minute] }) as ApiKeyContext;
    const first = await limits.apply(frozen, {});
    const second = await limits.apply(frozen, {});
    assert.notEqual(first, second);
    assert.deepEqual(
      [first.rateLimitResults?.[0].remaining, second.rateLimitResults?.[0].remaining],
      [99, 98],
    );
    let prefix = "p1";
    const changing = { ...base, scopes: [], rateLimits: [minute] } as ApiKeyContext;
    Object.defineProperty(changing, "prefix", { get: () => prefix, enumerable: true });
    Object.freeze(changing);
    assert.equal((await limits.apply(changing, {})).prefix, "p1");
    prefix = "p2";
    assert.equal((await limits.apply(changing, {})).prefix, "p2");
  });
});

describe("HashedIds", () => {
  it("keeps a hashed subject's id until a successful drain two passes after it was last noted", () => {
    const ids = new HashedIds();
    const owner = { kind: "tenant" as const, id: "t".repeat(300) };
    ids.note("tenant#aa", owner);
    ids.drained(ids.startPass()); // pass 1: a spend noted before it may still land in pass 2's drain
    assert.deepEqual(ids.get("tenant#aa"), { ...owner, pass: 0 });
    ids.drained(ids.startPass()); // pass 2: drained by now
    assert.equal(ids.get("tenant#aa"), undefined);
    ids.note("tenant#aa", owner);
    ids.startPass(); // a pass whose drain failed forgets nothing
    ids.startPass();
    ids.note("tenant#aa", owner); // noted again while it spends
    ids.drained(ids.startPass());
    assert.equal(ids.get("tenant#aa")?.id, owner.id);
    assert.deepEqual(idOfSubject("tenant#bb", ids), null, "a hashed subject never noted");
    assert.deepEqual(idOfSubject("tenant:t%201", ids), { kind: "tenant", id: "t 1" });
  });
});
