/** Shared fixtures of the API-key core tests. */
import assert from "node:assert/strict";
import {
  API_KEY_STORAGE_METHODS,
  type ApiKeyEvent,
  ApiKeysService,
  type ApiKeysServiceOptions,
  type ApiKeyStorage,
  type ApiKeyVerificationMetric,
  generateKey,
  type ImportApiKeysResult,
  InMemoryApiKeyStorage,
} from "../../api_keys/mod.ts";

/** An `importKeys` result without conflicts or errors, with these counts (0 when not given). */
export function cleanImport(
  counts: Partial<Pick<ImportApiKeysResult, "imported" | "skipped" | "revoked">>,
): ImportApiKeysResult {
  const empty = { imported: 0, skipped: 0, revoked: 0, conflictCount: 0, errorCount: 0 };
  return { ...empty, ...counts, conflicts: [], errors: [] };
}

export const PEPPER_1 = "pepper-one-0123456789abcdefghijklmnop";
export const PEPPER_2 = "pepper-two-0123456789abcdefghijklmnop";

/** A settable wall clock and monotonic clock. */
export class FakeClocks {
  now = Date.parse("2030-01-01T00:00:00.000Z");
  mono = 1000;
  readonly clock = (): Date => new Date(this.now);
  readonly monotonicClock = (): number => this.mono;
  advance(ms: number): void {
    this.now += ms;
    this.mono += ms;
  }
}

/** A service with recording sinks and fake clocks. */
export function makeService(overrides: Partial<ApiKeysServiceOptions> = {}) {
  const clocks = new FakeClocks();
  const events: ApiKeyEvent[] = [];
  const metrics: ApiKeyVerificationMetric[] = [];
  const authFailures: [string | null, string][] = [];
  const storage: ApiKeyStorage = overrides.storage ?? new InMemoryApiKeyStorage();
  const service = new ApiKeysService({
    peppers: { 1: PEPPER_1 },
    storage,
    clock: clocks.clock,
    monotonicClock: clocks.monotonicClock,
    onEvent: (event) => {
      events.push(event);
    },
    onMetric: (metric) => {
      metrics.push(metric);
    },
    onAuthFailed: (prefix, code) => {
      authFailures.push([prefix, code]);
    },
    ...overrides,
  });
  return { service, storage, clocks, events, metrics, authFailures };
}

/** `inner` behind a proxy that records the name of each method called, in order. */
export function spyCalls<T extends object>(inner: T): { spied: T; calls: string[] } {
  const calls: string[] = [];
  const spied = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(property));
        return value.apply(target, args);
      };
    },
  });
  return { spied, calls };
}

/** Wraps a storage, counting calls per method. */
export function spyStorage(inner: ApiKeyStorage = new InMemoryApiKeyStorage()) {
  const { spied, calls } = spyCalls(inner);
  return { storage: spied, calls };
}

/** Whether a spied storage call looked a prefix up (`peekByPrefix` is the in-process form). */
export function isPrefixLookup(call: string): boolean {
  return call === "findByPrefix" || call === "peekByPrefix";
}

export const READ_ORDERS = [{ resource: "orders", level: "read" as const }];

/** Rejection helper returning the error. */
export async function rejection(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Record<string, unknown>;
  }
  throw new Error("expected a rejection");
}

/** A storage delegating to `inner` except for the given methods. */
export function overrideStorage(
  inner: ApiKeyStorage,
  overrides: Partial<Record<keyof ApiKeyStorage, (...args: never[]) => unknown>>,
): ApiKeyStorage {
  const storage: Record<string, unknown> = {};
  for (const method of API_KEY_STORAGE_METHODS) {
    storage[method] = overrides[method] ?? inner[method].bind(inner);
  }
  return storage as unknown as ApiKeyStorage;
}

/** An in-memory storage whose `method` waits for `release()` before writing (a write landing late). */
export function gatedStorage(method: keyof ApiKeyStorage): {
  storage: InMemoryApiKeyStorage;
  release: () => void;
} {
  const inner = new InMemoryApiKeyStorage();
  let release!: () => void;
  const open = new Promise<void>((resolve) => release = resolve);
  const storage = new Proxy(inner, {
    get(target, name) {
      const value = Reflect.get(target, name);
      if (typeof value !== "function") return value;
      if (name !== method) return value.bind(target);
      return async (...args: unknown[]) => {
        await open;
        return value.apply(target, args);
      };
    },
  });
  return { storage, release };
}

/** `key` with its last character replaced by a different one (so its checksum no longer matches). */
export function breakChecksum(key: string): string {
  return key.slice(0, -1) + (key.endsWith("0") ? "1" : "0");
}

/**
 * Reports through `report` a key whose rotation waits for its first use, an
 * unknown key and text that is no key; then checks that no use was recorded:
 * the key is revoked with `lastUsedAt` still null, the old key's grace did not
 * start, the only events are `api_key.exposed` then `api_key.revoked`, and no
 * metric or `onAuthFailed` call was made (build `made` with `emitUsageEvents`).
 */
export async function assertReportsRecordNoUse(
  made: {
    service: ApiKeysService;
    events: { type: string }[];
    metrics: unknown[];
    authFailures: unknown[];
  },
  report: (rawKey: string) => Promise<unknown>,
): Promise<void> {
  const { service, events, metrics, authFailures } = made;
  const old = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
  const rotated = await service.rotate(old.id, {
    gracePeriodMs: 3_600_000,
    graceStarts: "first-use",
    maxWaitMs: 7 * 86_400_000,
  });
  events.length = 0;
  metrics.length = 0;
  authFailures.length = 0;
  for (const rawKey of [rotated.key, generateKey({ environment: "live" }).raw, "not a key"]) {
    await report(rawKey);
  }
  // writes started off the request path (lastUsedAt, the first use of a rotation) are done now
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
  const keys = await service.list("t1", { includeRevoked: true });
  const reported = keys.find((key) => key.id === rotated.id)!;
  assert.notEqual(reported.revokedAt, null, "the reported key is revoked");
  assert.equal(reported.lastUsedAt, null, "a report is not a use: no lastUsedAt");
  assert.equal(
    keys.find((key) => key.id === old.id)!.expiresAt?.getTime(),
    rotated.graceExpiresAt.getTime(),
    "a report is not the first use of a rotated key",
  );
  assert.deepEqual(events.map((event) => event.type), ["api_key.exposed", "api_key.revoked"]);
  assert.deepEqual(metrics, [], "no verification metric");
  assert.deepEqual(authFailures, [], "no onAuthFailed call");
}
