import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyError } from "../../api_keys/mod.ts";
import { makeService, overrideStorage, READ_ORDERS, rejection, spyStorage } from "./helpers.ts";

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
