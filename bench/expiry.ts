/**
 * Benchmark 7: expiry notices. Three `ApiKeysService` instances over one
 * in-memory storage run `notifyExpiring` at the same moment over 10,000 keys
 * whose expiries spread over 9 days, twice (a day apart); target: each
 * (key, threshold) owed is emitted exactly once. The time of each round is
 * printed, not judged. (The same check over 2,000 keys on real PostgreSQL is
 * a test: `tests/postgres/_expiry_test.ts`.)
 *
 * Run: `deno run -A bench/expiry.ts [--quick]` (or through `deno task bench`).
 *
 * @module
 */
import {
  type ApiKeyEvent,
  type ApiKeyRecord,
  ApiKeysService,
  InMemoryApiKeyStorage,
} from "../api_keys/mod.ts";
import { fmt, printTable, QUICK, runtimeName, verdict } from "./lib/harness.ts";

const PEPPER = "bench-pepper-0123456789abcdefghijklmnopqrstuvwxyz";
const DAY = 86_400_000;
const THRESHOLDS = [7 * DAY, DAY];
const KEYS = QUICK ? 2_000 : 10_000;
const T0 = Date.parse("2030-01-01T00:00:00.000Z");

function record(i: number, expiresAtMs: number): ApiKeyRecord {
  return {
    id: `key-${String(i).padStart(6, "0")}`,
    tenantId: `tenant-${i % 500}`,
    name: `key ${i}`,
    environment: "live",
    prefix: `E${String(i).padStart(11, "0")}`,
    hash: "A".repeat(43),
    pepperVersion: 1,
    scopes: ["orders:read"],
    lastUsedAt: null,
    expiresAt: new Date(expiresAtMs),
    revokedAt: null,
    rotatedAt: null,
    replacedByKeyId: null,
    createdBy: null,
    createdAt: new Date(0),
  };
}

/** The (key, threshold) pairs a run at `at` owes, given what earlier runs sent. */
function owed(expiries: number[], at: number, sent: Map<number, number>): Set<string> {
  const pairs = new Set<string>();
  expiries.forEach((expiresAt, i) => {
    const remaining = expiresAt - at;
    const threshold = THRESHOLDS.toSorted((a, b) => a - b).find((t) => remaining <= t);
    if (remaining <= 0 || threshold === undefined || (sent.get(i) ?? Infinity) <= threshold) return;
    sent.set(i, threshold);
    pairs.add(`${record(i, 0).id} ${threshold}`);
  });
  return pairs;
}

const storage = new InMemoryApiKeyStorage();
const expiries = Array.from({ length: KEYS }, (_, i) => T0 + 1 + Math.floor((i * 9 * DAY) / KEYS));
for (let i = 0; i < KEYS; i++) await storage.insert(record(i, expiries[i]));
let now = T0;
const events: ApiKeyEvent[] = [];
const runners = Array.from({ length: 3 }, () =>
  new ApiKeysService({
    peppers: { 1: PEPPER },
    storage,
    clock: () => new Date(now),
    onEvent: (event) => void events.push(event),
  }));
const sent = new Map<number, number>();
const rows: string[][] = [];
for (const at of [T0, T0 + DAY]) {
  now = at;
  events.length = 0;
  const expected = owed(expiries, at, sent);
  const began = performance.now();
  await Promise.all(runners.map((runner) => runner.notifyExpiring({ thresholdsMs: THRESHOLDS })));
  const ms = performance.now() - began;
  const seen = events.flatMap((event) =>
    event.type === "api_key.expiring" ? [`${event.keyId} ${event.thresholdMs}`] : []
  );
  const unique = new Set(seen);
  const exactlyOnce = seen.length === unique.size && unique.size === expected.size &&
    [...expected].every((pair) => unique.has(pair));
  rows.push([
    `day ${(at - T0) / DAY}`,
    String(KEYS),
    String(expected.size),
    String(seen.length),
    String(seen.length - unique.size),
    fmt(ms, 0),
    verdict(exactlyOnce),
  ]);
}
printTable(
  `Benchmark 7 (${runtimeName()}): expiry notices, 3 concurrent runners, in-memory storage`,
  ["run", "keys", "owed", "emitted", "duplicates", "ms (3 runners)", "exactly once"],
  rows,
);
