/** Fixtures of the expiry-notice tests, in memory and on PostgreSQL. */
import assert from "node:assert/strict";
import {
  type ApiKeyEvent,
  type ApiKeyExpiringEvent,
  type ApiKeyRecord,
  ApiKeysService,
  type ApiKeyStorage,
} from "../../api_keys/mod.ts";
import { PEPPER_1 } from "./helpers.ts";

const DAY = 86_400_000;
const THRESHOLDS = [7 * DAY, DAY];

/** A stored record expiring at `expiresAtMs` (no hashing: the notices never verify keys). */
export function expiringRecord(i: number, expiresAtMs: number): ApiKeyRecord {
  return {
    id: `key-${String(i).padStart(5, "0")}`,
    tenantId: `tenant-${i % 7}`,
    name: `key ${i}`,
    environment: i % 2 === 0 ? "live" : "test",
    prefix: `P${String(i).padStart(11, "0")}`,
    hash: "A".repeat(43),
    pepperVersion: 1,
    scopes: ["orders:read"],
    lastUsedAt: null,
    expiresAt: expiresAtMs === Infinity ? null : new Date(expiresAtMs),
    revokedAt: null,
    rotatedAt: null,
    replacedByKeyId: null,
    createdBy: null,
    createdAt: new Date(0),
  };
}

/**
 * Three services over `storage` run `notifyExpiring` at once, twice (at `t0`
 * and a day later), over `count` keys (stored by `insertAll`, default one
 * `insert` each): each (key, threshold) a run owes is emitted exactly once,
 * whichever runner emits it.
 */
export async function threeRunners(
  storage: ApiKeyStorage,
  count: number,
  insertAll = async (records: ApiKeyRecord[]) => {
    for (const record of records) await storage.insert(record);
  },
): Promise<void> {
  const t0 = Date.parse("2030-01-01T00:00:00.000Z");
  // Expiries spread over 9 days: some beyond 7 days, some inside, some inside 1 day.
  const expiries = Array.from({ length: count }, (_, i) => t0 + Math.floor((i * 9 * DAY) / count));
  await insertAll(expiries.map((expiresAt, i) => expiringRecord(i, expiresAt + 1)));
  const events: ApiKeyEvent[] = [];
  let now = t0;
  const runners = Array.from({ length: 3 }, () =>
    new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage,
      clock: () => new Date(now),
      onEvent: (event) => {
        events.push(event);
      },
    }));
  const expected = new Set<string>();
  const owed = (at: number, notified: Map<number, number>) => {
    for (let i = 0; i < count; i++) {
      const remaining = expiries[i] + 1 - at;
      if (remaining <= 0) continue;
      const threshold = [DAY, 7 * DAY].find((t) => remaining <= t);
      if (threshold === undefined || (notified.get(i) ?? Infinity) <= threshold) continue;
      notified.set(i, threshold);
      expected.add(`key-${String(i).padStart(5, "0")} ${threshold}`);
    }
  };
  const notified = new Map<number, number>();
  for (const at of [t0, t0 + DAY]) {
    now = at;
    const before = expected.size;
    owed(at, notified);
    const results = await Promise.all(
      runners.map((runner) => runner.notifyExpiring({ thresholdsMs: THRESHOLDS })),
    );
    const total = results.reduce((sum, result) => sum + result.expiring, 0);
    assert.equal(total, expected.size - before, `runs at ${new Date(at).toISOString()}`);
  }
  const seen = events.filter((event): event is ApiKeyExpiringEvent =>
    event.type === "api_key.expiring"
  ).map((event) => `${event.keyId} ${event.thresholdMs}`);
  assert.equal(seen.length, new Set(seen).size, "a (key, threshold) was emitted twice");
  assert.deepEqual(new Set(seen), expected);
  assert.ok(expected.size > count / 2, `only ${expected.size} notices: the test proves little`);
}
