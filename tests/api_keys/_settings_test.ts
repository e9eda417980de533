import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { compileSettings } from "../../api_keys/_settings.ts";
import { InMemoryApiKeyStorage } from "../../api_keys/storage/in_memory.ts";
import { ApiKeysService } from "../../api_keys/service.ts";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import { overrideStorage, PEPPER_1 } from "./helpers.ts";
import { withPolyfillField } from "../polyfill_field.ts";

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
        error.message.startsWith(
          "ApiKeysServiceOptions: unknown options `rateLimit`, `foo` (known: peppers, ",
        ),
    );
    assert.doesNotThrow(() => compileSettings({ ...memory(), cache: undefined }));
  });

  it("refuses an unknown option inherited too (the options are read through their prototype), not an enumerable field of Object.prototype (a polyfill's)", () => {
    const inherited = Object.assign(Object.create({ cahce: {} }), memory());
    assert.throws(() => new ApiKeysService(inherited), {
      name: "TypeError",
      message: /^ApiKeysServiceOptions: unknown option `cahce` \(known: peppers, /,
    });
    withPolyfillField("extend", () => {
      assert.doesNotThrow(() => compileSettings(memory()));
      assert.throws(() => compileSettings({ ...memory(), extend: 1 } as never), /`extend`/);
    });
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

  it("loads once every pepper version's key is imported: no verify imports one", async () => {
    const original = crypto.subtle.importKey;
    const pending: (() => void)[] = [];
    crypto.subtle.importKey = function (...args: Parameters<typeof original>) {
      const imported = original.apply(crypto.subtle, args);
      return new Promise<CryptoKey>((resolve) => pending.push(() => imported.then(resolve)));
    } as typeof original;
    try {
      const settings = compileSettings({ ...memory(), peppers: { 1: PEPPER_1, 2: PEPPER_1 } });
      let loaded = false;
      settings.loaded().then(() => loaded = true);
      await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(pending.length, 2);
      assert.equal(loaded, false, "the keys are not imported yet");
      for (const release of pending) release();
      await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(loaded, true);
    } finally {
      crypto.subtle.importKey = original;
    }
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
  const limiter = () => createRateLimiter({ logger: () => {} });
  /** `fn()`, checked to be a `Date.now()` read while it ran. */
  const readNow = (fn: () => number | undefined) => {
    const before = Date.now();
    const ms = fn()!;
    assert.ok(before <= ms && ms <= Date.now(), `${ms} is not a Date.now() read`);
    return ms;
  };

  it("with the default clocks and a limiter or used events: Date.now() at most once per 100 ms of monotonic time, the whole ms elapsed added in between", () => {
    const { wallAt } = compileSettings({ ...memory(), limiter: limiter() });
    assert.ok(wallAt !== undefined);
    const first = readNow(() => wallAt(5_000.25));
    assert.equal(wallAt(5_010.2), first + 9, "whole ms elapsed since the read");
    assert.equal(wallAt(5_100.2), first + 99);
    readNow(() => wallAt(1e9)); // 100 ms on (far on): read again
    readNow(() => wallAt(10)); // a monotonic time before the last read: read again
    readNow(() => wallAt(Number.NaN)); // not a time: read again
    assert.equal(wallAt(20, 1_767_225_600_000), 1_767_225_600_000, "the request's own read");
    assert.notEqual(compileSettings({ ...memory(), emitUsageEvents: true }).wallAt, undefined);
  });

  it("answers undefined while Date.now is replaced (a fake timer: each part reads its own clock)", () => {
    const { wallAt } = compileSettings({ ...memory(), limiter: limiter() });
    const original = Date.now;
    Date.now = () => 0;
    try {
      assert.equal(wallAt!(5_000), undefined);
      assert.equal(wallAt!(5_000, 1_000), undefined);
    } finally {
      Date.now = original;
    }
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

describe("compileSettings: clock (an injected one answers a valid Date or throws)", () => {
  it("the compiled clock throws a TypeError for anything but a valid Date, and answers a valid one as it is", () => {
    for (const answer of [new Date(Number.NaN), Date.now(), "2030-01-01T00:00:00Z", null]) {
      const { clock } = compileSettings({ ...memory(), clock: () => answer as Date });
      assert.throws(() => clock(), TypeError, String(answer));
    }
    const at = new Date("2030-01-01T00:00:00.000Z");
    assert.equal(compileSettings({ ...memory(), clock: () => at }).clock(), at);
  });

  it("an expired key under a clock answering an Invalid Date is refused as a throwing clock is, and no lastUsedAt is written", async () => {
    let now = Date.parse("2030-01-01T00:00:00.000Z");
    let answer: () => Date = () => new Date(now);
    const storage = new InMemoryApiKeyStorage();
    const service = new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage,
      cache: false,
      debounceMs: 0,
      clock: () => answer(),
    });
    const scopes = [{ resource: "o", level: "read" as const }];
    const expiring = await service.create({
      tenantId: "t-clock",
      name: "n",
      scopes,
      expiresAt: new Date(now + 1_000),
    });
    const unexpiring = await service.create({ tenantId: "t-clock", name: "m", scopes });
    now += 5_000;
    answer = () => {
      throw new Error("clock broke");
    };
    await assert.rejects(service.verify(expiring.key), /clock broke/);
    answer = () => new Date(Number.NaN);
    await assert.rejects(service.verify(expiring.key), TypeError);
    // A key without expiry reads no clock to verify; its use's time is never an Invalid Date.
    await service.verify(unexpiring.key).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 20));
    answer = () => new Date(now);
    await assert.rejects(service.verify(expiring.key), { code: "api_key_expired" });
    for (const { id } of [expiring, unexpiring]) {
      assert.equal((await storage.findById(id))!.lastUsedAt, null, id);
    }
    assert.equal((await service.list("t-clock")).length, 2);
    await service.close();
  });
});

describe("compileSettings: the service's own warnings redact its legacy layouts' keys", () => {
  const { warn, error } = console;
  let lines: string[] = [];
  beforeEach(() => {
    lines = [];
    console.warn = console.error = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  });
  afterEach(() => {
    console.warn = warn;
    console.error = error;
  });

  it("a failing onEvent or onAuthFailed whose error's name holds a nestarc-v0 key is logged without the key", async () => {
    const legacy = `ak_live_${"A".repeat(12)}_${"b".repeat(32)}`;
    const thrower = () => {
      const failure = new Error("boom");
      failure.name = `Leak ${legacy}`;
      throw failure;
    };
    const settings = compileSettings({
      ...memory(),
      legacyKeyLayouts: ["nestarc-v0"],
      onEvent: thrower,
      onAuthFailed: thrower,
    });
    settings.emitEvent?.({ type: "api_key.revoked" } as never);
    settings.notifyAuthFailed?.(null, "api_key_invalid");
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(lines.length, 2);
    for (const line of lines) {
      assert.ok(!line.includes(legacy), line);
      assert.match(line, /\[REDACTED_API_KEY\]/);
    }
  });
});
