import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { compileSettings } from "../../api_keys/_settings.ts";
import { InMemoryApiKeyStorage } from "../../api_keys/storage/in_memory.ts";
import { ApiKeysService } from "../../api_keys/service.ts";
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
