import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  type ApiKeyAuthorizationMetric,
  ApiKeyError,
  ApiKeysService,
  type ApiKeyStorage,
  ApiKeyStorageError,
  type AuthorizeOptions,
  generateKey,
  InMemoryApiKeyStorage,
  parseKey,
} from "../../../api_keys/mod.ts";
import {
  breakChecksum,
  makeService,
  overrideStorage,
  PEPPER_1,
  PEPPER_2,
  READ_ORDERS,
  rejection,
  spyStorage,
} from "../helpers.ts";

/** Counts crypto.subtle.verify calls (the hasher's only verification primitive). */
function countSubtleVerify() {
  const original = crypto.subtle.verify;
  const counter = { calls: 0, restore: () => (crypto.subtle.verify = original) };
  crypto.subtle.verify = function (...args: Parameters<typeof original>) {
    counter.calls++;
    return original.apply(crypto.subtle, args);
  } as typeof original;
  return counter;
}

function stubWarn() {
  const original = console.warn;
  const lines: string[] = [];
  console.warn = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  return { lines, restore: () => (console.warn = original) };
}

function wrongSecret(raw: string): string {
  // keeps a valid checksum: regenerate the body with a changed secret character
  const parsed = parseKey(raw)!;
  const secret = (parsed.secret[0] === "a" ? "b" : "a") + parsed.secret.slice(1);
  for (let c = 0; c < 1; c++) {
    const body = `${parsed.namespace}_${parsed.environment}_${parsed.prefix}_${secret}`;
    return body + checksum(body);
  }
  return raw;
}

import { encodeBase62Fixed } from "../../../api_keys/_base62.ts";
import {
  createRateLimiter,
  MAX_CREDITS,
  type RateLimiter,
  type RateLimitResult,
} from "../../../rate_limits/mod.ts";
import { authorizationFailure } from "../../../api_keys/verify/_verify.ts";
import { crc32Ascii } from "../../../api_keys/key_format.ts";
function checksum(body: string): string {
  return encodeBase62Fixed(crc32Ascii(body), 6);
}

describe("ApiKeysService.verify", () => {
  it("returns a frozen context, one success metric, and no used event by default", async () => {
    const { service, events, metrics } = makeService({ cache: false });
    const { id, key } = await service.create({
      tenantId: "t1",
      name: "ci",
      scopes: READ_ORDERS,
      allowedIpCidrs: ["10.0.0.1"],
    });
    const context = await service.verify(key);
    assert.deepEqual({ ...context }, {
      keyId: id,
      tenantId: "t1",
      environment: "live",
      scopes: ["orders:read"],
      prefix: parseKey(key)!.prefix,
      allowedIpCidrs: ["10.0.0.1/32"],
    });
    assert.ok(Object.isFrozen(context));
    assert.equal(metrics.length, 1);
    assert.equal(metrics[0].outcome, "success");
    assert.equal(metrics[0].environment, "live");
    assert.equal(typeof metrics[0].durationMs, "number");
    assert.deepEqual(events.map((e) => e.type), ["api_key.created"]);
  });

  it("emits api_key.used once per success when emitUsageEvents", async () => {
    const { service, events } = makeService({ emitUsageEvents: true });
    const { key } = await service.create({ tenantId: "t1", name: "ci", scopes: READ_ORDERS });
    await service.verify(key);
    await service.verify(key);
    assert.equal(events.filter((e) => e.type === "api_key.used").length, 2);
  });

  it("rejects malformed keys and bad checksums with zero storage or hasher calls", async () => {
    const { storage, calls } = spyStorage();
    const { service, metrics, authFailures, events } = makeService({ storage });
    const { key } = await service.create({ tenantId: "t1", name: "ci", scopes: READ_ORDERS });
    calls.length = 0;
    const subtle = countSubtleVerify();
    try {
      const badChecksum = key.slice(0, -1) + (key.at(-1) === "a" ? "b" : "a");
      const foreign = new ApiKeysService({
        peppers: { 1: PEPPER_1 },
        storage: new InMemoryApiKeyStorage(),
        namespace: "other",
      });
      const { key: otherNamespace } = await foreign.create({
        tenantId: "t",
        name: "n",
        scopes: READ_ORDERS,
      });
      subtle.calls = 0;
      for (const raw of [badChecksum, "garbage", "x".repeat(100_000), otherNamespace, ""]) {
        const error = await rejection(service.verify(raw));
        assert.ok(error instanceof ApiKeyError);
        assert.equal(error.code, "api_key_malformed");
        assert.equal(error.httpStatus, 401);
      }
      assert.deepEqual(calls, []);
      assert.equal(subtle.calls, 0);
    } finally {
      subtle.restore();
    }
    assert.deepEqual(metrics.map((m) => m.outcome), Array(5).fill("malformed"));
    assert.deepEqual(authFailures, Array(5).fill([null, "api_key_malformed"]));
    const failed = events.filter((e) => e.type === "api_key.auth_failed");
    assert.equal(failed.length, 5);
  });

  it("runs a dummy verify for an unknown prefix, then answers invalid", async () => {
    const { service, metrics, authFailures } = makeService();
    const { key } = await new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage: new InMemoryApiKeyStorage(),
    }).create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const subtle = countSubtleVerify();
    try {
      assert.equal((await rejection(service.verify(key))).code, "api_key_invalid");
      assert.equal(subtle.calls, 1);
    } finally {
      subtle.restore();
    }
    assert.equal(metrics[0].outcome, "invalid");
    assert.deepEqual(authFailures, [[parseKey(key)!.prefix, "api_key_invalid"]]);
  });

  it("checks the secret before revoked and expired (revoked + wrong secret is invalid)", async () => {
    const { service, clocks, metrics, events } = makeService();
    const { id, key } = await service.create({ tenantId: "t1", name: "ci", scopes: READ_ORDERS });
    await service.revoke(id);
    assert.equal((await rejection(service.verify(wrongSecret(key)))).code, "api_key_invalid");
    assert.equal((await rejection(service.verify(key))).code, "api_key_revoked");
    const expiring = await service.create({
      tenantId: "t1",
      name: "short",
      scopes: READ_ORDERS,
      expiresAt: new Date(clocks.now + 1000),
    });
    clocks.advance(1000);
    assert.equal(
      (await rejection(service.verify(wrongSecret(expiring.key)))).code,
      "api_key_invalid",
    );
    assert.equal((await rejection(service.verify(expiring.key))).code, "api_key_expired");
    assert.deepEqual(metrics.map((m) => m.outcome), ["invalid", "revoked", "invalid", "expired"]);
    const failed = events.filter((e) => e.type === "api_key.auth_failed");
    assert.equal(failed[0].type === "api_key.auth_failed" && failed[0].keyId, undefined);
    assert.equal(failed[1].type === "api_key.auth_failed" && failed[1].keyId, id);
  });

  it("refuses a key whose <env> segment was swapped (checksum recomputed), stored or cached", async () => {
    for (const cache of [false, { ttlMs: 60_000 }] as const) {
      const { service, metrics, authFailures } = makeService({ cache });
      for (const environment of ["live", "test"] as const) {
        const { id, key } = await service.create({
          tenantId: "t1",
          name: "k",
          scopes: READ_ORDERS,
          environment,
        });
        const parsed = parseKey(key)!;
        const body = `${parsed.namespace}_${
          environment === "live" ? "test" : "live"
        }_${parsed.prefix}_${parsed.secret}`;
        const swapped = body + checksum(body);
        assert.notEqual(parseKey(swapped), null);
        metrics.length = 0;
        authFailures.length = 0;
        // Storage path (nothing cached yet), then cache-hit path (the real key just verified).
        assert.equal((await rejection(service.verify(swapped))).code, "api_key_invalid");
        assert.equal((await service.verify(key)).keyId, id);
        assert.equal((await rejection(service.verify(swapped))).code, "api_key_invalid");
        assert.equal((await rejection(service.authorize(swapped))).code, "api_key_invalid");
        assert.deepEqual(metrics.map((m) => m.outcome), [
          "invalid",
          "success",
          "invalid",
          "invalid",
        ]);
        assert.deepEqual(authFailures.map(([, code]) => code), Array(3).fill("api_key_invalid"));
        // The real key still works afterwards.
        assert.equal((await service.verify(key)).environment, environment);
      }
    }
  });

  it("keeps keys hashed with an old pepper verifying; a retired version is invalid, warned once", async () => {
    const storage = new InMemoryApiKeyStorage();
    const v1 = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage, cache: false });
    const { key: oldKey } = await v1.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    // Never verified by v2, so never upgraded to version 2 on use.
    const { key: unused } = await v1.create({ tenantId: "t", name: "u", scopes: READ_ORDERS });
    const v2 = new ApiKeysService({
      peppers: { "1": PEPPER_1, "2": PEPPER_2 },
      storage,
      cache: false,
    });
    const { id: newId, key: newKey } = await v2.create({
      tenantId: "t",
      name: "n2",
      scopes: READ_ORDERS,
    });
    assert.equal((await storage.findById(newId))!.pepperVersion, 2);
    assert.equal((await v2.verify(oldKey)).tenantId, "t");
    assert.equal((await v2.verify(newKey)).tenantId, "t");
    const warn = stubWarn();
    try {
      const retired = new ApiKeysService({ peppers: { 2: PEPPER_2 }, storage, cache: false });
      assert.equal((await rejection(retired.verify(unused))).code, "api_key_invalid");
      assert.equal((await rejection(retired.verify(unused))).code, "api_key_invalid");
      assert.equal((await retired.verify(newKey)).tenantId, "t");
      assert.equal(warn.lines.length, 1);
      assert.match(warn.lines[0], /pepper version 1/);
    } finally {
      warn.restore();
    }
  });

  it("turns a throwing storage into a 503 ApiKeyStorageError without leaking the cause", async () => {
    const inner = new InMemoryApiKeyStorage();
    const storage: ApiKeyStorage = overrideStorage(inner, {
      findByPrefix: () => Promise.reject(new Error("connection to db.internal:5432 refused")),
    });
    const creator = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: inner });
    const { key } = await creator.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const { service, metrics, authFailures, events } = makeService({ storage });
    const error = await rejection(service.verify(key));
    assert.ok(error instanceof ApiKeyStorageError);
    assert.equal(error.httpStatus, 503);
    assert.equal(error.code, "api_key_storage_unavailable");
    assert.equal(String(error.message).includes("db.internal"), false);
    assert.equal(JSON.stringify(error).includes("db.internal"), false);
    assert.deepEqual(metrics.map((m) => m.outcome), ["error"]);
    assert.deepEqual(authFailures, []);
    assert.deepEqual(events, []);
  });

  it("refuses a malformed record from a custom storage as a storage error", async () => {
    const inner = new InMemoryApiKeyStorage();
    const creator = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: inner });
    const { key } = await creator.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const storage: ApiKeyStorage = overrideStorage(inner, {
      findByPrefix: () => Promise.resolve({ id: 1, hash: null }),
    });
    const { service } = makeService({ storage });
    assert.ok((await rejection(service.verify(key))) instanceof ApiKeyStorageError);
  });

  it("ends a never-settling storage call at storageTimeoutMs with outcome error", async () => {
    const inner = new InMemoryApiKeyStorage();
    const creator = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: inner });
    const { key } = await creator.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const storage: ApiKeyStorage = overrideStorage(inner, {
      findByPrefix: () => new Promise(() => {}),
    });
    const { service, metrics } = makeService({ storage, storageTimeoutMs: 30 });
    const started = Date.now();
    const error = await rejection(service.verify(key));
    assert.ok(error instanceof ApiKeyStorageError);
    assert.ok(Date.now() - started < 2000);
    assert.deepEqual(metrics.map((m) => m.outcome), ["error"]);
  });

  it("without usage, lastUsedAt is the request's one time: a clock stepping at each read is read once per verify or authorize (cache miss and hit), and lastUsedAt and api_key.used are at that read", async () => {
    const T = Date.parse("2030-01-01T10:00:00.000Z");
    const reads: number[] = [];
    let stepping = false;
    const clock = () => {
      const at = T + 1_000 * reads.length;
      if (stepping) reads.push(at);
      return new Date(at);
    };
    const { service, storage, events } = makeService({
      clock,
      debounceMs: 0,
      emitUsageEvents: true,
    });
    const { id, key } = await service.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      expiresAt: new Date(T + 86_400_000), // its expiry check reads the clock: the request's time
    });
    stepping = true;
    for (const call of ["verify", "verify", "authorize", "authorize"] as const) {
      const before = reads.length;
      events.length = 0;
      await (call === "verify" ? service.verify(key) : service.authorize(key));
      await new Promise((resolve) => setTimeout(resolve, 0)); // the detached touch
      assert.equal(reads.length, before + 1, `${call}: one clock read`);
      const at = reads.at(-1)!;
      assert.equal((await storage.findById(id))!.lastUsedAt?.getTime(), at, call);
      const used = events.filter((e) => e.type === "api_key.used");
      assert.deepEqual(used.map((e) => e.at.getTime()), [at], call);
    }
  });

  it("debounces lastUsedAt per key and never fails a verify for it", async () => {
    const { storage, calls } = spyStorage();
    const { service, clocks } = makeService({ storage, cache: false, debounceMs: 1000 });
    const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.verify(key);
    await service.verify(key);
    assert.equal(calls.filter((c) => c === "touchLastUsed").length, 1);
    assert.equal((await storage.findById(id))!.lastUsedAt?.getTime(), clocks.now);
    clocks.advance(1000);
    await service.verify(key);
    assert.equal(calls.filter((c) => c === "touchLastUsed").length, 2);

    const inner = new InMemoryApiKeyStorage();
    const failing: ApiKeyStorage = overrideStorage(inner, {
      touchLastUsed: () => Promise.reject(new Error("down")),
    });
    const { service: every } = makeService({ storage: failing, debounceMs: 0 });
    const created = await every.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await every.verify(created.key);
    await every.verify(created.key);
  });
});

describe("sinks", () => {
  let warn: ReturnType<typeof stubWarn>;
  beforeEach(() => (warn = stubWarn()));
  afterEach(() => warn.restore());

  it("routes throwing and rejecting sinks to onEventError/onMetricError", async () => {
    const eventErrors: [unknown, string][] = [];
    const metricErrors: [unknown, string][] = [];
    let calls = 0;
    const { service } = makeService({
      onEvent: (event) => {
        calls++;
        if (event.type === "api_key.created") throw new Error("sync");
        return Promise.reject(new Error("async"));
      },
      onEventError: (error, event) => eventErrors.push([error, event.type]),
      onMetric: () => Promise.reject(new Error("metric")),
      onMetricError: (error, metric) => metricErrors.push([error, metric.type]),
      emitUsageEvents: true,
    });
    const { key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.verify(key);
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(calls, 2);
    assert.deepEqual(eventErrors.map(([e, type]) => [(e as Error).message, type]), [
      ["sync", "api_key.created"],
      ["async", "api_key.used"],
    ]);
    assert.deepEqual(metricErrors.map(([e, t]) => [(e as Error).message, t]), [
      ["metric", "api_key.verification"],
    ]);
    assert.deepEqual(warn.lines, []);
  });

  it("without error handlers warns once and swallows; slow sinks never delay verify", async () => {
    const { service } = makeService({
      onEvent: () => {
        throw new Error("boom pepper-one-0123456789");
      },
      onMetric: () => new Promise(() => {}),
      onEventError: undefined,
      onMetricError: undefined,
      onAuthFailed: () => {
        throw new Error("auth sink");
      },
    });
    const { key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.verify(key);
    await rejection(service.verify("garbage"));
    await rejection(service.verify("garbage"));
    assert.equal(warn.lines.filter((l) => l.includes("onEvent")).length, 1);
    assert.equal(warn.lines.filter((l) => l.includes("onAuthFailed")).length, 1);
    assert.equal(warn.lines.some((l) => l.includes("pepper")), false);
  });
});

describe("secrets stay out of events, metrics, errors and onAuthFailed", () => {
  it("never carries the raw key or secret", async () => {
    const seen: unknown[] = [];
    const { service, events, metrics, clocks } = makeService({
      emitUsageEvents: true,
      onAuthFailed: (prefix, code) => seen.push([prefix, code]),
    });
    const { id, key } = await service.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      allowedIpCidrs: ["10.0.0.0/8"],
      expiresAt: new Date(clocks.now + 10_000),
    });
    const rotated = await service.rotate(id, { expiresAt: new Date(clocks.now + 15_000) });
    const keys = [key, rotated.key];
    await service.verify(key);
    await service.authorize(rotated.key, { clientIp: "10.1.1.1" });
    for (
      const attempt of [
        () => service.authorize(key, { clientIp: "11.1.1.1" }),
        () => service.authorize(key, { clientIp: "10.1.1.1", requiredEnvironment: "test" }),
        () => service.verify(wrongSecret(key)),
        () => service.verify(breakChecksum(key)),
      ]
    ) seen.push(await rejection(attempt()));
    await service.revoke(id);
    seen.push(await rejection(service.verify(key)));
    clocks.advance(20_000);
    seen.push(await rejection(service.verify(rotated.key)));
    const secrets = keys.flatMap((raw) => [raw, parseKey(raw)!.secret]);
    const dump = JSON.stringify([events, metrics, seen]) +
      seen.map((e) => (e instanceof Error ? e.message + e.stack : "")).join();
    for (const secret of secrets) assert.equal(dump.includes(secret), false);
    assert.ok(events.length >= 8);
  });
});

describe("ApiKeysService.authorize", () => {
  it("answers api_key_missing for undefined or empty keys", async () => {
    const { service, authFailures, metrics } = makeService();
    for (const raw of [undefined, ""]) {
      const error = await rejection(service.authorize(raw));
      assert.ok(error instanceof ApiKeyError);
      assert.equal(error.code, "api_key_missing");
      assert.equal(error.httpStatus, 401);
    }
    assert.deepEqual(authFailures, [[null, "api_key_missing"], [null, "api_key_missing"]]);
    assert.deepEqual(metrics, []);
  });

  it("throws a TypeError for an unknown required scope level, before any verification", async () => {
    const { service, authFailures, metrics } = makeService();
    const { key } = await service.create({
      tenantId: "t1",
      name: "n",
      scopes: [{ resource: "orders", level: "write" }],
    });
    for (const level of ["Write", "admin", undefined]) {
      const requiredScope = { resource: "orders", level: level as "read" };
      for (const raw of [key, undefined]) {
        const error = await rejection(service.authorize(raw, { requiredScope }));
        assert.ok(error instanceof TypeError, `${level}: ${String(error)}`);
        assert.match(String(error.message), /level/);
      }
    }
    assert.deepEqual(authFailures, []);
    assert.deepEqual(metrics, []);
  });

  it("throws a TypeError for a cost over MAX_CREDITS, before any verification, with a limiter or without", async () => {
    for (const limiter of [undefined, createRateLimiter({ logger: () => {} })]) {
      const { service, authFailures, metrics } = makeService({ limiter });
      const { key } = await service.create({ tenantId: "t1", name: "n", scopes: READ_ORDERS });
      for (const cost of [MAX_CREDITS + 1, Number.MAX_SAFE_INTEGER - 1]) {
        const error = await rejection(service.authorize(key, { cost }));
        assert.ok(error instanceof TypeError, `${cost}: ${String(error)}`);
        assert.match(error.message, /AuthorizeOptions\.cost must be at most 1000000000000000/);
      }
      await service.authorize(key, { cost: MAX_CREDITS });
      assert.deepEqual(authFailures, []);
      assert.equal(metrics.length, 1, "only the allowed request is counted");
    }
  });

  it("checks IP, then environment, then scope, reporting each with the key's identity", async () => {
    const { service, events, authFailures } = makeService({ emitUsageEvents: true });
    const { id, key } = await service.create({
      tenantId: "t1",
      name: "n",
      environment: "test",
      scopes: READ_ORDERS,
      allowedIpCidrs: ["10.0.0.0/8"],
    });
    const all = {
      clientIp: "192.168.1.1",
      requiredEnvironment: "live" as const,
      requiredScope: { resource: "orders", level: "write" as const },
    };
    const codes = [];
    codes.push((await rejection(service.authorize(key, all))).code);
    codes.push((await rejection(service.authorize(key, { ...all, clientIp: undefined }))).code);
    codes.push((await rejection(service.authorize(key, { ...all, clientIp: "10.0.0.1" }))).code);
    codes.push(
      (await rejection(
        service.authorize(key, { ...all, clientIp: "10.0.0.1", requiredEnvironment: "test" }),
      )).code,
    );
    assert.deepEqual(codes, [
      "api_key_ip_not_allowed",
      "api_key_ip_not_allowed",
      "api_key_environment_mismatch",
      "api_key_scope_insufficient",
    ]);
    assert.equal(authFailures.length, 4);
    const failed = events.filter((e) => e.type === "api_key.auth_failed");
    assert.equal(failed.length, 4);
    for (const event of failed) {
      assert.equal(event.type === "api_key.auth_failed" && event.keyId, id);
      assert.equal(event.type === "api_key.auth_failed" && event.tenantId, "t1");
      assert.equal(event.type === "api_key.auth_failed" && event.environment, "test");
    }
    assert.equal(events.filter((e) => e.type === "api_key.used").length, 0);
    const context = await service.authorize(key, {
      clientIp: "::ffff:10.2.3.4",
      requiredEnvironment: "test",
      requiredScope: { resource: "orders", level: "read" },
    });
    assert.equal(context.keyId, id);
    assert.equal(events.filter((e) => e.type === "api_key.used").length, 1);
  });

  it("reports verification failures once (not twice) and storage failures not at all", async () => {
    const { service, events, authFailures } = makeService();
    await rejection(service.authorize("garbage"));
    assert.equal(authFailures.length, 1);
    assert.equal(events.filter((e) => e.type === "api_key.auth_failed").length, 1);
  });
});

/** A storage lookup by prefix, awaited or synchronous. */
const isLookup = (call: string) => call === "findByPrefix" || call === "peekByPrefix";

describe("verification cache", () => {
  it("is on by default for storage with peekByPrefix (in-memory): a hit skips storage and hashing", async () => {
    const { storage, calls } = spyStorage();
    const { service, metrics } = makeService({ storage });
    const { key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.verify(key);
    await service.verify(key);
    await service.authorize(key);
    assert.equal(calls.filter(isLookup).length, 1);
    assert.deepEqual(metrics.map((m) => m.outcome), ["success", "success", "success"]);
  });

  it("is off with other storage unless enabled", async () => {
    const { storage, calls } = spyStorage();
    // A plain object delegating to the spy's seven operations: no peekByPrefix.
    const plain = overrideStorage(storage, {});
    const { service } = makeService({ storage: plain });
    const { key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.verify(key);
    await service.verify(key);
    assert.equal(calls.filter((c) => c === "findByPrefix").length, 2);
    const { service: cached } = makeService({ storage: plain, cache: { ttlMs: 1000 } });
    const other = await cached.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await cached.verify(other.key);
    await cached.verify(other.key);
    assert.equal(calls.filter((c) => c === "findByPrefix").length, 3);
  });

  it("takes the full path for a wrong secret and after the TTL", async () => {
    const { storage, calls } = spyStorage();
    const { service, clocks } = makeService({ storage, cache: { ttlMs: 1000 } });
    const { key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.verify(key);
    const parsedSecretChanged = key.slice(0, 25) + (key[25] === "a" ? "b" : "a") + key.slice(26);
    await rejection(service.verify(parsedSecretChanged));
    clocks.advance(1000);
    await service.verify(key);
    assert.equal(calls.filter(isLookup).length, 2);
  });

  it("compares a wrong secret on a cached prefix as an unknown prefix does, in every layout (a legacy secretLength other than 32 too)", async () => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const random = (n: number) =>
      Array.from({ length: n }, () => alphabet[Math.floor(Math.random() * 62)]).join("");
    /** charCodeAt calls of a verify's synchronous part (the parse and the cache comparison). */
    const comparisons = async (service: ApiKeysService, raw: string) => {
      const original = String.prototype.charCodeAt;
      let calls = 0;
      String.prototype.charCodeAt = function (this: string, index: number) {
        calls++;
        return original.call(this, index);
      };
      let pending: Promise<unknown>;
      try {
        pending = service.verify(raw);
      } finally {
        String.prototype.charCodeAt = original;
      }
      assert.equal((await rejection(pending)).code, "api_key_invalid");
      return calls;
    };
    // Without peekByPrefix: the synchronous part ends at the lookup, before any hashing.
    const storage = () => overrideStorage(new InMemoryApiKeyStorage(), {});
    const { service: current } = makeService({ storage: storage(), cache: { ttlMs: 60_000 } });
    const { key } = await current.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await current.verify(key); // cached
    const unknownKey = () => generateKey({ environment: "live" }).raw;
    await comparisons(current, wrongSecret(key));
    await comparisons(current, unknownKey());
    assert.equal(
      await comparisons(current, wrongSecret(key)),
      await comparisons(current, unknownKey()),
    );
    for (const secretLength of [16, 32, 40, 128]) {
      const layout = {
        name: "acme-v1",
        separator: "-" as const,
        namespace: "sk",
        environments: { live: "prod", test: "dev" },
        prefixLength: 12,
        secretLength,
        alphabet: "base62" as const,
        checksum: false,
      };
      const { service } = makeService({
        storage: storage(),
        cache: { ttlMs: 60_000 },
        legacyKeyLayouts: [layout],
      });
      const prefix = random(12);
      const secret = random(secretLength);
      const imported = await service.importKeys([{
        tenantId: "t1",
        name: "old",
        environment: "live",
        prefix,
        hash: createHash("sha256").update(secret + PEPPER_1).digest("hex"),
        hashScheme: "sha256-pepper",
        pepperVersion: 1,
        scopes: ["orders:read"],
        layout: "acme-v1",
      }]);
      assert.equal(imported.imported, 1);
      await service.verify(`sk-prod-${prefix}-${secret}`); // cached
      const wrongCached = () => `sk-prod-${prefix}-${random(secretLength)}`;
      const unknownPrefix = () => `sk-prod-${random(12)}-${random(secretLength)}`;
      await comparisons(service, wrongCached()); // warm both paths
      await comparisons(service, unknownPrefix());
      assert.equal(
        await comparisons(service, wrongCached()),
        await comparisons(service, unknownPrefix()),
        `secretLength ${secretLength}`,
      );
    }
  });

  it("re-checks expiry and grace end on every hit", async () => {
    const { service, clocks } = makeService();
    const { id, key } = await service.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      expiresAt: new Date(clocks.now + 500),
    });
    await service.verify(key);
    clocks.advance(500);
    assert.equal((await rejection(service.verify(key))).code, "api_key_expired");
    const second = await service.create({ tenantId: "t", name: "m", scopes: READ_ORDERS });
    await service.verify(second.key);
    await service.rotate(second.id, { gracePeriodMs: 200 });
    await service.verify(second.key); // inside the grace period
    clocks.advance(200);
    assert.equal((await rejection(service.verify(second.key))).code, "api_key_expired");
    assert.ok(id);
  });

  it("keeps a proven revoked or expired key's refusal: no storage read again, the same failure reports", async () => {
    const { storage, calls } = spyStorage();
    // Awaited lookups, as a database storage, with the usage capability.
    const plain = {
      ...overrideStorage(storage, {}),
      recordUsage: storage.recordUsage!.bind(storage),
      readUsage: storage.readUsage!.bind(storage),
    };
    const usage = { flushIntervalMs: 60_000 };
    const { service, clocks, metrics, events } = makeService({
      storage: plain,
      cache: { ttlMs: 1_000 },
      usage,
      emitUsageEvents: false,
    });
    const revoked = await service.create({ tenantId: "t", name: "r", scopes: READ_ORDERS });
    const expiring = await service.create({
      tenantId: "t",
      name: "e",
      scopes: READ_ORDERS,
      expiresAt: new Date(clocks.now + 10),
    });
    await service.revoke(revoked.id);
    clocks.advance(10);
    const lookups = () => calls.filter(isLookup).length;
    const before = lookups();
    for (let i = 0; i < 5; i++) {
      assert.equal((await rejection(service.verify(revoked.key))).code, "api_key_revoked");
      assert.equal((await rejection(service.verify(expiring.key))).code, "api_key_expired");
    }
    assert.equal(lookups() - before, 2, "one lookup per key, then the kept refusal");
    const failed = events.filter((e) => e.type === "api_key.auth_failed");
    assert.equal(failed.length, 10);
    assert.ok(failed.every((e) => "keyId" in e && e.tenantId === "t"));
    assert.equal(metrics.filter((m) => m.outcome === "revoked").length, 5);
    assert.equal(metrics.filter((m) => m.outcome === "expired").length, 5);
    const wrong = wrongSecret(revoked.key);
    assert.equal((await rejection(service.verify(wrong))).code, "api_key_invalid");
    assert.equal(lookups() - before, 3, "a wrong secret still takes the full path");
    clocks.advance(1_000);
    await rejection(service.verify(revoked.key));
    assert.equal(lookups() - before, 4, "the kept refusal ends with the TTL");
    await service.close();
    const [bucket] = await service.usage("t", {
      keyId: revoked.id,
      from: new Date(clocks.now - 3_600_000),
      to: new Date(clocks.now + 3_600_000),
      granularity: "hour",
    });
    assert.equal(bucket.refused.api_key_revoked, 6);
  });

  it("is invalidated at once by revoke and rotate through the service", async () => {
    const { service } = makeService();
    const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.verify(key);
    await service.revoke(id);
    assert.equal((await rejection(service.verify(key))).code, "api_key_revoked");
    const other = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.verify(other.key);
    await service.rotate(other.id, { gracePeriodMs: 0 });
    assert.equal((await rejection(service.verify(other.key))).code, "api_key_expired");
  });
});

describe("authorizationFailure", () => {
  const context = Object.freeze({
    keyId: "k1",
    tenantId: "t1",
    environment: "test" as const,
    scopes: ["orders:read"],
    prefix: "AbCdEfGhIjKl",
    allowedIpCidrs: ["10.0.0.0/8"],
  });

  it("answers the first failing check: IP allowlist, then environment, then scope", () => {
    const write = { resource: "orders", level: "write" as const };
    assert.equal(
      authorizationFailure(context, { requiredEnvironment: "live", requiredScope: write }),
      "api_key_ip_not_allowed",
    );
    assert.equal(
      authorizationFailure(context, {
        clientIp: "10.1.2.3",
        requiredEnvironment: "live",
        requiredScope: write,
      }),
      "api_key_environment_mismatch",
    );
    assert.equal(
      authorizationFailure(context, { clientIp: "10.1.2.3", requiredScope: write }),
      "api_key_scope_insufficient",
    );
    assert.equal(
      authorizationFailure(context, {
        clientIp: "10.1.2.3",
        requiredEnvironment: "test",
        requiredScope: { resource: "orders", level: "read" },
      }),
      undefined,
    );
  });
});

describe("VerifyFlow: the api_key.authorization metric", () => {
  it("reports each refusal after a proven secret with its outcome, and nothing else", async () => {
    const metrics: ApiKeyAuthorizationMetric[] = [];
    const { service } = makeService({
      onAuthorizationMetric: (metric) => {
        metrics.push(metric);
      },
    });
    const { id, key } = await service.create({
      tenantId: "tenant-secret",
      name: "k",
      scopes: READ_ORDERS,
      environment: "test",
      allowedIpCidrs: ["10.1.0.0/16"],
    });
    const inside = { clientIp: "10.1.2.3" };
    await service.authorize(key, { ...inside, requiredScope: READ_ORDERS[0] });
    await rejection(service.authorize(breakChecksum(key), inside));
    await rejection(service.authorize(undefined));
    assert.deepEqual(metrics.map((m) => m.outcome), ["success", "credential_rejected", "missing"]);
    metrics.length = 0;
    const refusals: [AuthorizeOptions, string][] = [
      [{ clientIp: "192.0.2.7" }, "ip_denied"],
      [{ ...inside, requiredEnvironment: "live" }, "environment_denied"],
      [{ ...inside, requiredScope: { resource: "orders", level: "write" } }, "scope_denied"],
    ];
    for (const [options, outcome] of refusals) {
      await rejection(service.authorize(key, options));
      assert.deepEqual(metrics.at(-1), {
        type: "api_key.authorization",
        outcome,
        durationMs: 0, // the fake monotonic clock stands still
        environment: "test",
      });
    }
    assert.equal(metrics.length, 3);
    const json = JSON.stringify(metrics);
    for (const secret of [id, "tenant-secret", key, parseKey(key)!.prefix, "192.0.2.7", "10.1"]) {
      assert.equal(json.includes(secret), false, `the metric carries ${secret}`);
    }
  });
});

describe("VerifyFlow: clock reads per request", () => {
  it("reads the monotonic clock once at the start (shared by the verification) and once per metric at the end", async () => {
    let reads = 0;
    const durations: number[] = [];
    const { service } = makeService({
      cache: { ttlMs: 60_000 },
      monotonicClock: () => ++reads,
      onAuthorizationMetric: (metric) => {
        durations.push(metric.durationMs);
      },
    });
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    await service.authorize(key); // fills the cache
    reads = 0;
    await service.authorize(key);
    // The start (the verification's too), the verification metric's end, the authorization metric's end.
    assert.equal(reads, 3);
    assert.equal(durations.at(-1), 2, "the authorization's duration runs from the one start");
    reads = 0;
    await service.authorizeRequest((name) => name === "x-api-key" ? key : undefined);
    assert.equal(reads, 3, "authorizeRequest: the same, its header rules inside the one start");
    reads = 0;
    await service.verify(key);
    assert.equal(reads, 2, "a verify: its start and its metric's end");
  });

  const NOW = Date.UTC(2026, 0, 1);
  /** A service with usage and used events whose wall clock (at `NOW`) counts its reads, and a key expiring tomorrow. */
  async function wallCounted(cache: false | { ttlMs: number }) {
    const wall = { reads: 0 };
    const made = makeService({
      cache,
      clock: () => {
        wall.reads++;
        return new Date(NOW);
      },
      usage: { flushIntervalMs: 3_600_000 },
      emitUsageEvents: true,
    });
    const expiring = await made.service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      expiresAt: new Date(NOW + 86_400_000),
    });
    return { ...made, wall, key: expiring.key };
  }

  it("an expiring key with usage and used events: one wall-clock read per request serves the expiry, the usage count and the event", async () => {
    const { service, events, wall, key } = await wallCounted({ ttlMs: 60_000 });
    await service.authorize(key); // fills the cache
    for (const call of [() => service.authorize(key), () => service.verify(key)]) {
      wall.reads = 0;
      await call();
      assert.equal(wall.reads, 1);
      const used = events.at(-1);
      assert.equal(used?.type, "api_key.used");
      assert.equal(used.at.getTime(), NOW);
    }
    await service.close();
  });

  it("on the storage path too: an expiring key's expiry read serves the request; a key without expiry reads one for its usage and event", async () => {
    const { service, wall, key: expiring } = await wallCounted(false);
    const lasting = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    for (const key of [expiring, lasting.key]) {
      await service.verify(key);
      wall.reads = 0;
      await service.verify(key);
      assert.equal(wall.reads, 1, "usage and api_key.used share one read when the expiry did not");
    }
    await service.close();
  });

  it("with the default clocks, a cached authorization with limits takes its wall-clock time from its monotonic start: the check, usage and api_key.used at one time, Date.now() read again after 100 ms", async () => {
    const realPerformanceNow = performance.now;
    let mono = 1_000;
    performance.now = () => mono;
    // An hour-long window (sub-buckets of 6 min): the check's resetMs moves with the time it counts at.
    const hourly = [{ name: "api", limit: 1_000, windowMs: 3_600_000 }];
    const limitedService = (clock?: () => Date) =>
      makeService({
        cache: { ttlMs: 60_000 },
        clock,
        monotonicClock: undefined,
        onMetric: undefined,
        limiter: createRateLimiter({ logger: () => {} }),
        emitUsageEvents: true,
      });
    try {
      const { service, events } = limitedService();
      const { key } = await service.create({
        tenantId: "t1",
        name: "k",
        scopes: READ_ORDERS,
        rateLimits: hourly,
      });
      await service.authorize(key); // fills the cache (reading Date.now() at its monotonic start)
      mono += 100;
      const usedAt = () => {
        const used = events.at(-1);
        assert.equal(used?.type, "api_key.used");
        return used.at.getTime();
      };
      const before = Date.now();
      const first = await service.authorize(key);
      const at = usedAt();
      assert.ok(before <= at && at <= Date.now(), "100 ms after the fill: Date.now() read again");
      mono += 50;
      const second = await service.authorize(key);
      assert.equal(usedAt(), at + 50, "50 ms of monotonic time later: no read, 50 ms on");
      assert.equal(
        second.rateLimitResults![0].resetMs,
        first.rateLimitResults![0].resetMs - 50,
        "counted at the request's time (not at the store's own read)",
      );
      mono += 1e9;
      const third = Date.now();
      await service.authorize(key);
      assert.ok(usedAt() >= third && usedAt() <= Date.now(), "100 ms on: read again");
      // An injected wall clock is read as it is: the store counts at its own read.
      const injected = limitedService(() => new Date());
      const other = await injected.service.create({
        tenantId: "t1",
        name: "k",
        scopes: READ_ORDERS,
        rateLimits: hourly,
      });
      await injected.service.authorize(other.key);
      const one = await injected.service.authorize(other.key);
      mono += 50;
      const two = await injected.service.authorize(other.key);
      const moved = one.rateLimitResults![0].resetMs - two.rateLimitResults![0].resetMs;
      assert.ok(moved < 50, `the store's own Date.now() (moved ${moved} ms)`);
    } finally {
      performance.now = realPerformanceNow;
    }
  });

  it("without metrics reads the monotonic clock once per cached authorization, headers or not", async () => {
    let reads = 0;
    const { service } = makeService({
      cache: { ttlMs: 60_000 },
      monotonicClock: () => ++reads,
      onMetric: undefined,
    });
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    await service.authorize(key);
    await service.authorizeRequest((name) => name === "x-api-key" ? key : undefined);
    reads = 0;
    await service.authorize(key);
    assert.equal(reads, 1);
    reads = 0;
    await service.authorizeRequest((name) => name === "x-api-key" ? key : undefined);
    assert.equal(reads, 1);
  });
});

describe("VerifyFlow: seed 0.4 authorization contracts", () => {
  it("reports success, missing, credential_rejected and error outcomes", async () => {
    const metrics: ApiKeyAuthorizationMetric[] = [];
    let fail = false;
    const inner = new InMemoryApiKeyStorage();
    const storage = overrideStorage(inner, {
      findByPrefix: (prefix: string) =>
        fail ? Promise.reject(new Error("down")) : inner.findByPrefix(prefix),
    });
    const { service } = makeService({
      storage,
      cache: false,
      onAuthorizationMetric: (metric) => {
        metrics.push(metric);
      },
    });
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    await service.authorize(key);
    await rejection(service.authorize(undefined));
    await rejection(service.authorize("not a key"));
    await rejection(service.authorize(breakChecksum(key)));
    await rejection(service.authorizeRequest(() => undefined));
    fail = true;
    await assert.rejects(service.authorize(key));
    assert.deepEqual(metrics.map((m) => m.outcome), [
      "success",
      "missing",
      "credential_rejected",
      "credential_rejected",
      "missing",
      "error",
    ]);
    assert.equal(metrics[0].environment, "live");
  });

  it("emits api_key.authorization_denied with only type, at and code, beside auth_failed", async () => {
    const { service, events, clocks } = makeService();
    const { key } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      allowedIpCidrs: ["10.0.0.0/8"],
    });
    events.length = 0;
    await rejection(service.authorize(key, { clientIp: "192.0.2.1" }));
    await rejection(service.authorize(undefined));
    await rejection(service.authorize(breakChecksum(key)));
    const denied = events.filter((e) => e.type === "api_key.authorization_denied");
    assert.deepEqual(denied, [
      {
        type: "api_key.authorization_denied",
        at: new Date(clocks.now),
        code: "api_key_ip_not_allowed",
      },
      { type: "api_key.authorization_denied", at: new Date(clocks.now), code: "api_key_missing" },
      { type: "api_key.authorization_denied", at: new Date(clocks.now), code: "api_key_malformed" },
    ]);
    assert.equal(events.filter((e) => e.type === "api_key.auth_failed").length, 3);
    events.length = 0;
    await rejection(service.verify(breakChecksum(key)));
    assert.deepEqual(events.map((e) => e.type), ["api_key.auth_failed"], "verify alone: no denial");
  });

  it("writes no lastUsedAt on a denied request, and writes it on an accepted one", async () => {
    const { service, storage } = makeService({ debounceMs: 0 });
    const { id, key } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      environment: "test",
      allowedIpCidrs: ["10.0.0.0/8"],
    });
    const denials: AuthorizeOptions[] = [
      { clientIp: "192.0.2.1" },
      { clientIp: "10.0.0.1", requiredEnvironment: "live" },
      { clientIp: "10.0.0.1", requiredScope: { resource: "orders", level: "write" } },
    ];
    for (const options of denials) {
      await rejection(service.authorize(key, options));
      assert.equal((await storage.findById(id))!.lastUsedAt, null, JSON.stringify(options));
    }
    await service.authorize(key, { clientIp: "10.0.0.1" });
    assert.notEqual((await storage.findById(id))!.lastUsedAt, null);
  });

  it("without usage, a request checked twice writes lastUsedAt at its first check: a later check refusing it leaves that time (docs/api-keys.md)", async () => {
    const { service, storage, clocks } = makeService({ debounceMs: 0 });
    const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    clocks.advance(60_000);
    await service.authorize(key);
    clocks.advance(60_000);
    const request = {};
    await service.authorize(key, { request });
    const write = { resource: "orders", level: "write" } as const;
    assert.equal(
      (await rejection(service.authorize(key, { request, requiredScope: write }))).code,
      "api_key_scope_insufficient",
    );
    assert.equal((await storage.findById(id))!.lastUsedAt?.getTime(), clocks.now);
  });

  it("hands sinks frozen event payloads", async () => {
    const { service, events } = makeService();
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    await rejection(service.authorize(breakChecksum(key)));
    assert.ok(events.length >= 3);
    for (const event of events) {
      assert.ok(Object.isFrozen(event), event.type);
      for (const value of Object.values(event)) {
        if (Array.isArray(value)) assert.ok(Object.isFrozen(value), `${event.type} array`);
      }
    }
  });
});

describe("seed 0.4: tenant ids already stored keep verifying", () => {
  it("verifies and authorizes a stored key whose tenant id create would now refuse", async () => {
    for (const tenantId of [" legacy tenant ", "t".repeat(300)]) {
      const inner = new InMemoryApiKeyStorage();
      const storage = overrideStorage(inner, {
        findByPrefix: async (prefix: string) => {
          const record = await inner.findByPrefix(prefix);
          return record === null ? null : { ...record, tenantId };
        },
      });
      const { service } = makeService({ storage, cache: false });
      const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      assert.equal((await service.verify(key)).tenantId, tenantId);
      assert.equal((await service.authorize(key)).tenantId, tenantId);
    }
  });
});

describe("VerifyFlow: a cached key's authorization with an in-process limiter", () => {
  /**
   * A service whose limiter's synchronous check is `checkNow` (by default the memory
   * store's); with `asynchronous`, a limiter without one, checking through it.
   */
  function cachedSetup(
    checkNow?: RateLimiter["checkNow"],
    asynchronous?: (inner: RateLimiter) => RateLimiter["check"],
  ) {
    const inner = createRateLimiter({ logger: () => {} });
    const { checkNow: _, ...remote } = inner;
    const limiter: RateLimiter = asynchronous !== undefined
      ? { ...remote, check: asynchronous(inner) }
      : {
        ...inner,
        check: () => Promise.reject(new Error("check called where checkNow serves")),
        checkNow: checkNow ?? inner.checkNow,
      };
    const outcomes: string[] = [];
    const made = makeService({
      limiter,
      debounceMs: 0,
      emitUsageEvents: true,
      cache: { ttlMs: 60_000 },
      onAuthorizationMetric: (metric) => {
        outcomes.push(metric.outcome);
      },
    });
    return { ...made, inner, outcomes };
  }

  it("is settled before authorize returns: its reports are out, the same as on the storage path", async () => {
    const { service, events, outcomes } = cachedSetup();
    const { key } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      rateLimits: [{ name: "minute", limit: 10, windowMs: 60_000 }],
      credits: { remaining: 10 },
    });
    events.length = 0;
    const first = await service.authorize(key); // the storage path fills the cache
    const stored = events.map((e) => e.type);
    assert.deepEqual(outcomes, ["success"]);
    events.length = 0;
    const pending = service.authorize(key);
    // Nothing awaited yet: a cache hit with a synchronous check has already been recorded.
    assert.deepEqual(events.map((e) => e.type), stored);
    assert.deepEqual(outcomes, ["success", "success"]);
    const second = await pending;
    assert.equal(first.rateLimitResults?.[0].remaining, 9);
    assert.equal(second.rateLimitResults?.[0].remaining, 8);
    assert.equal(second.creditResult?.remaining, 8);
    assert.deepEqual(Object.keys(second), Object.keys(first));
  });

  it("rejects, never throws, when a clock fails on the synchronous path", async () => {
    let broken = false;
    const { service } = makeService({
      limiter: createRateLimiter({ logger: () => {} }),
      cache: { ttlMs: 60_000 },
      monotonicClock: () => {
        if (broken) throw new Error("clock down");
        return 1_000;
      },
    });
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    await service.authorize(key);
    broken = true;
    for (const call of [() => service.authorize(key), () => service.verify(key)]) {
      let pending: Promise<unknown> | undefined;
      assert.doesNotThrow(() => (pending = call()));
      await assert.rejects(pending!, /clock down/);
    }
  });

  it("denies when the synchronous check throws or answers garbage: an error, never an open pass, no use recorded", async () => {
    let broken: "throw" | "garbage" | undefined;
    const { service, events, outcomes, storage, clocks, inner } = cachedSetup(
      (subject, policies, options) => {
        if (broken === "throw") throw new Error("store bug");
        if (broken === "garbage") return undefined as unknown as RateLimitResult;
        return inner.checkNow!(subject, policies, options);
      },
    );
    const { id, key } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      rateLimits: [{ name: "minute", limit: 10, windowMs: 60_000 }],
    });
    await service.authorize(key);
    const usedAt = (await storage.findById(id))!.lastUsedAt;
    assert.notEqual(usedAt, null);
    for (const mode of ["throw", "garbage"] as const) {
      broken = mode;
      clocks.advance(1_000);
      events.length = 0;
      outcomes.length = 0;
      const error = await service.authorize(key).then(() => undefined, (e) => e);
      assert.ok(error instanceof TypeError, `${mode}: got ${error}`);
      assert.deepEqual(outcomes, ["error"], mode);
      assert.ok(!events.some((e) => e.type === "api_key.used"), mode);
      assert.deepEqual((await storage.findById(id))!.lastUsedAt, usedAt, mode);
    }
    broken = undefined;
    assert.equal((await service.authorize(key)).rateLimitResults?.[0].remaining, 8);
  });

  it("an asynchronous check's answer is recorded as a synchronous one's: allowed, refused, or a bug (never an open pass)", async () => {
    let broken = false;
    // No checkNow: the check answers through a promise (as a remote store's does).
    const { service, events, outcomes } = cachedSetup(
      undefined,
      (inner) => (subject, policies, options) =>
        broken
          ? Promise.reject(new TypeError("store bug"))
          : inner.check(subject, policies, options),
    );
    const { key } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      rateLimits: [{ name: "minute", limit: 2, windowMs: 60_000 }],
      credits: { remaining: 10 },
    });
    await service.authorize(key); // the storage path fills the cache
    events.length = 0;
    const allowed = await service.authorize(key);
    assert.equal(allowed.rateLimitResults?.[0].remaining, 0);
    assert.equal(allowed.creditResult?.remaining, 8);
    assert.deepEqual(events.map((e) => e.type), ["api_key.used"]);
    const refused = await service.authorize(key).then(() => undefined, (e) => e);
    assert.equal(refused?.code, "api_key_rate_limited");
    broken = true;
    const bug = await service.authorize(key).then(() => undefined, (e) => e);
    assert.ok(bug instanceof TypeError, `got ${bug}`);
    assert.deepEqual(outcomes, ["success", "success", "rate_limited", "error"]);
    assert.deepEqual(events.map((e) => e.type).filter((t) => t === "api_key.used").length, 1);
  });
});

describe("VerifyFlow: one charge per request and service", () => {
  /** A service with a limiter, a key of 10 credits under a 10-a-minute policy, its events. */
  async function chargedSetup() {
    const outcomes: string[] = [];
    const limiter = createRateLimiter({ logger: () => {} });
    const made = makeService({
      limiter,
      emitUsageEvents: true,
      onAuthorizationMetric: (metric) => {
        outcomes.push(metric.outcome);
      },
    });
    const { key } = await made.service.create({
      tenantId: "t1",
      name: "k",
      environment: "test",
      scopes: READ_ORDERS,
      rateLimits: [{ name: "minute", limit: 10, windowMs: 60_000 }],
      credits: { remaining: 10 },
    });
    made.events.length = 0;
    return { ...made, key, outcomes, limiter };
  }

  /** What is left of the key's credits and window (a check of cost 0 spends nothing). */
  async function left(service: ApiKeysService, key: string) {
    const context = await service.authorize(key, { cost: 0 });
    return [context.creditResult?.remaining, context.rateLimitResults?.[0].remaining];
  }

  it("a later authorization of the same request with the same charge spends nothing and records no second use", async () => {
    const { service, key, events, outcomes } = await chargedSetup();
    const request = {};
    const first = await service.authorize(key, { request, cost: 2, rateLimits: ["minute"] });
    const used = events.length;
    const again = await service.authorize(key, { request, cost: 2, rateLimits: ["minute"] });
    assert.equal(again, first, "the first run's context, with its limits' answers");
    assert.equal(again.creditResult?.remaining, 8);
    assert.equal(events.length, used, "no second api_key.used or credit event");
    assert.deepEqual(outcomes, ["success"]);
    assert.deepEqual(await left(service, key), [8, 8], "the first run's cost (2) only");
  });

  it("a later authorization asking another charge (cost, rateLimits) is charged on its own: never less than asked", async () => {
    const { service, key, outcomes } = await chargedSetup();
    const request = {};
    await service.authorize(key, { request, cost: 2 });
    const costlier = await service.authorize(key, { request, cost: 3 });
    assert.equal(costlier.creditResult?.remaining, 5, "its own cost spent");
    const policy = [{ name: "route", limit: 1, windowMs: 60_000 }];
    await service.authorize(key, { request, cost: 1, rateLimits: policy });
    const refused = await rejection(service.authorize(key, {
      request,
      cost: 1,
      rateLimits: [
        { name: "route", limit: 1, windowMs: 60_000 },
      ],
    }));
    assert.equal(
      refused.code,
      "api_key_rate_limited",
      "a route's own limit is counted, never skipped",
    );
    assert.deepEqual(outcomes.slice(0, 3), ["success", "success", "success"]);
    assert.deepEqual(await left(service, key), [4, 4]);
  });

  it("checks the later run's own requirements and reports its refusal", async () => {
    const { service, key, authFailures } = await chargedSetup();
    const request = {};
    await service.authorize(key, { request });
    const read = await service.authorize(key, { request, requiredScope: READ_ORDERS[0] });
    assert.equal(read.creditResult?.remaining, 9);
    const refused = await rejection(
      service.authorize(key, { request, requiredScope: { resource: "orders", level: "write" } }),
    );
    assert.ok(refused instanceof ApiKeyError);
    assert.equal(refused.code, "api_key_scope_insufficient");
    const mismatch = await rejection(
      service.authorize(key, { request, requiredEnvironment: "live" }),
    );
    assert.equal(mismatch.code, "api_key_environment_mismatch");
    assert.deepEqual(authFailures.map(([, code]) => code), [
      "api_key_scope_insufficient",
      "api_key_environment_mismatch",
    ]);
    assert.deepEqual(await left(service, key), [9, 9]);
  });

  it("charges each request, another key on the same request, and each service", async () => {
    const { service, key, storage, limiter } = await chargedSetup();
    const request = {};
    await service.authorize(key, { request });
    await service.authorize(key, { request: {} });
    await service.authorize(key); // no request: nothing to recognize
    assert.deepEqual(await left(service, key), [7, 7]);
    const { key: other } = await service.create({
      tenantId: "t1",
      name: "other",
      scopes: READ_ORDERS,
      credits: { remaining: 10 },
    });
    const second = await service.authorize(other, { request });
    assert.equal(second.creditResult?.remaining, 9, "another key is another charge");
    const { service: twin } = makeService({ storage, limiter });
    assert.equal((await twin.authorize(other, { request })).creditResult?.remaining, 8);
  });

  it("a later check refusing a charged request counts one usage outcome: its refusal replaces the accepted count and its cost, a further refusal counts nothing (Fetch's nested protect, Nest's second guard run)", async () => {
    const { service, clocks } = makeService({ usage: { flushIntervalMs: 3_600_000 } });
    const { id, key } = await service.create({
      tenantId: "t1",
      name: "k",
      environment: "test",
      scopes: READ_ORDERS,
    });
    const request = {};
    await service.authorize(key, { request, cost: 2 });
    const write = { resource: "orders", level: "write" } as const;
    const refused = await rejection(
      service.authorize(key, { request, cost: 2, requiredScope: write }),
    );
    assert.equal(refused.code, "api_key_scope_insufficient");
    const mismatch = await rejection(
      service.authorize(key, { request, cost: 2, requiredEnvironment: "live" }),
    );
    assert.equal(mismatch.code, "api_key_environment_mismatch");
    await service.close();
    const window = { keyId: id, from: new Date(clocks.now), to: new Date(clocks.now + 3_600_000) };
    const [hour] = await service.usage("t1", { ...window, granularity: "hour" });
    assert.equal(hour.accepted, 0, "the refused request is not counted accepted");
    assert.equal(hour.cost, 0, "nor its cost");
    assert.equal(hour.refused.api_key_scope_insufficient, 1);
    assert.equal(hour.refused.api_key_environment_mismatch, 0, "one outcome per request");
    const [listed] = await service.list("t1");
    assert.equal(listed.lastUsedAt, null, "no accepted request: no lastUsedAt");
    await service.authorize(key, { request: {}, cost: 2 });
    await service.close();
    const [after] = await service.usage("t1", { ...window, granularity: "hour" });
    assert.equal(after.accepted, 1, "another request counts as usual");
    assert.equal(after.cost, 2);
  });

  it("later checks refusing charged requests in any order leave lastUsedAt at the latest request still accepted (docs/api-keys.md)", async () => {
    const write = { resource: "orders", level: "write" } as const;
    for (const apartMs of [1_000, 0]) {
      const { service, storage, clocks } = makeService({ usage: { flushIntervalMs: 3_600_000 } });
      const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      clocks.advance(60_000);
      await service.authorize(key); // C, accepted for good
      const acceptedAt = clocks.now;
      const [a, b] = [{}, {}];
      clocks.advance(1_000);
      await service.authorize(key, { request: a });
      clocks.advance(apartMs);
      await service.authorize(key, { request: b });
      for (const request of [a, b]) { // the earlier one refused first
        await rejection(service.authorize(key, { request, requiredScope: write }));
      }
      await service.close();
      assert.equal(
        (await storage.findById(id))!.lastUsedAt?.getTime(),
        acceptedAt,
        `C's time, not a refused one's (A and B ${apartMs} ms apart)`,
      );
    }
  });

  it("a later check refusing a charged request whose count a flush wrote takes nothing back, neither from a newer row of the same key and hour (docs/api-keys.md)", async () => {
    const { service, clocks } = makeService({ usage: { flushIntervalMs: 3_600_000 } });
    const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    const request = {};
    await service.authorize(key, { request, cost: 2 }); // A
    await service.close(); // writes A's count
    clocks.advance(1_000);
    await service.authorize(key, { request: {}, cost: 3 }); // D, same hour
    const write = { resource: "orders", level: "write" } as const;
    await rejection(service.authorize(key, { request, cost: 2, requiredScope: write }));
    await service.close();
    const window = { keyId: id, from: new Date(clocks.now), to: new Date(clocks.now + 3_600_000) };
    const [hour] = await service.usage("t1", { ...window, granularity: "hour" });
    assert.equal(hour.accepted, 2, "A stays accepted (written), D accepted");
    assert.equal(hour.cost, 5);
    assert.equal(hour.refused.api_key_scope_insufficient, 0, "A counts one outcome");
  });

  it("concurrent authorizations of the same request with the same charge spend once (a key not yet cached)", async () => {
    const { service, key, events, outcomes } = await chargedSetup();
    const request = {};
    const options = { request, cost: 2, rateLimits: ["minute"] };
    const [first, second, third] = await Promise.all([
      service.authorize(key, options),
      service.authorize(key, options),
      service.authorize(key, { ...options }),
    ]);
    assert.equal(second, first, "the first run's context");
    assert.equal(third, first);
    assert.equal(first.creditResult?.remaining, 8);
    assert.equal(events.filter((e) => e.type === "api_key.used").length, 1);
    assert.deepEqual(outcomes, ["success"]);
    assert.deepEqual(await left(service, key), [8, 8], "the first run's cost (2) only");
  });

  it("a concurrent authorization checks its own requirements once the first is charged", async () => {
    const { service, key } = await chargedSetup();
    const request = {};
    const write = { resource: "orders", level: "write" } as const;
    const [first, refused] = await Promise.allSettled([
      service.authorize(key, { request }),
      service.authorize(key, { request, requiredScope: write }),
    ]);
    assert.equal(first.status, "fulfilled");
    assert.equal(refused.status, "rejected");
    assert.equal((refused.reason as ApiKeyError).code, "api_key_scope_insufficient");
    assert.deepEqual(await left(service, key), [9, 9]);
  });

  it("a concurrent authorization of a request whose first was refused is judged on its own, never passed on the first's account", async () => {
    const { service, key } = await chargedSetup();
    const write = { resource: "orders", level: "write" } as const;
    // Refused first by scope: the second (read) is authorized and charged on its own.
    const request = {};
    const [refused, second] = await Promise.allSettled([
      service.authorize(key, { request, requiredScope: write }),
      service.authorize(key, { request }),
    ]);
    assert.equal(refused.status, "rejected");
    assert.equal((refused.reason as ApiKeyError).code, "api_key_scope_insufficient");
    assert.equal(second.status, "fulfilled");
    assert.equal(second.value.creditResult?.remaining, 9);
    // Refused first for want of room (cost 10, 9 left): the same ask concurrently is refused too.
    const poor = {};
    const results = await Promise.allSettled([
      service.authorize(key, { request: poor, cost: 10 }),
      service.authorize(key, { request: poor, cost: 10 }),
    ]);
    assert.deepEqual(
      results.map((r) => r.status === "rejected" && (r.reason as ApiKeyError).code),
      ["api_key_rate_limited", "api_key_rate_limited"],
    );
    assert.deepEqual(await left(service, key), [9, 9], "nothing spent");
    // A refused request is charged by its next authorization, concurrent ones once.
    const [a, b] = await Promise.all([
      service.authorize(key, { request: poor }),
      service.authorize(key, { request: poor }),
    ]);
    assert.equal(b, a);
    assert.equal(a.creditResult?.remaining, 8);
  });

  it("a refused request is charged by its next authorization", async () => {
    const { service, key } = await chargedSetup();
    const request = {};
    const refused = await rejection(
      service.authorize(key, { request, requiredScope: { resource: "orders", level: "write" } }),
    );
    assert.equal(refused.code, "api_key_scope_insufficient");
    await service.authorize(key, { request });
    assert.deepEqual(await left(service, key), [9, 9]);
  });
});
