import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  ApiKeyAuditNotRecordedError,
  ApiKeyOperationError,
  ApiKeyPrefixCollisionError,
  type ApiKeyRecord,
  type ApiKeysService,
  type ApiKeyStorage,
  ApiKeyStorageError,
  type ApiKeySummary,
  ApiKeyValidationError,
  InMemoryApiKeyStorage,
  parseKey,
  PrismaApiKeyStorage,
  type RotateApiKeyStorageInput,
} from "../../api_keys/mod.ts";
import { fakePrismaClient } from "./storage/fake_prisma.ts";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../rate_limits/memory_store.ts";
import { ManageFlow } from "../../api_keys/_manage.ts";
import { serviceHooks } from "../../api_keys/_service_hooks.ts";
import { CreditBook } from "../../api_keys/metering/_credits.ts";
import { compileSettings } from "../../api_keys/_settings.ts";
import { VerifyFlow } from "../../api_keys/verify/_verify.ts";
import {
  gatedStorage,
  makeService,
  overrideStorage,
  PEPPER_1,
  PEPPER_2,
  READ_ORDERS,
  rejection,
  spyStorage,
} from "./helpers.ts";

const DAY = 24 * 60 * 60 * 1000;
/** The latest instant a duration or expiry may produce. */
const MAX_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");

describe("ApiKeysService.create", () => {
  it("limitsOf: shares the source key's policies, windows and balance; of its tenant only", async () => {
    const at = Date.parse("2030-01-01T10:00:00.000Z");
    const store = createMemoryRateLimitStore({ now: () => at });
    const limiter = createRateLimiter({ store, logger: () => {} });
    const { service, storage } = makeService({ limiter, clock: () => new Date(at) });
    const source = await service.create({
      tenantId: "t1",
      name: "source",
      scopes: READ_ORDERS,
      rateLimits: [{ name: "minute", limit: 3, windowMs: 60_000 }],
      credits: { remaining: 5 },
    });
    const { id } = await service.create({
      tenantId: "t1",
      name: "child",
      scopes: READ_ORDERS,
      limitsOf: source.id,
    });
    const record = (await storage.findById(id))!;
    assert.deepEqual(record.rateLimits?.map((p) => p.name), ["minute"]);
    assert.equal(record.rateLimitKeyId, source.id);
    assert.equal(record.credits?.balanceKeyId, source.id);
    await assert.rejects(
      service.create({ tenantId: "t2", name: "x", scopes: READ_ORDERS, limitsOf: source.id }),
      (error: unknown) =>
        error instanceof ApiKeyOperationError && error.code === "api_key_record_not_found",
    );
    await assert.rejects(
      service.create({
        tenantId: "t1",
        name: "x",
        scopes: READ_ORDERS,
        limitsOf: source.id,
        credits: { remaining: 5 },
      }),
      (error: unknown) => error instanceof ApiKeyValidationError && error.field === "credits",
    );
    await assert.rejects(
      service.create({ tenantId: "t1", name: "x", scopes: READ_ORDERS, limitsOf: "" }),
      (error: unknown) => error instanceof ApiKeyValidationError && error.field === "limitsOf",
    );
  });

  it("stores a hashed record with UUIDv7 id and emits api_key.created", async () => {
    const { service, storage, events, clocks } = makeService();
    const { id, key } = await service.create({
      tenantId: "t1",
      name: "ci",
      scopes: [...READ_ORDERS, { resource: "orders", level: "write" }],
      createdBy: "alice",
    });
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const record = (await storage.findById(id))!;
    assert.equal(record.prefix, parseKey(key)!.prefix);
    assert.equal(record.hash.includes(parseKey(key)!.secret), false);
    assert.deepEqual(record.scopes, ["orders:read", "orders:write"]);
    assert.equal(record.createdAt.getTime(), clocks.now);
    assert.equal(record.expiresAt, null);
    assert.deepEqual(events, [{
      type: "api_key.created",
      at: new Date(clocks.now),
      keyId: id,
      tenantId: "t1",
      prefix: record.prefix,
      environment: "live",
      scopes: ["orders:read", "orders:write"],
      createdBy: "alice",
    }]);
  });

  it("rejects invalid input with a typed error naming the field and writes nothing", async () => {
    const { storage, calls } = spyStorage();
    const { service, events } = makeService({ storage });
    const base = { tenantId: "t", name: "n", scopes: READ_ORDERS };
    const cases: [Record<string, unknown>, string][] = [
      [{ tenantId: "" }, "tenantId"],
      [{ tenantId: 5 }, "tenantId"],
      [{ name: " " }, "name"],
      [{ name: "x".repeat(201) }, "name"],
      [{ scopes: [] }, "scopes"],
      [{ scopes: [{ resource: "Bad!", level: "read" }] }, "scopes"],
      [{ environment: "prod" }, "environment"],
      [{ expiresAt: new Date("nope") }, "expiresAt"],
      [{ expiresAt: "2030-01-01" }, "expiresAt"],
      [{ allowedIpCidrs: ["10.0.0.0/40"] }, "allowedIpCidrs"],
      [{ createdBy: "" }, "createdBy"],
      // Text that would split a log line, show reversed, or that PostgreSQL cannot store.
      [{ tenantId: "t\n1" }, "tenantId"],
      [{ tenantId: "t\u0000" }, "tenantId"],
      [{ tenantId: "t\u202e1" }, "tenantId"],
      [{ name: "ci\u202egnp.exe" }, "name"],
      [{ name: "line1\u2028line2" }, "name"],
      [{ createdBy: "alice\nFAKE api_key.revoked keyId=x" }, "createdBy"],
      [{ createdBy: "a\u0000b" }, "createdBy"],
      [{ createdBy: "x".repeat(201) }, "createdBy"],
    ];
    for (const [override, field] of cases) {
      const error = await rejection(service.create({ ...base, ...override } as never));
      assert.ok(error instanceof ApiKeyValidationError, field);
      assert.equal(error.field, field);
      assert.equal(error.httpStatus, 400);
    }
    assert.ok((await rejection(service.create(null as never))) instanceof ApiKeyValidationError);
    assert.deepEqual(calls, []);
    assert.deepEqual(events, []);
  });
});

describe("TTL policy through create and rotate", () => {
  it("omitted expiry: default when set, else none", async () => {
    const { service, storage, clocks } = makeService({ ttlPolicy: { defaultExpiresInMs: DAY } });
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    assert.equal((await storage.findById(id))!.expiresAt?.getTime(), clocks.now + DAY);
    const plain = makeService();
    const none = await plain.service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    assert.equal((await plain.storage.findById(none.id))!.expiresAt, null);
  });

  it("null means no expiry, allowed only when the policy permits", async () => {
    const open = makeService();
    const created = await open.service.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      expiresAt: null,
    });
    assert.equal((await open.storage.findById(created.id))!.expiresAt, null);
    for (const ttlPolicy of [{ defaultExpiresInMs: DAY }, { maxExpiresInMs: DAY }]) {
      const { service } = makeService({ ttlPolicy });
      const error = await rejection(
        service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS, expiresAt: null }),
      );
      assert.equal(error.field, "expiresAt");
    }
    const { service } = makeService({
      ttlPolicy: { maxExpiresInMs: DAY, allowNeverExpires: true },
    });
    await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS, expiresAt: null });
    const strict = makeService({ ttlPolicy: { allowNeverExpires: false } });
    assert.equal(
      (await rejection(strict.service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS })))
        .field,
      "expiresAt",
    );
  });

  it("rejects expiry past the maximum or not in the future, never clamping", async () => {
    const { service, clocks } = makeService({ ttlPolicy: { maxExpiresInMs: DAY } });
    const base = { tenantId: "t", name: "n", scopes: READ_ORDERS };
    for (const at of [clocks.now + DAY + 1, clocks.now, clocks.now - 1]) {
      const error = await rejection(service.create({ ...base, expiresAt: new Date(at) }));
      assert.ok(error instanceof ApiKeyValidationError);
      assert.equal(error.field, "expiresAt");
    }
    await service.create({ ...base, expiresAt: new Date(clocks.now + DAY) });
    const noPolicyMax = makeService();
    await noPolicyMax.service.create({ ...base, expiresAt: new Date(clocks.now + 100 * DAY) });
  });

  it("applies the same rules to rotate (omitted → the old key's expiry, never extended)", async () => {
    const { service, storage, clocks } = makeService({
      ttlPolicy: { defaultExpiresInMs: DAY, maxExpiresInMs: 2 * DAY },
    });
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const oldExpiry = clocks.now + DAY;
    clocks.advance(1000);
    const rotated = await service.rotate(id);
    assert.equal((await storage.findById(rotated.id))!.expiresAt?.getTime(), oldExpiry);
    const error = await rejection(service.rotate(rotated.id, { expiresAt: null }));
    assert.equal(error.field, "expiresAt");
    const late = await rejection(
      service.rotate(rotated.id, { expiresAt: new Date(clocks.now + 3 * DAY) }),
    );
    assert.equal(late.field, "expiresAt");
    assert.equal((await storage.findById(rotated.id))!.rotatedAt, null, "nothing written");
  });
});

describe("rotate never silently extends a key's lifetime", () => {
  it("without a policy, a key with an expiry is replaced by one with the same expiry", async () => {
    const { service, storage, clocks } = makeService();
    const expiresAt = new Date(clocks.now + 7 * DAY);
    const { id } = await service.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      expiresAt,
    });
    clocks.advance(DAY);
    const rotated = await service.rotate(id);
    assert.equal((await storage.findById(rotated.id))!.expiresAt?.getTime(), expiresAt.getTime());
  });

  it("a policy default does not outlast the old expiry; a never-expiring key gets the default", async () => {
    const { service, storage, clocks } = makeService({
      ttlPolicy: { defaultExpiresInMs: 90 * DAY, allowNeverExpires: true },
    });
    const base = { tenantId: "t", name: "n", scopes: READ_ORDERS };
    const expiresAt = new Date(clocks.now + 10 * DAY);
    const short = await service.create({ ...base, expiresAt });
    const forever = await service.create({ ...base, expiresAt: null });
    clocks.advance(DAY);
    const fromShort = await service.rotate(short.id);
    assert.equal((await storage.findById(fromShort.id))!.expiresAt?.getTime(), expiresAt.getTime());
    const fromForever = await service.rotate(forever.id);
    assert.equal(
      (await storage.findById(fromForever.id))!.expiresAt?.getTime(),
      clocks.now + 90 * DAY,
    );
  });

  it("the caller may set another expiry within the policy, or none when the policy allows it", async () => {
    const { service, storage, clocks } = makeService({ ttlPolicy: { maxExpiresInMs: 30 * DAY } });
    const base = { tenantId: "t", name: "n", scopes: READ_ORDERS };
    const first = await service.create({ ...base, expiresAt: new Date(clocks.now + DAY) });
    const later = new Date(clocks.now + 20 * DAY);
    const rotated = await service.rotate(first.id, { expiresAt: later });
    assert.equal((await storage.findById(rotated.id))!.expiresAt?.getTime(), later.getTime());
    const tooLate = await rejection(
      service.rotate(rotated.id, { expiresAt: new Date(clocks.now + 31 * DAY) }),
    );
    assert.equal(tooLate.field, "expiresAt");
    const open = makeService();
    const expiring = await open.service.create({ ...base, expiresAt: new Date(clocks.now + DAY) });
    const forever = await open.service.rotate(expiring.id, { expiresAt: null });
    assert.equal((await open.storage.findById(forever.id))!.expiresAt, null);
  });
});

describe("ApiKeysService.rotate", () => {
  it("issues an inheriting key, keeps the old one for the grace period and emits api_key.rotated", async () => {
    const { service, storage, clocks, events } = makeService();
    const { id, key } = await service.create({
      tenantId: "t",
      name: "n",
      environment: "test",
      scopes: READ_ORDERS,
      allowedIpCidrs: ["10.0.0.0/8"],
    });
    const result = await service.rotate(id, { createdBy: "bob" });
    assert.equal(result.replacedKeyId, id);
    assert.equal(result.graceExpiresAt.getTime(), clocks.now + DAY);
    const fresh = (await storage.findById(result.id))!;
    assert.deepEqual(
      [fresh.tenantId, fresh.name, fresh.environment, fresh.scopes, fresh.allowedIpCidrs],
      ["t", "n", "test", ["orders:read"], ["10.0.0.0/8"]],
    );
    assert.equal(fresh.createdBy, "bob");
    const old = (await storage.findById(id))!;
    assert.equal(old.rotatedAt?.getTime(), clocks.now);
    assert.equal(old.expiresAt?.getTime(), clocks.now + DAY);
    assert.equal(old.replacedByKeyId, result.id);
    const rotatedEvent = events.at(-1)!;
    assert.equal(rotatedEvent.type, "api_key.rotated");
    assert.deepEqual(rotatedEvent, {
      type: "api_key.rotated",
      at: new Date(clocks.now),
      tenantId: "t",
      oldKeyId: id,
      oldPrefix: parseKey(key)!.prefix,
      newKeyId: result.id,
      newPrefix: parseKey(result.key)!.prefix,
      environment: "test",
      scopes: ["orders:read"],
      graceExpiresAt: result.graceExpiresAt,
      graceStarts: "rotation",
      createdBy: "bob",
    });
    await service.verify(key);
    await service.verify(result.key);
  });

  it("under a TTL policy tightened since: the grace ends no later than the successor's capped expiry", async () => {
    const loose = makeService();
    const { id } = await loose.service.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      expiresAt: new Date(loose.clocks.now + 365 * DAY),
    });
    const strict = makeService({ storage: loose.storage, ttlPolicy: { maxExpiresInMs: DAY } });
    strict.clocks.advance(loose.clocks.now - strict.clocks.now + 1000);
    const now = strict.clocks.now;
    const rotated = await strict.service.rotate(id, { gracePeriodMs: 30 * DAY });
    assert.equal((await strict.storage.findById(rotated.id))!.expiresAt!.getTime(), now + DAY);
    assert.equal(rotated.graceExpiresAt.getTime(), now + DAY);
  });

  it("overrides name and allowlist; grace ends no later than the old expiry", async () => {
    const { service, storage, clocks } = makeService();
    const { id } = await service.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      expiresAt: new Date(clocks.now + 1000),
    });
    const result = await service.rotate(id, { name: "renamed", allowedIpCidrs: [] });
    assert.equal(result.graceExpiresAt.getTime(), clocks.now + 1000);
    const fresh = (await storage.findById(result.id))!;
    assert.equal(fresh.name, "renamed");
    assert.deepEqual(fresh.allowedIpCidrs, []);
  });

  it("refuses unknown, revoked, expired and already rotated keys", async () => {
    const { service, clocks } = makeService();
    assert.equal((await rejection(service.rotate("nope"))).code, "api_key_record_not_found");
    const base = { tenantId: "t", name: "n", scopes: READ_ORDERS };
    const revoked = await service.create(base);
    await service.revoke(revoked.id);
    const expiring = await service.create({ ...base, expiresAt: new Date(clocks.now + 10) });
    const rotated = await service.create(base);
    await service.rotate(rotated.id);
    clocks.advance(10);
    for (const id of [revoked.id, expiring.id, rotated.id]) {
      const error = await rejection(service.rotate(id));
      assert.ok(error instanceof ApiKeyOperationError);
      assert.equal(error.code, "api_key_not_rotatable");
      assert.equal(error.httpStatus, 409);
    }
    const bad = await rejection(service.rotate(rotated.id, { gracePeriodMs: -1 }));
    assert.equal(bad.field, "gracePeriodMs");
  });

  it("lets exactly one of two concurrent rotations win", async () => {
    const { service } = makeService();
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const results = await Promise.allSettled([service.rotate(id), service.rotate(id)]);
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
    const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    assert.equal(lost.reason.code, "api_key_not_rotatable");
  });
});

describe("ApiKeysService.revoke and list", () => {
  it("revokes once (no second event), including rotated and expired keys", async () => {
    const { service, events, clocks } = makeService();
    assert.equal((await rejection(service.revoke("nope"))).code, "api_key_record_not_found");
    const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const rotated = await service.rotate(id);
    await service.revoke(id);
    await service.revoke(id);
    assert.equal(events.filter((e) => e.type === "api_key.revoked").length, 1);
    assert.equal((await rejection(service.verify(key))).code, "api_key_revoked");
    await service.verify(rotated.key);
    const expired = await service.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      expiresAt: new Date(clocks.now + 1),
    });
    clocks.advance(1);
    await service.revoke(expired.id);
    assert.equal(events.filter((e) => e.type === "api_key.revoked").length, 2);
  });

  it("revoking a rotation's new key leaves the old key working until its grace ends", async () => {
    const { service, clocks } = makeService();
    const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const next = await service.rotate(id, { gracePeriodMs: 60_000 });
    await service.revoke(next.id);
    assert.equal((await rejection(service.verify(next.key))).code, "api_key_revoked");
    assert.equal((await service.verify(key)).keyId, id);
    clocks.advance(60_000);
    assert.equal((await rejection(service.verify(key))).code, "api_key_expired");
  });

  it("lists active, rotated and expired keys newest first (createdAt descending, then id); revoked on request", async () => {
    let n = 0;
    const { service, clocks } = makeService({ idFactory: () => `id-${9 - n++}` });
    const base = { tenantId: "t", name: "n", scopes: READ_ORDERS };
    const a = await service.create(base); // id-9
    const b = await service.create(base); // id-8, same createdAt
    clocks.advance(5);
    const c = await service.create({ ...base, expiresAt: new Date(clocks.now + 1) }); // id-7
    const rotated = await service.rotate(a.id); // id-6
    await service.revoke(b.id);
    await service.create({ ...base, tenantId: "other" });
    clocks.advance(10);
    assert.deepEqual((await service.list("t")).map((r) => r.id), [rotated.id, c.id, a.id]);
    assert.deepEqual(
      (await service.list("t", { includeRevoked: true })).map((r) => r.id),
      [rotated.id, c.id, b.id, a.id],
    );
    assert.equal((await rejection(service.list(""))).field, "tenantId");
  });
});

describe("durations and instants are bounded", () => {
  it("rotate refuses a grace period that is not finite, negative or ends after 9999", async () => {
    const { service, storage, clocks, events } = makeService();
    const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const before = await storage.findById(id);
    events.length = 0;
    for (
      const gracePeriodMs of [1e16, Infinity, NaN, -1, "60000", MAX_INSTANT - clocks.now + 1]
    ) {
      const error = await rejection(service.rotate(id, { gracePeriodMs } as never));
      assert.ok(error instanceof ApiKeyValidationError, String(gracePeriodMs));
      assert.equal(error.code, "api_key_invalid_time");
      assert.equal(error.field, "gracePeriodMs");
    }
    assert.deepEqual(await storage.findById(id), before, "nothing written");
    assert.deepEqual(events, []);
    assert.equal((await service.verify(key)).keyId, id);
    const longest = await service.rotate(id, { gracePeriodMs: MAX_INSTANT - clocks.now });
    assert.equal(longest.graceExpiresAt.getTime(), MAX_INSTANT);
  });

  it("create and rotate refuse an expiresAt after 9999-12-31T23:59:59.999Z", async () => {
    const { service, storage } = makeService();
    const base = { tenantId: "t", name: "n", scopes: READ_ORDERS };
    const error = await rejection(
      service.create({ ...base, expiresAt: new Date(MAX_INSTANT + 1) }),
    );
    assert.ok(error instanceof ApiKeyValidationError);
    assert.equal(error.field, "expiresAt");
    const { id } = await service.create({ ...base, expiresAt: new Date(MAX_INSTANT) });
    assert.equal((await storage.findById(id))!.expiresAt?.getTime(), MAX_INSTANT);
    const late = await rejection(service.rotate(id, { expiresAt: new Date(MAX_INSTANT + 1) }));
    assert.equal(late.field, "expiresAt");
  });

  it("a policy default that would end after 9999 is refused at create, naming the policy field", async () => {
    const { service, storage } = makeService({
      ttlPolicy: { defaultExpiresInMs: 30 * DAY },
      clock: () => new Date(MAX_INSTANT - DAY),
    });
    const error = await rejection(
      service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS }),
    );
    assert.ok(error instanceof ApiKeyValidationError);
    assert.equal(error.field, "ttlPolicy.defaultExpiresInMs");
    assert.equal((storage as InMemoryApiKeyStorage).size, 0);
  });
});

describe("a stored expiresAt that is not a valid date counts as expired", () => {
  for (const kind of ["in-memory", "custom"] as const) {
    it(`${kind} storage: verify says expired, rotate refuses, list and revoke work`, async () => {
      const inner = new InMemoryApiKeyStorage();
      const insert = inner.insert.bind(inner);
      // A record whose expiry is unreadable (a bad row, or one written by an older version).
      inner.insert = (record: ApiKeyRecord) => insert({ ...record, expiresAt: new Date(NaN) });
      const storage = kind === "in-memory" ? inner : overrideStorage(inner, {});
      const { service, events, clocks } = makeService({ storage });
      const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
      assert.equal((await rejection(service.verify(key))).code, "api_key_expired");
      assert.equal((await rejection(service.verify(key))).code, "api_key_expired", "not cached");
      assert.equal((await rejection(service.rotate(id))).code, "api_key_not_rotatable");
      const [listed] = await service.list("t");
      assert.equal(listed.id, id);
      assert.ok(listed.expiresAt instanceof Date);
      assert.ok(listed.expiresAt.getTime() <= clocks.now, "listed as expired");
      events.length = 0;
      await service.revoke(id);
      assert.deepEqual(events.map((e) => e.type), ["api_key.revoked"]);
      assert.equal((await rejection(service.verify(key))).code, "api_key_revoked");
    });
  }

  it("in-memory storage: a key already verified stops verifying once its expiry is unreadable", async () => {
    const { service, storage, clocks } = makeService({ cache: false });
    const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.verify(key);
    const old = (await storage.findById(id))!;
    await storage.rotate({
      oldKeyId: id,
      newRecord: {
        ...old,
        id: "replacement",
        prefix: "ReplacementP",
        rotatedAt: null,
        replacedByKeyId: null,
      },
      oldExpiresAt: new Date(NaN),
      rotatedAt: new Date(clocks.now),
    });
    assert.equal((await rejection(service.verify(key))).code, "api_key_expired");
  });
});

/** Waits, at each call, until `n` calls have been made. */
function barrier(n: number): () => Promise<void> {
  let count = 0;
  let open = () => {};
  const opened = new Promise<void>((resolve) => open = resolve);
  return async () => {
    if (++count === n) open();
    await opened;
  };
}

/**
 * A storage written for the spec: the seven operations over `inner`, its
 * `rotate` not atomic (read and check, insert, then write the old record,
 * answering nothing); `step` is awaited after the check and after the write.
 */
function specStorage(inner: InMemoryApiKeyStorage, step: () => Promise<void>): ApiKeyStorage {
  const rotated = new Map<string, Pick<ApiKeyRecord, "rotatedAt" | "replacedByKeyId">>();
  const read = async (record: Promise<ApiKeyRecord | null>) => {
    const found = await record;
    return found === null ? null : { ...found, ...rotated.get(found.id) };
  };
  return overrideStorage(inner, {
    findById: (id: string) => read(inner.findById(id)),
    findByPrefix: (prefix: string) => read(inner.findByPrefix(prefix)),
    rotate: async (input: RotateApiKeyStorageInput) => {
      const old = await read(inner.findById(input.oldKeyId));
      if (old === null || old.rotatedAt !== null || old.revokedAt !== null) {
        throw new ApiKeyOperationError("api_key_not_rotatable");
      }
      await step();
      await inner.insert(input.newRecord);
      // The last writer wins.
      rotated.set(old.id, { rotatedAt: input.rotatedAt, replacedByKeyId: input.newRecord.id });
      await step();
    },
  });
}

describe("rotate over a storage written for the spec (rotate answers nothing)", () => {
  it("two concurrent rotations both past its check: the one the old record does not name is revoked and refused, no event for it", async () => {
    const inner = new InMemoryApiKeyStorage();
    const { service, events } = makeService({ storage: specStorage(inner, barrier(2)) });
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const results = await Promise.allSettled([service.rotate(id), service.rotate(id)]);
    const won = results.filter((r) => r.status === "fulfilled");
    assert.equal(won.length, 1);
    const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    assert.equal(lost.reason.code, "api_key_not_rotatable");
    const winner = (won[0] as PromiseFulfilledResult<{ id: string; key: string }>).value;
    const successors = (await inner.listByTenant("t", { includeRevoked: true }))
      .filter((record) => record.id !== id);
    assert.equal(successors.length, 2);
    for (const record of successors) {
      assert.equal(record.revokedAt === null, record.id === winner.id, record.id);
    }
    assert.equal((await service.verify(winner.key)).keyId, winner.id);
    assert.deepEqual(
      events.filter((event) => event.type === "api_key.rotated").map((event) =>
        event.type === "api_key.rotated" && event.newKeyId
      ),
      [winner.id],
    );
  });

  it('reads the old record back only when rotate answers nothing: no extra read for a storage answering "rotated"', async () => {
    const reads: number[] = [];
    for (const answered of [true, false]) {
      const inner = new InMemoryApiKeyStorage();
      let count = 0;
      const storage = overrideStorage(inner, {
        findById: (id: string) => {
          count++;
          return inner.findById(id);
        },
        rotate: async (input: RotateApiKeyStorageInput) => {
          const answer = await inner.rotate(input);
          return answered ? answer : undefined;
        },
      });
      const { service } = makeService({ storage });
      const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
      count = 0;
      await service.rotate(id);
      reads.push(count);
    }
    assert.equal(reads[1], reads[0] + 1, `findById calls: ${reads}`);
  });
});

describe("concurrent revokes", () => {
  const storages: [string, () => ApiKeyStorage][] = [
    ["InMemoryApiKeyStorage", () => new InMemoryApiKeyStorage()],
    ["PrismaApiKeyStorage", () => new PrismaApiKeyStorage(fakePrismaClient())],
  ];
  for (const [name, make] of storages) {
    it(`${name}: the first revoke wins; later ones change nothing and emit nothing`, async () => {
      const storage = make();
      let tick = 0;
      const clock = () => new Date(Date.UTC(2030, 0, 1) + 1000 * tick++);
      const { service, events } = makeService({ storage, clock });
      const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
      events.length = 0;
      await Promise.all([service.revoke(id), service.revoke(id), service.revoke(id)]);
      const revoked = events.filter((event) => event.type === "api_key.revoked");
      assert.equal(revoked.length, 1, "one api_key.revoked event");
      assert.equal((await storage.findById(id))!.revokedAt?.getTime(), revoked[0].at.getTime());
      assert.equal((await rejection(service.verify(key))).code, "api_key_revoked");
    });
  }

  it("a storage without markRevokedIfActive is revoked through markRevoked, as before", async () => {
    const inner = new InMemoryApiKeyStorage();
    const marked: string[] = [];
    const storage = overrideStorage(inner, {
      markRevoked: (id: string, at: Date) => {
        marked.push(id);
        return inner.markRevoked(id, at);
      },
    });
    const { service, events } = makeService({ storage });
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.revoke(id);
    await service.revoke(id);
    assert.deepEqual(marked, [id]);
    assert.equal(events.filter((event) => event.type === "api_key.revoked").length, 1);
  });

  it("a markRevokedIfActive that fails or answers a non-boolean is a storage error, no event", async () => {
    for (
      const answer of [
        () => Promise.resolve("yes"),
        () => Promise.reject(new Error("connection reset")),
      ]
    ) {
      const inner = new InMemoryApiKeyStorage();
      const storage = Object.assign(overrideStorage(inner, {}), { markRevokedIfActive: answer });
      const { service, events } = makeService({ storage });
      const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
      events.length = 0;
      assert.ok((await rejection(service.revoke(id))) instanceof ApiKeyStorageError);
      assert.deepEqual(events, []);
      assert.equal((await service.verify(key)).keyId, id);
    }
  });
});

describe("a revoke that commits after the storage deadline", () => {
  const landed = () => new Promise((resolve) => setTimeout(resolve, 20));

  for (
    const [method, revoke] of [
      ["markRevokedIfActive", (s: ApiKeysService, id: string) => s.revoke(id)],
      ["markRevokedForTenant", (s: ApiKeysService, id: string) => s.revokeForTenant("t", id)],
    ] as const
  ) {
    it(`${method}: the call fails 503, then api_key.revoked is emitted once when the write lands`, async () => {
      const { storage, release } = gatedStorage(method);
      const { service, events } = makeService({ storage, storageTimeoutMs: 30 });
      const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
      events.length = 0;
      const error = await rejection(revoke(service, id));
      assert.ok(error instanceof ApiKeyStorageError);
      assert.equal(error.httpStatus, 503);
      assert.equal(events.length, 0);
      release();
      await landed();
      assert.deepEqual(events.map((event) => event.type), ["api_key.revoked"]);
      await revoke(service, id); // a retry: already revoked, nothing more
      assert.deepEqual(events.map((event) => event.type), ["api_key.revoked"]);
      assert.equal((await rejection(service.verify(key))).code, "api_key_revoked");
    });
  }

  it("a late write that revoked nothing (another revoke won) emits nothing", async () => {
    const inner = new InMemoryApiKeyStorage();
    let release!: () => void;
    const open = new Promise<void>((resolve) => release = resolve);
    const storage = Object.assign(overrideStorage(inner, {}), {
      markRevokedIfActive: async () => {
        await open;
        return false;
      },
    });
    const { service, events } = makeService({ storage, storageTimeoutMs: 30 });
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    events.length = 0;
    assert.ok((await rejection(service.revoke(id))) instanceof ApiKeyStorageError);
    release();
    await landed();
    assert.deepEqual(events, []);
  });

  it("a post-write step that throws after a late write stays contained", async () => {
    const { storage, release } = gatedStorage("markRevokedIfActive");
    const { service, events } = makeService({ storage, storageTimeoutMs: 30 });
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    events.length = 0;
    const hooks = serviceHooks(service)!;
    let called = 0;
    const warn = console.warn;
    console.warn = () => {};
    try {
      await assert.rejects(hooks.revokeReported(id, () => {
        called++;
        throw new Error("onRevoked failed");
      }));
      release();
      await landed(); // an unhandled rejection would fail the test run
    } finally {
      console.warn = warn;
    }
    assert.equal(called, 1);
  });

  it("a leak report's revoke hears of its write pending at the deadline, settled after onRevoked when it lands, also when it fails; not of one on time", async () => {
    for (const then of ["lands", "fails"] as const) {
      const inner = new InMemoryApiKeyStorage();
      let release!: () => void;
      const open = new Promise<void>((resolve) => release = resolve);
      const storage = overrideStorage(inner, {
        markRevoked: async (...args: Parameters<InMemoryApiKeyStorage["markRevoked"]>) => {
          await open;
          if (then === "fails") throw new Error("storage down");
          return inner.markRevoked(...args);
        },
      });
      const { service } = makeService({ storage, storageTimeoutMs: 30 });
      const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
      const heard: string[] = [];
      let settled: Promise<void> | undefined;
      await assert.rejects(
        serviceHooks(service)!.revokeReported(id, () => void heard.push("revoked"), (late) => {
          heard.push("late");
          settled = late;
        }),
        ApiKeyStorageError,
      );
      assert.deepEqual(heard, ["late"], then);
      release();
      await settled!.then(() => heard.push("settled"));
      assert.deepEqual(
        heard,
        then === "lands" ? ["late", "revoked", "settled"] : ["late", "settled"],
      );
    }
    const { service } = makeService();
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    let late = false;
    await serviceHooks(service)!.revokeReported(id, () => {}, () => late = true);
    assert.equal(late, false);
  });
});

describe("a create or rotate that commits after the storage deadline", () => {
  const landed = () => new Promise((resolve) => setTimeout(resolve, 20));

  it("create: the call fails 503, then api_key.created is emitted once when the write lands", async () => {
    const { storage, release } = gatedStorage("insert");
    const { service, events } = makeService({ storage, storageTimeoutMs: 30 });
    const error = await rejection(
      service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS }),
    );
    assert.ok(error instanceof ApiKeyStorageError);
    assert.equal(events.length, 0);
    release();
    await landed();
    const [created] = await service.list("t");
    assert.deepEqual(events.map((event) => [event.type, (event as { keyId?: string }).keyId]), [
      ["api_key.created", created.id],
    ]);
  });

  it("create: a write past the deadline answers at the deadline (no prefix lookup after it: a late write is no collision)", async () => {
    const inner = new InMemoryApiKeyStorage();
    let release!: () => void;
    const open = new Promise<void>((resolve) => release = resolve);
    let lookups = 0;
    const storage = overrideStorage(inner, {
      insert: async (...args: Parameters<InMemoryApiKeyStorage["insert"]>) => {
        await open;
        return inner.insert(...args);
      },
      findByPrefix: (prefix: string) => (lookups++, inner.findByPrefix(prefix)),
    });
    const { service } = makeService({ storage, storageTimeoutMs: 30 });
    const error = await rejection(
      service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS }),
    );
    assert.ok(error instanceof ApiKeyStorageError);
    assert.equal(lookups, 0);
    release();
    await landed();
  });

  for (
    const [method, rotate] of [
      ["rotate", (s: ApiKeysService, id: string) => s.rotate(id, { gracePeriodMs: 60_000 })],
      [
        "rotateForTenant",
        (s: ApiKeysService, id: string) => s.rotateForTenant("t", id, { gracePeriodMs: 60_000 }),
      ],
    ] as const
  ) {
    it(`${method}: the call fails 503, then api_key.rotated is emitted once when the write lands; the old key's cache entry is dropped, the new key can be rotated for a secret`, async () => {
      const { storage, release } = gatedStorage(method);
      const { service, events } = makeService({ storage, storageTimeoutMs: 30 });
      const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
      assert.equal((await service.verify(key)).keyId, id); // cached
      events.length = 0;
      const error = await rejection(rotate(service, id));
      assert.ok(error instanceof ApiKeyStorageError);
      assert.equal(events.length, 0);
      release();
      await landed();
      const rotated = events.filter((event) => event.type === "api_key.rotated") as {
        oldKeyId: string;
        newKeyId: string;
      }[];
      assert.equal(rotated.length, 1);
      assert.equal(rotated[0].oldKeyId, id);
      // In its grace, read again (not the cached record): its successor named.
      const verified = await service.verify(key);
      assert.equal(verified.keyId, id);
      assert.equal(
        (await service.list("t")).find((k) => k.id === id)?.replacedByKeyId,
        rotated[0].newKeyId,
      );
      // The successor's secret was never answered: rotating it answers one.
      const again = await service.rotate(rotated[0].newKeyId);
      assert.equal((await service.verify(again.key)).keyId, again.id);
    });
  }
});

describe("the two flows over one settings object", () => {
  it("a key made by the manage flow verifies through the verify flow; revoke drops its cache entry", async () => {
    const settings = compileSettings({
      peppers: { 1: PEPPER_1 },
      storage: new InMemoryApiKeyStorage(),
    });
    const manage = new ManageFlow(
      settings,
      new CreditBook(settings.storage, undefined, undefined, settings.clock, ""),
    );
    const verify = new VerifyFlow(settings);
    const { id, key } = await manage.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    assert.equal((await verify.verify(key)).keyId, id);
    assert.equal(settings.cache?.size, 1, "cached by the verify flow");
    await manage.revoke(id);
    assert.equal(settings.cache?.size, 0, "dropped by the manage flow");
    assert.equal((await rejection(verify.verify(key))).code, "api_key_revoked");
  });

  it("create and rotate build the new record the same way", async () => {
    const storage = new InMemoryApiKeyStorage();
    const settings = compileSettings({
      peppers: { 1: PEPPER_1 },
      storage,
      idFactory: () => `id-${storage.size}`,
    });
    const manage = new ManageFlow(
      settings,
      new CreditBook(settings.storage, undefined, undefined, settings.clock, ""),
    );
    const created = await manage.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      allowedIpCidrs: ["10.0.0.0/8"],
      createdBy: "alice",
    });
    const rotated = await manage.rotate(created.id, { createdBy: "alice" });
    const listed = await manage.list("t");
    const first = listed.find((r) => r.id === created.id)!;
    const second = listed.find((r) => r.id === rotated.id)!;
    assert.equal(listed.length, 2);
    // The successor also names the chain's window counters (rateLimitKeyId).
    assert.deepEqual(Object.keys(second).sort(), [...Object.keys(first), "rateLimitKeyId"].sort());
    assert.equal(second.rateLimitKeyId, first.id);
    for (const field of ["tenantId", "name", "environment", "scopes", "allowedIpCidrs"] as const) {
      assert.deepEqual(second[field], first[field], field);
    }
    assert.deepEqual([second.createdBy, second.lastUsedAt, second.revokedAt], [
      "alice",
      null,
      null,
    ]);
  });
});

/** Every record of `tenants`, revoked ones included, as JSON: a snapshot of the storage. */
async function snapshot(storage: ApiKeyStorage, tenants: string[]): Promise<string> {
  const lists = await Promise.all(
    tenants.map((tenantId) => storage.listByTenant(tenantId, { includeRevoked: true })),
  );
  return JSON.stringify(lists);
}

for (
  const [label, wrap] of [
    ["with the tenant-bound capability", (storage: ApiKeyStorage) => storage],
    ["without it (read, then act)", (storage: ApiKeyStorage) => overrideStorage(storage, {})],
  ] as const
) {
  describe(`ApiKeysService.revokeForTenant and rotateForTenant, ${label}`, () => {
    it("1,000 random (tenant, id) pairs, half foreign: foreign ones change nothing and emit nothing", async () => {
      const inner = new InMemoryApiKeyStorage();
      const { service, events } = makeService({ storage: wrap(inner) });
      const tenants = ["t1", "t2", "t3", "t4"];
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const tenantId = tenants[i % 4];
        ids.push((await service.create({ tenantId, name: `k${i}`, scopes: READ_ORDERS })).id);
      }
      let seed = 7;
      const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
      for (let i = 0; i < 1_000; i++) {
        const id = ids[Math.floor(random() * ids.length)];
        const owner = (await inner.findById(id))!.tenantId;
        const others = tenants.filter((t) => t !== owner);
        const tenantId = i % 2 === 1 ? others[Math.floor(random() * 3)] : owner;
        const revoke = random() < 0.5;
        const before = await snapshot(inner, tenants);
        const eventCount = events.length;
        const call = revoke
          ? service.revokeForTenant(tenantId, id)
          : service.rotateForTenant(tenantId, id);
        if (tenantId !== owner) {
          assert.equal((await rejection(call)).code, "api_key_record_not_found");
          assert.equal(await snapshot(inner, tenants), before, `pair ${i}: a foreign call wrote`);
          assert.equal(events.length, eventCount, `pair ${i}: a foreign call emitted`);
          continue;
        }
        const record = (await inner.findById(id))!;
        const rotatable = record.revokedAt === null && record.rotatedAt === null;
        if (revoke) {
          await call;
          assert.notEqual((await inner.findById(id))!.revokedAt, null);
        } else if (rotatable) {
          ids.push(((await call) as { id: string }).id);
        } else {
          assert.equal((await rejection(call)).code, "api_key_not_rotatable");
        }
      }
      assert.ok(ids.length > 12, "some owned rotations happened");
    });

    it("an unknown id is api_key_record_not_found, like a foreign one; tenantId is required", async () => {
      const { service } = makeService({ storage: wrap(new InMemoryApiKeyStorage()) });
      const { id } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      const unknown = await rejection(service.revokeForTenant("t1", "no-such-id"));
      const foreign = await rejection(service.revokeForTenant("t2", id));
      assert.ok(unknown instanceof ApiKeyOperationError && foreign instanceof ApiKeyOperationError);
      assert.deepEqual(
        [foreign.code, foreign.message, foreign.httpStatus],
        [unknown.code, unknown.message, unknown.httpStatus],
      );
      assert.ok(
        (await rejection(service.rotateForTenant("", id))) instanceof ApiKeyValidationError,
      );
    });
  });
}

describe("a tenant id the storage cannot hold, at every method that takes one", () => {
  it("is ApiKeyValidationError naming tenantId before any storage call, never a storage failure", async () => {
    const { storage, calls } = spyStorage();
    const { service } = makeService({ storage });
    const { id } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    calls.length = 0;
    for (const tenantId of ["t\u0000", "t\ud800"]) {
      for (
        const call of [
          () => service.list(tenantId),
          () => service.listSummaries(tenantId),
          () => service.revokeForTenant(tenantId, id),
          () => service.rotateForTenant(tenantId, id),
          () => service.tenantCredits(tenantId),
        ]
      ) {
        const error = await rejection(call());
        assert.ok(error instanceof ApiKeyValidationError, String(call));
        assert.equal(error.field, "tenantId");
        assert.equal(error.httpStatus, 400);
      }
    }
    assert.deepEqual(calls, []);
    assert.equal((await service.list("t1")).length, 1);
  });
});

describe("ApiKeysService tenant-bound capability", () => {
  it("a storage without it is announced at construction; one with it is not", () => {
    const lines: string[] = [];
    const info = console.info;
    console.info = (line: string) => lines.push(line);
    try {
      makeService({ storage: overrideStorage(new InMemoryApiKeyStorage(), {}) });
      makeService({ storage: new InMemoryApiKeyStorage() });
    } finally {
      console.info = info;
    }
    assert.equal(lines.length, 1);
    assert.match(lines[0], /no markRevokedForTenant or rotateForTenant \(revokeForTenant/);
  });

  it("the storage's tenant-bound call is the write, with the caller's tenant", async () => {
    const { storage, calls } = spyStorage();
    const { service } = makeService({ storage });
    const { id } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    calls.length = 0;
    const rotated = await service.rotateForTenant("t1", id);
    await service.revokeForTenant("t1", rotated.id);
    assert.deepEqual(
      calls.filter((call) => !["findById", "findByPrefix", "peekByPrefix"].includes(call)),
      ["rotateForTenant", "markRevokedForTenant"],
    );
  });
});

describe("ApiKeysService.listSummaries", () => {
  it("gives each key's status: active, rotating in its grace, expired, revoked", async () => {
    const { service, clocks } = makeService();
    const a = await service.create({ tenantId: "t1", name: "a", scopes: READ_ORDERS });
    const b = await service.create({ tenantId: "t1", name: "b", scopes: READ_ORDERS });
    const c = await service.create({ tenantId: "t1", name: "c", scopes: READ_ORDERS });
    const rotated = await service.rotate(a.id, { gracePeriodMs: DAY });
    await service.revoke(b.id);
    const status = async (includeRevoked: boolean) =>
      Object.fromEntries(
        (await service.listSummaries("t1", { includeRevoked })).map((s) => [s.id, s.status]),
      );
    assert.deepEqual(await status(true), {
      [a.id]: "rotating",
      [b.id]: "revoked",
      [c.id]: "active",
      [rotated.id]: "active",
    });
    clocks.advance(DAY);
    assert.deepEqual(await status(false), {
      [a.id]: "expired",
      [c.id]: "active",
      [rotated.id]: "active",
    });
  });

  it("declares no field it never lists: a rotated key's link to its predecessor's windows stays the record's", async () => {
    // Compile time: `rateLimitKeyId` (the record's link) is no field of a summary.
    const declared: "rateLimitKeyId" extends keyof ApiKeySummary ? true : false = false;
    assert.equal(declared, false);
    const { service } = makeService({
      limiter: createRateLimiter({ store: createMemoryRateLimitStore(), logger: () => {} }),
    });
    const { id } = await service.create({
      tenantId: "t1",
      name: "a",
      scopes: READ_ORDERS,
      rateLimits: [{ name: "api", limit: 10, windowMs: 60_000 }],
    });
    const rotated = await service.rotate(id);
    const summary = (await service.listSummaries("t1")).find((s) => s.id === rotated.id)!;
    assert.deepEqual(summary.rateLimits, [{ name: "api", limit: 10, windowMs: 60_000, cost: 1 }]);
    assert.equal("rateLimitKeyId" in summary, false);
  });

  it("JSON of the summaries never holds a hash, a hash scheme or a pepper version (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            op: fc.constantFrom("create", "rotate", "revoke", "wait", "legacy"),
            pick: fc.nat(),
            includeRevoked: fc.boolean(),
          }),
          { maxLength: 12 },
        ),
        async (steps) => {
          const storage = new InMemoryApiKeyStorage();
          const { service, clocks } = makeService({
            storage,
            peppers: { 1: PEPPER_1, 7: PEPPER_2 },
          });
          const ids: string[] = [];
          for (const { op, pick, includeRevoked } of steps) {
            const id = ids[pick % Math.max(ids.length, 1)];
            if (op === "create" || id === undefined) {
              ids.push(
                (await service.create({ tenantId: "t", name: "k", scopes: READ_ORDERS })).id,
              );
            } else if (op === "rotate") {
              await service.rotate(id, { gracePeriodMs: pick % DAY }).catch(() => {});
            } else if (op === "revoke") {
              await service.revoke(id);
            } else if (op === "wait") {
              clocks.advance(pick % (2 * DAY));
            } else {
              const record = (await storage.findById(id))!;
              await storage.replaceHash(id, record.hash, {
                hash: "f".repeat(64),
                hashScheme: "sha256-pepper",
                pepperVersion: 7,
              });
            }
            const json = JSON.stringify(await service.listSummaries("t", { includeRevoked }));
            for (const field of ["hash", "hashScheme", "pepperVersion"]) {
              assert.equal(json.includes(`"${field}"`), false, `field ${field} listed`);
            }
            for (const record of await storage.listByTenant("t", { includeRevoked: true })) {
              assert.equal(json.includes(record.hash), false, "a hash listed");
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("ApiKeysService prefix collisions", () => {
  /** A storage where another writer takes each new key's prefix just before `method` writes it. */
  function takenPrefixes(method: "insert" | "rotate", times: number) {
    const inner = new InMemoryApiKeyStorage();
    let taken = 0;
    const take = async (record: ApiKeyRecord) => {
      taken++;
      await inner.insert({ ...record, id: `${record.id}-other`, tenantId: "other" });
      throw new Error("duplicate API key prefix");
    };
    const storage = overrideStorage(inner, {
      insert: (record: ApiKeyRecord) =>
        method === "insert" && taken < times ? take(record) : inner.insert(record),
      rotate: (input: { newRecord: ApiKeyRecord }) =>
        method === "rotate" && taken < times ? take(input.newRecord) : inner.rotate(input as never),
    });
    return { storage, inner };
  }

  it("create draws a new key while its prefix is taken, and succeeds within 3 draws", async () => {
    const { storage, inner } = takenPrefixes("insert", 2);
    const { service, events } = makeService({ storage });
    const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    assert.equal((await inner.findById(id))!.prefix, parseKey(key)!.prefix);
    assert.deepEqual(events.map((event) => event.type), ["api_key.created"]);
  });

  for (const operation of ["create", "rotate"] as const) {
    it(`${operation}: 3 taken prefixes throw ApiKeyPrefixCollisionError with its cause and report one metric`, async () => {
      const { storage, inner } = takenPrefixes(operation === "create" ? "insert" : "rotate", 3);
      const metrics: unknown[] = [];
      const { service, events } = makeService({
        storage,
        onOperationMetric: (metric) => {
          metrics.push(metric);
        },
      });
      let call: Promise<unknown>;
      if (operation === "create") {
        call = service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
      } else {
        const first = await makeService({ storage: inner }).service.create({
          tenantId: "t1",
          name: "k",
          scopes: READ_ORDERS,
        });
        call = service.rotate(first.id);
      }
      const error = await rejection(call);
      assert.ok(error instanceof ApiKeyPrefixCollisionError);
      assert.deepEqual([error.code, error.httpStatus, error.operation, error.attempts], [
        "api_key_prefix_collision",
        500,
        operation,
        3,
      ]);
      assert.ok(error.cause instanceof ApiKeyStorageError);
      assert.deepEqual(metrics, [{
        type: "api_key.operation",
        operation,
        outcome: "prefix_collision_exhausted",
        attempts: 3,
      }]);
      assert.deepEqual(events.filter((event) => event.type !== "api_key.created"), []);
    });
  }

  it("any other storage failure is thrown at once, without another draw", async () => {
    let inserts = 0;
    const storage = overrideStorage(new InMemoryApiKeyStorage(), {
      insert: () => {
        inserts++;
        return Promise.reject(new Error("down"));
      },
    });
    const { service } = makeService({ storage });
    const error = await rejection(
      service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS }),
    );
    assert.ok(error instanceof ApiKeyStorageError);
    assert.equal(inserts, 1);
  });
});

describe("ApiKeysService.updateCredits with the audit log", () => {
  const CHECKPOINT_KEY = "an-audit-key-of-at-least-thirty-two-bytes";

  /** An in-memory storage whose next `appendAudit` calls reject while `failing`. */
  class FailingAudit extends InMemoryApiKeyStorage {
    failing = false;
    override appendAudit(audit: Parameters<InMemoryApiKeyStorage["appendAudit"]>[0]) {
      if (this.failing) return Promise.reject(new Error("audit table unavailable"));
      return super.appendAudit(audit);
    }
  }

  /** A service with the audit log and a limiter over `storage`, a key of 10 credits and a pool of 100. */
  async function audited(storage = new FailingAudit()) {
    const info = console.info;
    console.info = () => {};
    const { service } = makeService({
      storage,
      audit: { checkpointKey: CHECKPOINT_KEY },
      limiter: createRateLimiter({ store: createMemoryRateLimitStore(), logger: () => {} }),
    });
    console.info = info;
    const { id } = await service.create({
      tenantId: "t1",
      name: "k",
      scopes: READ_ORDERS,
      credits: { remaining: 10 },
    });
    await service.create({
      tenantId: "t1",
      name: "pooled",
      scopes: READ_ORDERS,
      credits: { remaining: 100, sharedBy: "tenant" },
    });
    const balances = async () => [
      (await service.listSummaries("t1")).find((k) => k.id === id)?.credits?.remaining,
      (await service.tenantCredits("t1"))?.remaining,
    ];
    const actions = async () =>
      (await service.auditLog("t1")).records.map((record) => record.action);
    return { service, storage, id, balances, actions };
  }

  it("a refused audit context (checked before the change) changes no balance and writes no record", async () => {
    const { service, id, balances, actions } = await audited();
    for (
      const context of [
        { actor: "x".repeat(201) },
        { requestId: "" },
        { clientAddress: 42 as unknown as string },
      ]
    ) {
      for (const key of [id, null]) {
        await assert.rejects(service.updateCredits("t1", key, { add: 5 }, context), TypeError);
      }
    }
    assert.deepEqual(await balances(), [10, 100]);
    assert.deepEqual(await actions(), ["key.created", "key.created"]);
    assert.deepEqual(await service.updateCredits("t1", id, { add: 5 }, { actor: "billing" }), {
      remaining: 15,
      nextRefillAt: null,
    });
    await service.close();
  });

  it("an append failing after the change: ApiKeyAuditNotRecordedError with the balance applied, never a plain failure", async () => {
    const { service, storage, id, balances, actions } = await audited();
    storage.failing = true;
    for (const [key, remaining] of [[id, 15], [null, 105]] as const) {
      const error = await rejection(service.updateCredits("t1", key, { add: 5 }));
      assert.ok(error instanceof ApiKeyAuditNotRecordedError);
      assert.deepEqual([error.name, error.code, error.httpStatus, error.balance], [
        "ApiKeyAuditNotRecordedError",
        "api_key_audit_not_recorded",
        500,
        { remaining, nextRefillAt: null },
      ]);
      assert.match(String(error.message), /applied/);
      assert.equal((error.cause as Error).name, "ApiKeyStorageError");
      assert.ok(!JSON.stringify(error).includes("audit table unavailable"));
    }
    storage.failing = false;
    assert.deepEqual(await balances(), [15, 105]);
    assert.deepEqual(await actions(), ["key.created", "key.created"]);
    await service.close();
  });
});

/** `inner` whose `rotate` first runs `before` (a write landing late, after other calls). */
function lateRotation<S extends ApiKeyStorage>(inner: S, before: () => Promise<void>): S {
  return new Proxy(inner, {
    get(target, name) {
      const value = Reflect.get(target, name);
      if (typeof value !== "function") return value;
      if (name !== "rotate") return value.bind(target);
      return async (...args: unknown[]) => {
        await before();
        return value.apply(target, args);
      };
    },
  });
}

describe("ApiKeysService.rotate with a rename landing before its write", () => {
  const storages = [
    ["memory", () => new InMemoryApiKeyStorage()],
    ["Prisma", () => new PrismaApiKeyStorage(fakePrismaClient())],
  ] as const;
  for (const [label, make] of storages) {
    it(`${label}: the successor carries the name the old key holds at the write`, async () => {
      const inner = make();
      let renames = 0;
      const storage = lateRotation(inner, async () => {
        if (renames++ === 0) await inner.renameForTenant("t1", id, "billing-new");
      });
      const { service } = makeService({ storage });
      const { id } = await service.create({
        tenantId: "t1",
        name: "billing-old",
        scopes: READ_ORDERS,
      });
      const rotated = await service.rotate(id);
      assert.equal((await inner.findById(rotated.id))!.name, "billing-new");
      assert.equal((await inner.findById(id))!.replacedByKeyId, rotated.id);
    });

    it(`${label}: renamed again during the second attempt, it refuses with api_key_not_rotatable and leaves no usable key`, async () => {
      const inner = make();
      let renames = 0;
      const storage = lateRotation(inner, async () => {
        await inner.renameForTenant("t1", id, `billing-${++renames}`);
      });
      const { service } = makeService({ storage });
      const { id } = await service.create({
        tenantId: "t1",
        name: "billing-0",
        scopes: READ_ORDERS,
      });
      const error = await rejection(service.rotate(id));
      assert.equal(error.code, "api_key_not_rotatable");
      assert.equal(renames, 2, "one retry");
      const old = (await inner.findById(id))!;
      assert.equal(old.rotatedAt, null);
      const usable = (await inner.listByTenant("t1")).filter((r) => r.revokedAt === null);
      assert.deepEqual(usable.map((r) => r.id), [id]);
    });

    it(`${label}: a name given to rotate is the successor's, a rename meanwhile notwithstanding`, async () => {
      const inner = make();
      const storage = lateRotation(inner, () => inner.renameForTenant("t1", id, "billing-new"));
      const { service } = makeService({ storage });
      const { id } = await service.create({
        tenantId: "t1",
        name: "billing-old",
        scopes: READ_ORDERS,
      });
      const rotated = await service.rotate(id, { name: "billing-next" });
      assert.equal((await inner.findById(rotated.id))!.name, "billing-next");
      assert.equal((await inner.findById(id))!.name, "billing-new");
    });
  }
});

describe("ApiKeysService.rotate of a stored expiresAt past 9999-12-31", () => {
  it("refuses it as expired (api_key_not_rotatable), as PostgreSQL reads it", async () => {
    const { service, storage } = makeService();
    const { id } = await service.create({ tenantId: "t1", name: "far", scopes: READ_ORDERS });
    const stored = (await storage.findById(id))!;
    await storage.markRevoked(id, new Date(0));
    const far = {
      ...stored,
      id: "far",
      prefix: "FarFarFarFar",
      expiresAt: new Date(Date.UTC(10000, 0, 1)),
    };
    await storage.insert(far);
    const error = await rejection(service.rotate("far", { gracePeriodMs: 1000 }));
    assert.equal(error.code, "api_key_not_rotatable");
    const summaries = await service.listSummaries("t1", { includeRevoked: true });
    assert.equal(summaries.find((s) => s.id === "far")?.status, "expired");
  });
});
