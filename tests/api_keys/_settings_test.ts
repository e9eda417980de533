import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { compileSettings } from "../../api_keys/_settings.ts";
import { InMemoryApiKeyStorage } from "../../api_keys/storage/in_memory.ts";
import { ApiKeysService } from "../../api_keys/service.ts";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { overrideStorage, PEPPER_1 } from "./helpers.ts";

const memory = () => ({ peppers: { 1: PEPPER_1 }, storage: new InMemoryApiKeyStorage() });
const sevenOperations = () => ({
  peppers: { 1: PEPPER_1 },
  storage: overrideStorage(new InMemoryApiKeyStorage(), {}),
});

describe("compileSettings", () => {
  const info = console.info;
  let lines: string[] = [];
  beforeEach(() => {
    lines = [];
    console.info = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  });
  afterEach(() => {
    console.info = info;
  });

  it("refuses unknown options with a TypeError naming them (a misspelt option is never ignored)", () => {
    assert.throws(
      () => new ApiKeysService({ ...memory(), rateLimit: {}, foo: 1 } as never),
      (error: unknown) =>
        error instanceof TypeError &&
        error.message === "ApiKeysServiceOptions: unknown options `rateLimit`, `foo`",
    );
    assert.doesNotThrow(() => compileSettings({ ...memory(), cache: undefined }));
  });

  it("fills the defaults, frozen", () => {
    const settings = compileSettings(memory());
    assert.ok(Object.isFrozen(settings));
    assert.equal(settings.namespace, "ak");
    assert.equal(settings.debounceMs, 60_000);
    assert.equal(settings.emitUsageEvents, false);
    assert.equal(settings.hasher.currentVersion, 1);
    assert.equal(settings.cache?.ttlMs, 30_000);
    assert.equal(settings.emitEvent, undefined);
    assert.equal(settings.notifyAuthFailed, undefined);
    assert.equal(typeof settings.monotonic(), "number");
  });

  it("turns the cache on by default exactly when the storage has peekByPrefix", () => {
    assert.notEqual(compileSettings(memory()).cache, undefined);
    assert.equal(compileSettings(sevenOperations()).cache, undefined);
    assert.equal(compileSettings({ ...memory(), cache: false }).cache, undefined);
    assert.equal(compileSettings({ ...sevenOperations(), cache: { ttlMs: 5 } }).cache?.ttlMs, 5);
  });

  it("reads the peppers once", () => {
    let reads = 0;
    const peppers = new Proxy({ 1: PEPPER_1 }, {
      ownKeys(target) {
        reads++;
        return Reflect.ownKeys(target);
      },
    });
    compileSettings({ ...memory(), peppers });
    assert.equal(reads, 1);
  });

  it("logs nothing: validation is silent, the service announces a missing capability once", () => {
    compileSettings(sevenOperations());
    compileSettings(sevenOperations());
    assert.deepEqual(lines, []);
    new ApiKeysService(sevenOperations());
    assert.equal(lines.length, 1);
  });
});

describe("compileSettings: wallAt (a request's wall-clock time from its monotonic read)", () => {
  const original = Date.now;
  let reads = 0;
  let wall = 0;
  beforeEach(() => {
    reads = 0;
    Date.now = () => (reads++, wall);
  });
  afterEach(() => {
    Date.now = original;
  });
  const limiter = () => createRateLimiter({ logger: () => {} });

  it("with the default clocks and a limiter, usage or used events: Date.now() at most once per 100 ms of monotonic time, elapsed ms added in between", () => {
    const { wallAt } = compileSettings({ ...memory(), limiter: limiter() });
    assert.ok(wallAt !== undefined);
    wall = 1_767_225_600_000;
    assert.equal(wallAt(5_000.25), wall);
    assert.equal(reads, 1);
    wall += 3_600_000; // a wall-clock step: followed within 100 ms of monotonic time
    assert.equal(wallAt(5_010.2), 1_767_225_600_009, "whole ms elapsed since the read");
    assert.equal(wallAt(5_100.2), 1_767_225_600_099);
    assert.equal(reads, 1);
    assert.equal(wallAt(5_100.25), wall, "100 ms on: read again");
    assert.equal(reads, 2);
    assert.equal(wallAt(4_000), wall, "a monotonic time before the last read: read again");
    assert.equal(wallAt(Number.NaN), wall, "not a time: read again");
    assert.equal(reads, 4);
    assert.equal(
      compileSettings({ ...memory(), emitUsageEvents: true }).wallAt === undefined,
      false,
    );
  });

  it("undefined with an injected clock or monotonic clock, or nothing to use it for", () => {
    assert.equal(
      compileSettings({ ...memory(), limiter: limiter(), clock: () => new Date() }).wallAt,
      undefined,
    );
    assert.equal(
      compileSettings({ ...memory(), limiter: limiter(), monotonicClock: () => 1 }).wallAt,
      undefined,
    );
    assert.equal(compileSettings(memory()).wallAt, undefined);
  });
});
