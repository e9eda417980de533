/**
 * `notifyExpiring` (api_keys/_expiry.ts): every threshold boundary by fake
 * clock, the rules of which keys get which notice, rotation completion, and
 * three concurrent runners over 2,000 keys emitting each (key, threshold)
 * exactly once, in memory and over a fake Prisma client.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type ApiKeyEvent,
  type ApiKeyExpiringEvent,
  ApiKeyStorageError,
  ApiKeyValidationError,
  InMemoryApiKeyStorage,
  PrismaApiKeyStorage,
} from "../../api_keys/mod.ts";
import { ExpiryJob } from "../../api_keys/_expiry.ts";
import { compileSettings } from "../../api_keys/_settings.ts";
import { fakeKeyedDelegate, fakePrismaClient } from "./storage/fake_prisma.ts";
import { expiringRecord as record, threeRunners } from "./expiry_runners.ts";
import { makeService, overrideStorage, READ_ORDERS, rejection } from "./helpers.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const THRESHOLDS = [7 * DAY, DAY];

const expiring = (events: ApiKeyEvent[]) =>
  events.filter((event): event is ApiKeyExpiringEvent => event.type === "api_key.expiring");

describe("notifyExpiring: thresholds by fake clock", () => {
  it("announces a key once per threshold, exactly at each boundary, never once expired", async () => {
    const { service, clocks, events } = makeService();
    const expiresAt = clocks.now + 10 * DAY;
    const { id } = await service.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      expiresAt: new Date(expiresAt),
    });
    const runAt = async (ms: number) => {
      clocks.now = ms;
      const before = events.length;
      const result = await service.notifyExpiring({ thresholdsMs: THRESHOLDS });
      const emitted = expiring(events.slice(before));
      assert.equal(result.expiring, emitted.length);
      return emitted.map((event) => event.thresholdMs);
    };
    assert.deepEqual(await runAt(expiresAt - 7 * DAY - 1), [], "one ms outside 7 days");
    assert.deepEqual(await runAt(expiresAt - 7 * DAY), [7 * DAY], "exactly 7 days before");
    assert.deepEqual(await runAt(expiresAt - 7 * DAY), [], "the same run again");
    assert.deepEqual(await runAt(expiresAt - DAY - 1), [], "inside 7 days, outside 1 day");
    assert.deepEqual(await runAt(expiresAt - DAY), [DAY], "exactly 1 day before");
    assert.deepEqual(await runAt(expiresAt - 1), [], "one ms before expiry");
    assert.deepEqual(await runAt(expiresAt), [], "expired at expiresAt: no notice");
    const notice = expiring(events)[0];
    assert.deepEqual(notice, {
      type: "api_key.expiring",
      at: new Date(expiresAt - 7 * DAY),
      keyId: id,
      tenantId: "t",
      prefix: notice.prefix,
      environment: "live",
      expiresAt: new Date(expiresAt),
      thresholdMs: 7 * DAY,
    });
  });

  it("a key first seen inside several thresholds gets only the smallest; a clock moved back re-sends nothing", async () => {
    const { service, clocks, events } = makeService();
    const expiresAt = clocks.now + 12 * HOUR;
    await service.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      expiresAt: new Date(expiresAt),
    });
    const thresholdsMs = [7 * DAY, DAY, HOUR];
    await service.notifyExpiring({ thresholdsMs });
    assert.deepEqual(expiring(events).map((event) => event.thresholdMs), [DAY]);
    clocks.now = expiresAt - 3 * DAY; // moved back: inside 7 days only
    assert.deepEqual(await service.notifyExpiring({ thresholdsMs }), {
      expiring: 0,
      rotationsCompleted: 0,
    });
    clocks.now = expiresAt - HOUR;
    await service.notifyExpiring({ thresholdsMs });
    clocks.now = expiresAt - 20 * HOUR; // back again, inside 1 day
    await service.notifyExpiring({ thresholdsMs });
    assert.deepEqual(expiring(events).map((event) => event.thresholdMs), [DAY, HOUR]);
  });

  it("takes thresholds in any order with repeats; `now` overrides the clock", async () => {
    const { service, clocks, events } = makeService();
    await service.create({
      tenantId: "t",
      name: "n",
      scopes: READ_ORDERS,
      expiresAt: new Date(clocks.now + 30 * DAY),
    });
    await service.notifyExpiring({ thresholdsMs: [DAY, 7 * DAY, DAY] });
    assert.equal(expiring(events).length, 0);
    await service.notifyExpiring({
      thresholdsMs: [DAY, 7 * DAY, DAY],
      now: new Date(clocks.now + 29 * DAY + 1),
    });
    assert.deepEqual(expiring(events).map((event) => event.thresholdMs), [DAY]);
  });

  it("keys without expiry, beyond the largest threshold, revoked or expired get none", async () => {
    const { service, clocks, events } = makeService();
    const create = (expiresAt: Date | null) =>
      service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS, expiresAt });
    await create(null);
    await create(new Date(clocks.now + 8 * DAY));
    const revoked = await create(new Date(clocks.now + HOUR));
    await service.revoke(revoked.id);
    await create(new Date(clocks.now + HOUR));
    clocks.advance(HOUR);
    assert.deepEqual(await service.notifyExpiring({ thresholdsMs: THRESHOLDS }), {
      expiring: 0,
      rotationsCompleted: 0,
    });
    assert.equal(expiring(events).length, 0);
  });
});

describe("notifyExpiring: rotations", () => {
  it("a rotated key is announced during its grace, and its rotation completes once after", async () => {
    const { service, clocks, events } = makeService();
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    const rotated = await service.rotate(id, { gracePeriodMs: 2 * HOUR });
    const rotatedAt = clocks.now;
    await service.notifyExpiring({ thresholdsMs: THRESHOLDS });
    assert.deepEqual(expiring(events).map((event) => [event.keyId, event.thresholdMs]), [
      [id, DAY],
    ]);
    clocks.advance(2 * HOUR - 1);
    assert.equal(
      (await service.notifyExpiring({ thresholdsMs: THRESHOLDS })).rotationsCompleted,
      0,
    );
    clocks.advance(1);
    const before = events.length;
    assert.deepEqual(await service.notifyExpiring({ thresholdsMs: THRESHOLDS }), {
      expiring: 0,
      rotationsCompleted: 1,
    });
    assert.deepEqual(events.slice(before), [{
      type: "api_key.rotation_completed",
      at: new Date(clocks.now),
      tenantId: "t",
      oldKeyId: id,
      oldPrefix: (events[0] as { prefix: string }).prefix,
      newKeyId: rotated.id,
      environment: "live",
      rotatedAt: new Date(rotatedAt),
      endedAt: rotated.graceExpiresAt,
    }]);
    clocks.advance(HOUR);
    await service.notifyExpiring({ thresholdsMs: THRESHOLDS });
    clocks.now = rotatedAt + HOUR; // moved back into the grace
    assert.deepEqual(await service.notifyExpiring({ thresholdsMs: THRESHOLDS }), {
      expiring: 0,
      rotationsCompleted: 0,
    });
  });

  it("a rotated key first seen past its grace gets no notice, only its completion", async () => {
    const { service, clocks, events } = makeService();
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.rotate(id, { gracePeriodMs: HOUR });
    clocks.advance(HOUR + 1);
    await service.notifyExpiring({ thresholdsMs: THRESHOLDS });
    assert.deepEqual(events.slice(2).map((event) => event.type), ["api_key.rotation_completed"]);
  });

  it("a rotation without grace completes at once, also run on a clock behind the rotating instance's: no notice", async () => {
    const { service, clocks, events } = makeService();
    const { id } = await service.create({ tenantId: "t", name: "n", scopes: READ_ORDERS });
    await service.rotate(id, { gracePeriodMs: 0 });
    const before = events.length;
    const now = new Date(clocks.now - 5_000); // this instance is 5 s behind the rotating one
    assert.deepEqual(await service.notifyExpiring({ thresholdsMs: THRESHOLDS, now }), {
      expiring: 0,
      rotationsCompleted: 1,
    });
    assert.deepEqual(events.slice(before).map((event) => event.type), [
      "api_key.rotation_completed",
    ]);
  });

  it("a rotation whose old key was revoked, or ended before the largest threshold, completes silently", async () => {
    const { service, clocks, events } = makeService();
    const first = await service.create({ tenantId: "t", name: "a", scopes: READ_ORDERS });
    await service.rotate(first.id, { gracePeriodMs: HOUR });
    await service.revoke(first.id);
    const second = await service.create({ tenantId: "t", name: "b", scopes: READ_ORDERS });
    await service.rotate(second.id, { gracePeriodMs: HOUR });
    clocks.advance(HOUR + DAY + 1); // the second ended more than a day (the largest threshold) ago
    const before = events.length;
    await service.notifyExpiring({ thresholdsMs: [DAY] });
    assert.deepEqual(events.slice(before), []);
  });
});

describe("notifyExpiring: options and storage", () => {
  it("rejects bad options with api_key_invalid_input naming the field", async () => {
    const { service } = makeService();
    for (
      const thresholdsMs of [[], [0], [-1], [1.5], [Number.NaN], ["1"], null, new Array(33).fill(1)]
    ) {
      const error = await rejection(service.notifyExpiring({ thresholdsMs } as never));
      assert.ok(error instanceof ApiKeyValidationError, String(thresholdsMs));
      assert.equal(error.field, "thresholdsMs");
    }
    const now = await rejection(
      service.notifyExpiring({ thresholdsMs: [DAY], now: new Date(Number.NaN) }),
    );
    assert.equal(now.field, "now");
    // Valid Dates out of the instants the service reads (a 503 from PostgreSQL, 22008).
    for (const ms of [8.64e15, Date.UTC(10000, 0, 1), Date.parse("-000001-01-01T00:00:00Z")]) {
      const far = await rejection(
        service.notifyExpiring({ thresholdsMs: [DAY], now: new Date(ms) }),
      );
      assert.equal(far.code, "api_key_invalid_input", String(ms));
      assert.equal(far.field, "now", String(ms));
    }
    assert.equal((await rejection(service.notifyExpiring(null as never))).field, "options");
  });

  it("the job itself (the service loads it when built, not at import) runs over the settings", async () => {
    const storage = new InMemoryApiKeyStorage();
    const job = new ExpiryJob(compileSettings({ peppers: { 1: "p".repeat(32) }, storage }));
    assert.deepEqual(await job.run({ thresholdsMs: [DAY] }), {
      expiring: 0,
      rotationsCompleted: 0,
    });
    assert.equal((await rejection(job.run({ thresholdsMs: [] }))).field, "thresholdsMs");
  });

  it("a storage without listExpiring and claimExpiryNotice: notifyExpiring rejects saying so", async () => {
    const info = console.info;
    console.info = () => {};
    try {
      const { service } = makeService({
        storage: overrideStorage(new InMemoryApiKeyStorage(), {}),
      });
      const error = await rejection(service.notifyExpiring({ thresholdsMs: [DAY] }));
      assert.ok(error instanceof TypeError);
      assert.match(
        String(error.message),
        /^api-keys: notifyExpiring needs the storage capabilities listExpiring and claimExpiryNotice/,
      );
    } finally {
      console.info = info;
    }
  });

  it("a listExpiring page that does not move forward is a storage error, not an endless scan", async () => {
    const inner = new InMemoryApiKeyStorage();
    const { service, clocks } = makeService({ storage: inner });
    for (let i = 0; i < 501; i++) {
      await inner.insert(record(i, clocks.now + HOUR));
    }
    const stuck = Object.assign(overrideStorage(inner, {}), {
      listExpiring: (options: Parameters<InMemoryApiKeyStorage["listExpiring"]>[0]) =>
        inner.listExpiring({ ...options, after: null }),
      claimExpiryNotice: () => Promise.resolve(false),
    });
    const info = console.info;
    console.info = () => {};
    const { service: stuckService } = makeService({ storage: stuck });
    console.info = info;
    const error = await rejection(stuckService.notifyExpiring({ thresholdsMs: [DAY] }));
    assert.ok(error instanceof ApiKeyStorageError);
    assert.equal(error.operation, "listExpiring");
    assert.equal((await service.notifyExpiring({ thresholdsMs: [DAY] })).expiring, 501);
  });
});

describe("notifyExpiring: three concurrent runners", () => {
  it("in memory, 2,000 keys: each (key, threshold) exactly once", async () => {
    await threeRunners(new InMemoryApiKeyStorage(), 2_000);
  });

  it("over a fake Prisma client (600 keys, two pages): each (key, threshold) exactly once", async () => {
    const storage = new PrismaApiKeyStorage(fakePrismaClient(), {
      expiryNotices: fakeKeyedDelegate("keyId"),
    });
    const info = console.info;
    console.info = () => {};
    try {
      await threeRunners(storage, 600);
    } finally {
      console.info = info;
    }
  });
});
