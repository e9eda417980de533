/**
 * Rotations that wait for the new key (api_keys/verify/_first_use.ts and its hooks
 * in the manage and verify flows): every boundary by fake clock, the input
 * rules, a storage without the capability, contained failures, and 1,000
 * concurrent verifies during the switch.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeysService,
  ApiKeyValidationError,
  InMemoryApiKeyStorage,
  PrismaApiKeyStorage,
} from "../../../api_keys/mod.ts";
import { requireRotationWaits } from "../../../api_keys/verify/_first_use.ts";
import { createRateLimiter } from "../../../rate_limits/limiter.ts";
import { createMemoryRateLimitStore } from "../../../rate_limits/memory_store.ts";
import { compileSettings } from "../../../api_keys/_settings.ts";
import { fakeKeyedDelegate, fakePrismaClient } from "../storage/fake_prisma.ts";
import {
  FakeClocks,
  makeService,
  overrideStorage,
  PEPPER_1,
  READ_ORDERS,
  rejection,
} from "../helpers.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WAITING = { gracePeriodMs: HOUR, graceStarts: "first-use", maxWaitMs: 7 * DAY } as const;

/** Lets the lowering, started off the request path, finish. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

async function expiryOf(
  storage: { findById(id: string): Promise<{ expiresAt: Date | null } | null> },
  id: string,
) {
  return (await storage.findById(id))!.expiresAt?.getTime();
}

/** A service, one key rotated with `input` at the clock's start, and the rotation's result. */
async function rotatedKey(input: Parameters<ApiKeysService["rotate"]>[1], expiresAt?: Date) {
  const made = makeService();
  const { id, key } = await made.service.create({
    tenantId: "t",
    name: "n",
    scopes: READ_ORDERS,
    expiresAt,
  });
  const rotated = await made.service.rotate(id, input);
  return { ...made, oldId: id, oldKey: key, rotated, rotatedAt: made.clocks.now };
}

describe('rotate with graceStarts "first-use": boundaries by fake clock', () => {
  it("new key never used: the old key works until the upper bound, not a millisecond longer", async () => {
    const { service, storage, clocks, events, oldId, oldKey, rotated, rotatedAt } =
      await rotatedKey(WAITING);
    const bound = rotatedAt + 7 * DAY + HOUR;
    assert.equal(rotated.graceExpiresAt.getTime(), bound);
    assert.equal(await expiryOf(storage, oldId), bound);
    const event = events.at(-1)!;
    assert.equal(event.type, "api_key.rotated");
    assert.equal(event.type === "api_key.rotated" && event.graceStarts, "first-use");
    assert.equal(event.type === "api_key.rotated" && event.graceExpiresAt.getTime(), bound);
    clocks.now = bound - 1;
    await service.verify(oldKey);
    clocks.now = bound;
    assert.equal((await rejection(service.verify(oldKey))).code, "api_key_expired");
  });

  it("new key used: the old key works until first use + grace, then not", async () => {
    const { service, storage, clocks, oldId, oldKey, rotated, rotatedAt } = await rotatedKey(
      WAITING,
    );
    clocks.now = rotatedAt + 2 * DAY;
    await service.verify(oldKey); // the old key is cached with the upper bound
    await service.verify(rotated.key);
    await settle();
    const lowered = rotatedAt + 2 * DAY + HOUR;
    assert.equal(await expiryOf(storage, oldId), lowered);
    clocks.now = lowered - 1;
    await service.verify(oldKey);
    clocks.now = lowered;
    assert.equal(
      (await rejection(service.verify(oldKey))).code,
      "api_key_expired",
      "the verification cache dropped the old key's upper bound",
    );
    clocks.now = lowered - 10 * 60_000;
    await service.verify(rotated.key); // later uses change nothing
    await settle();
    assert.equal(await expiryOf(storage, oldId), lowered);
  });

  it("a first use just inside the wait lowers nothing past the bound; the old key's own expiry caps it", async () => {
    const late = await rotatedKey(WAITING);
    late.clocks.now = late.rotatedAt + 7 * DAY + 1; // first use + grace is past the bound
    await late.service.verify(late.rotated.key);
    await settle();
    assert.equal(await expiryOf(late.storage, late.oldId), late.rotatedAt + 7 * DAY + HOUR);

    const start = new FakeClocks().now;
    const capped = await rotatedKey(WAITING, new Date(start + 3 * DAY));
    assert.equal(capped.rotated.graceExpiresAt.getTime(), start + 3 * DAY, "capped at rotation");
    capped.clocks.now = start + 3 * DAY - 30 * 60_000;
    await capped.service.verify(capped.rotated.key);
    await settle();
    assert.equal(await expiryOf(capped.storage, capped.oldId), start + 3 * DAY, "never later");

    const early = await rotatedKey(WAITING, new Date(start + 3 * DAY));
    early.clocks.now = start + DAY;
    await early.service.verify(early.rotated.key);
    await settle();
    assert.equal(await expiryOf(early.storage, early.oldId), start + DAY + HOUR);
  });

  it("a grace of 0 ends the old key at the new key's first use", async () => {
    const { service, storage, clocks, oldId, oldKey, rotated, rotatedAt } = await rotatedKey({
      ...WAITING,
      gracePeriodMs: 0,
    });
    clocks.now = rotatedAt + HOUR;
    await service.verify(rotated.key);
    await settle();
    assert.equal(await expiryOf(storage, oldId), rotatedAt + HOUR);
    assert.equal((await rejection(service.verify(oldKey))).code, "api_key_expired");
  });

  it("the old key's lastUsedAt stays visible in list", async () => {
    const { service, clocks, oldId, oldKey, rotated, rotatedAt } = await rotatedKey(WAITING);
    clocks.now = rotatedAt + 5 * 60_000;
    await service.verify(oldKey);
    clocks.now = rotatedAt + 10 * 60_000;
    await service.verify(rotated.key);
    await settle();
    const listed = await service.list("t");
    const old = listed.find((record) => record.id === oldId)!;
    assert.equal(old.lastUsedAt?.getTime(), rotatedAt + 5 * 60_000);
    assert.equal(old.expiresAt?.getTime(), rotatedAt + 10 * 60_000 + HOUR);
    assert.equal(old.replacedByKeyId, rotated.id);
  });

  it("works over Prisma with the rotationWaits delegate (a fake client)", async () => {
    const storage = new PrismaApiKeyStorage(fakePrismaClient(), {
      expiryNotices: fakeKeyedDelegate("keyId"),
      rotationWaits: fakeKeyedDelegate("newKeyId"),
    });
    const { service, clocks } = makeService({ storage, cache: false });
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const rotated = await service.rotate(id, WAITING);
    clocks.advance(DAY);
    await service.verify(rotated.key);
    for (let i = 0; i < 20 && await expiryOf(storage, id) !== clocks.now + HOUR; i++) {
      await settle();
    }
    assert.equal(await expiryOf(storage, id), clocks.now + HOUR);
  });
});

describe('rotate with graceStarts "first-use": only an authorized request is a first use', () => {
  it("a request denied by IP, environment, scope or limit starts no grace; the first authorized one does", async () => {
    const clocks = new FakeClocks();
    const limiter = createRateLimiter({
      store: createMemoryRateLimitStore({ now: () => clocks.now }),
      logger: () => {},
    });
    const made = makeService({
      limiter,
      clock: clocks.clock,
      monotonicClock: clocks.monotonicClock,
    });
    const { service, storage } = made;
    const { id, key: oldKey } = await service.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      allowedIpCidrs: ["10.0.0.0/8"],
      rateLimits: [{ name: "api", limit: 1, windowMs: HOUR }],
    });
    const rotatedAt = clocks.now;
    const rotated = await service.rotate(id, WAITING);
    const bound = rotatedAt + 7 * DAY + HOUR;
    const inside = { clientIp: "10.1.2.3" };
    clocks.advance(DAY);
    const denied: [object, string][] = [
      [{ clientIp: "192.0.2.1" }, "api_key_ip_not_allowed"],
      [{ ...inside, requiredEnvironment: "test" }, "api_key_environment_mismatch"],
      [
        { ...inside, requiredScope: { resource: "billing", level: "read" } },
        "api_key_scope_insufficient",
      ],
    ];
    for (const [options, code] of denied) {
      assert.equal((await rejection(service.authorize(rotated.key, options))).code, code);
      await settle();
      assert.equal(await expiryOf(storage, id), bound, `${code} is not a first use`);
    }
    // The old key spends the chain's one request of the hour: the new key is refused by the limit.
    await service.authorize(oldKey, inside);
    assert.equal(
      (await rejection(service.authorize(rotated.key, inside))).code,
      "api_key_rate_limited",
    );
    await settle();
    assert.equal(await expiryOf(storage, id), bound, "a rate-limited request is not a first use");
    clocks.advance(HOUR + HOUR / 10); // a unit counts for windowMs and up to one sub-bucket more
    await service.authorize(rotated.key, inside);
    for (let i = 0; i < 20 && await expiryOf(storage, id) === bound; i++) await settle();
    assert.equal(await expiryOf(storage, id), clocks.now + HOUR);
  });
});

describe('rotate with graceStarts "first-use": a denied authorization, then a verify', () => {
  it("the verify answered from the cache is the first use: the old key stops at it + grace", async () => {
    const { service, storage, clocks, oldId, oldKey, rotated } = await rotatedKey(WAITING);
    clocks.advance(DAY);
    const billing = { requiredScope: { resource: "billing", level: "read" as const } };
    assert.equal(
      (await rejection(service.authorize(rotated.key, billing))).code,
      "api_key_scope_insufficient",
    );
    clocks.advance(1_000);
    const firstUse = clocks.now;
    await service.verify(rotated.key); // the context cached by the denied authorization
    for (let i = 0; i < 20 && await expiryOf(storage, oldId) !== firstUse + HOUR; i++) {
      await settle();
    }
    assert.equal(await expiryOf(storage, oldId), firstUse + HOUR);
    clocks.advance(2 * HOUR);
    assert.equal((await rejection(service.verify(oldKey))).code, "api_key_expired");
  });
});

describe('rotate with graceStarts "first-use": rules and failures', () => {
  it("maxWaitMs is required with first-use and refused otherwise; graceStarts is checked", async () => {
    const { service, storage } = makeService();
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    for (
      const [input, field, code] of [
        [{ graceStarts: "first-use" }, "maxWaitMs", "api_key_invalid_input"],
        [{ graceStarts: "rotation", maxWaitMs: DAY }, "maxWaitMs", "api_key_invalid_input"],
        [{ maxWaitMs: DAY }, "maxWaitMs", "api_key_invalid_input"],
        [{ graceStarts: "first-use", maxWaitMs: -1 }, "maxWaitMs", "api_key_invalid_time"],
        [{ graceStarts: "first-use", maxWaitMs: 1e16 }, "maxWaitMs", "api_key_invalid_time"],
        [{ graceStarts: "later", maxWaitMs: DAY }, "graceStarts", "api_key_invalid_input"],
      ] as const
    ) {
      const error = await rejection(service.rotate(id, input as never));
      assert.ok(error instanceof ApiKeyValidationError, JSON.stringify(input));
      assert.equal(error.code, code, JSON.stringify(input));
      assert.equal(error.field, field, JSON.stringify(input));
    }
    assert.equal((await storage.findById(id))!.rotatedAt, null, "nothing was rotated");
  });

  it("a storage without the rotation-wait capability: rotate rejects with a TypeError and writes nothing", async () => {
    const info = console.info;
    console.info = () => {};
    try {
      const inner = new InMemoryApiKeyStorage();
      const { service } = makeService({ storage: overrideStorage(inner, {}) });
      const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
      const error = await rejection(service.rotate(id, WAITING));
      assert.ok(error instanceof TypeError);
      assert.match(String(error.message), /graceStarts "first-use" needs the storage capabilities/);
      const settings = compileSettings({
        peppers: { 1: PEPPER_1 },
        storage: overrideStorage(inner, {}),
      });
      assert.throws(() => requireRotationWaits(settings), /needs the storage capabilities/);
      assert.equal(inner.size, 1);
      assert.equal((await inner.findById(id))!.rotatedAt, null);
    } finally {
      console.info = info;
    }
  });

  it("close() waits for a lowering in flight (a process stopping right after the first use lowers)", async () => {
    const inner = new InMemoryApiKeyStorage();
    let release!: () => void;
    const open = new Promise<void>((resolve) => release = resolve);
    const lowerExpiry = inner.lowerExpiry.bind(inner);
    const gated = Object.assign(inner, {
      lowerExpiry: async (...args: Parameters<InMemoryApiKeyStorage["lowerExpiry"]>) => {
        await open;
        return lowerExpiry(...args);
      },
    });
    const { service, clocks } = makeService({ storage: gated, storageTimeoutMs: 5_000 });
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const rotated = await service.rotate(id, WAITING);
    clocks.advance(DAY);
    const firstUse = clocks.now;
    await service.verify(rotated.key);
    let closed = false;
    const closing = service.close().then(() => closed = true);
    await settle();
    assert.equal(closed, false, "close() waits for the lowering");
    release();
    await closing;
    assert.equal(await expiryOf(inner, id), firstUse + HOUR);
  });

  it("a failed lowering is contained and warned about once; the old key keeps its upper bound", async () => {
    const inner = new InMemoryApiKeyStorage();
    const failing = Object.assign(inner, {
      lowerExpiry: () => Promise.reject(new Error("db.internal:5432 refused")),
    });
    const warn = console.warn;
    const lines: string[] = [];
    console.warn = (...args: unknown[]) => lines.push(args.map(String).join(" "));
    try {
      const { service, clocks } = makeService({ storage: failing });
      const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
      const rotated = await service.rotate(id, WAITING);
      clocks.advance(DAY);
      await service.verify(rotated.key);
      await settle();
      assert.equal(await expiryOf(inner, id), rotated.graceExpiresAt.getTime());
      assert.equal(lines.length, 1);
      assert.match(
        lines[0],
        /^api-keys: the first use of a waiting rotation .*failed \(ApiKeyStorageError\)/,
      );
      assert.ok(!lines[0].includes("db.internal"));
    } finally {
      console.warn = warn;
    }
  });

  it("a wait whose rotation did not happen (or was revoked) lowers nothing", async () => {
    const { service, storage, clocks } = makeService();
    const { id, key } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const other = await service.create({ tenantId: "t", name: "other", scopes: READ_ORDERS });
    const bound = new Date(clocks.now + DAY);
    await storage.saveRotationWait!({
      newKeyId: other.id,
      oldKeyId: id,
      gracePeriodMs: 0,
      waitEndsAt: bound,
    });
    await service.verify(other.key);
    await settle();
    assert.equal(await expiryOf(storage, id), undefined, "the key was never rotated to `other`");
    await service.verify(key);
  });
});

describe('rotate with graceStarts "first-use": 1,000 concurrent verifies during the switch', () => {
  it("no request sees both keys rejected, on two instances sharing the storage", async () => {
    const storage = new InMemoryApiKeyStorage();
    // A wall clock that moves with real time, so the switch happens while requests run.
    const base = Date.parse("2030-01-01T00:00:00.000Z");
    const started = performance.now();
    const clock = () => new Date(base + Math.floor(performance.now() - started));
    const instance = () =>
      new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage, clock, cache: false });
    const [a, b] = [instance(), instance()];
    const { id, key: oldKey } = await a.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const grace = 20;
    const rotated = await a.rotate(id, { ...WAITING, gracePeriodMs: grace });
    const bound = rotated.graceExpiresAt.getTime();
    let bothRejected = 0;
    let oldRejected = 0;
    let newRejected = 0;
    const firstUse = clock().getTime();
    // Resolves once the lowered expiry is in the past: the second half starts then, while the
    // first half may still be in flight.
    const switched = (async () => {
      while (await expiryOf(storage, id) === bound) {
        if (performance.now() - started > 5_000) {
          assert.fail("the old key's expiry was not lowered");
        }
        await settle();
      }
      const lowered = (await expiryOf(storage, id))!;
      while (clock().getTime() <= lowered) await new Promise((r) => setTimeout(r, 2));
    })();
    await Promise.all(Array.from({ length: 1_000 }, async (_, i) => {
      if (i < 500) await new Promise((resolve) => setTimeout(resolve, i % 40));
      else await switched;
      const service = i % 2 === 0 ? a : b;
      const [oldAnswer, newAnswer] = await Promise.allSettled([
        service.verify(oldKey),
        service.verify(rotated.key),
      ]);
      if (newAnswer.status === "rejected") newRejected++;
      if (oldAnswer.status === "rejected") oldRejected++;
      if (oldAnswer.status === "rejected" && newAnswer.status === "rejected") bothRejected++;
    }));
    assert.equal(bothRejected, 0);
    assert.equal(newRejected, 0);
    assert.ok(oldRejected >= 500, `the old key was refused ${oldRejected} times`);
    const lowered = (await expiryOf(storage, id))!;
    assert.ok(lowered >= firstUse + grace && lowered < bound, `lowered to ${lowered}`);
  });
});
