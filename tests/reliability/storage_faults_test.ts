import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeyError,
  type ApiKeyEvent,
  ApiKeyOperationError,
  type ApiKeysService,
  type ApiKeysServiceOptions,
  ApiKeyStorageError,
  type ApiKeyVerificationMetric,
  parseKey,
} from "../../api_keys/mod.ts";
import { CAUSE_SECRET, FAULT_MODES, type FaultMode, FaultyStorage } from "./faulty_storage.ts";
import { collectUnhandledRejections, HUNG, serviceOver, settle } from "./harness.ts";
import { breakChecksum } from "../api_keys/helpers.ts";

const SCOPES = [{ resource: "orders", level: "read" as const }];

function setup(overrides: Partial<ApiKeysServiceOptions> = {}) {
  const faulty = new FaultyStorage();
  const events: ApiKeyEvent[] = [];
  const metrics: ApiKeyVerificationMetric[] = [];
  const authFailed: unknown[][] = [];
  const service = serviceOver(faulty.storage, {
    storageTimeoutMs: 20,
    onEvent: (event) => {
      events.push(event);
    },
    onMetric: (metric) => {
      metrics.push(metric);
    },
    onAuthFailed: (...args) => {
      authFailed.push(args);
    },
    ...overrides,
  });
  return { faulty, service, events, metrics, authFailed };
}

/** Asserts a generic 503 storage error that says nothing of the cause or the key. */
function assertStorageError(outcome: unknown, key?: string): void {
  assert.notEqual(outcome, HUNG, "did not settle");
  const error = (outcome as { error?: unknown }).error;
  assert.ok(error instanceof ApiKeyStorageError, `not an ApiKeyStorageError: ${String(error)}`);
  assert.equal(error.httpStatus, 503);
  assert.equal(error.code, "api_key_storage_unavailable");
  assert.equal(error.message, "API key storage is unavailable");
  const visible = `${error} ${error.message} ${JSON.stringify(error)} ${
    JSON.stringify(Object.entries(error))
  }`;
  assert.ok(!visible.includes(CAUSE_SECRET), "the cause leaked");
  if (key !== undefined) {
    assert.ok(!visible.includes(key) && !visible.includes(parseKey(key)!.secret), "key leaked");
  }
}

async function snapshot(faulty: FaultyStorage, tenantId = "t1") {
  return await faulty.inner.listByTenant(tenantId, { includeRevoked: true });
}

describe("storage faults during verification", () => {
  for (const mode of FAULT_MODES) {
    for (const cache of [false, {}] as const) {
      it(`findByPrefix ${mode} (cache ${cache ? "on" : "off"}): 503, outcome error once, then recovers`, async () => {
        const { faulty, service, events, metrics, authFailed } = setup({ cache });
        const { key } = await service.create({ tenantId: "t1", name: "k", scopes: SCOPES });
        events.length = 0;
        faulty.fail("findByPrefix", mode);
        for (const call of [() => service.verify(key), () => service.authorize(key)]) {
          metrics.length = 0;
          assertStorageError(await settle(call()), key);
          assert.deepEqual(metrics.map((m) => m.outcome), ["error"]);
          assert.ok(!JSON.stringify(metrics).includes(CAUSE_SECRET));
        }
        assert.deepEqual(events, [], "a storage failure is not an auth failure");
        assert.deepEqual(authFailed, []);
        faulty.clear();
        assert.equal((await service.verify(key)).tenantId, "t1");
      });
    }
  }

  it("a never-settling storage gives up at the default deadline (5 s) with outcome error", async () => {
    const { faulty, service, metrics } = setup({ storageTimeoutMs: undefined });
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: SCOPES });
    faulty.fail("findByPrefix", "hang");
    const started = performance.now();
    assertStorageError(await settle(service.verify(key), 15_000));
    console.log(
      `# default storage deadline observed after ${Math.round(performance.now() - started)} ms`,
    );
    assert.deepEqual(metrics.map((m) => m.outcome), ["error"]);
  });

  it("2,000 concurrent hung lookups all fail, one metric each, with no heap growth", async () => {
    const { heapUsed } = await import("./harness.ts");
    const { faulty, service, metrics } = setup({ storageTimeoutMs: 5, onEvent: undefined });
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: SCOPES });
    faulty.fail("findByPrefix", "hang");
    const round = async () => {
      const outcomes = await Promise.all(
        Array.from({ length: 2_000 }, () => settle(service.verify(key))),
      );
      for (const outcome of outcomes) assertStorageError(outcome);
    };
    await round(); // warm-up
    metrics.length = 0;
    const before = await heapUsed();
    await round();
    await round();
    const growth = (await heapUsed()) - before;
    console.log(`# heap growth over 4,000 hung lookups: ${(growth / 1024).toFixed(0)} KiB`);
    assert.equal(faulty.hung, 6_000);
    assert.equal(metrics.length, 4_000);
    assert.ok(metrics.every((m) => m.outcome === "error"));
    assert.ok(growth < 8 * 1024 * 1024, `heap grew by ${growth} bytes`);
  });
});

describe("storage faults during create, rotate, revoke and list", () => {
  type Op = "create" | "rotate" | "revoke" | "list";
  const cases: [
    Op,
    "insert" | "findById" | "rotate" | "markRevoked" | "listByTenant",
    FaultMode[],
  ][] = [
    ["create", "insert", ["throw", "reject", "hang"]],
    ["rotate", "findById", FAULT_MODES],
    ["rotate", "rotate", ["throw", "reject", "hang"]],
    ["revoke", "findById", FAULT_MODES],
    ["revoke", "markRevoked", ["throw", "reject", "hang"]],
    ["list", "listByTenant", FAULT_MODES],
  ];

  const run = (service: ApiKeysService, op: Op, id: string): Promise<unknown> => {
    switch (op) {
      case "create":
        return service.create({ tenantId: "t1", name: "new", scopes: SCOPES });
      case "rotate":
        return service.rotate(id);
      case "revoke":
        return service.revoke(id);
      default:
        return service.list("t1");
    }
  };

  for (const [op, method, modes] of cases) {
    for (const mode of modes) {
      it(`${op} with ${method} ${mode}: typed 503, no event, storage unchanged after the fault clears`, async () => {
        const { faulty, service, events } = setup();
        const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: SCOPES });
        const before = await snapshot(faulty);
        events.length = 0;
        faulty.fail(method, mode);
        assertStorageError(await settle(run(service, op, id)), key);
        faulty.clear();
        assert.deepEqual(await snapshot(faulty), before);
        assert.deepEqual(events, []);
        // The existing key still works and the operation now succeeds.
        assert.equal((await service.verify(key)).keyId, id);
        await run(service, op, id);
      });
    }
  }

  it("operation errors of the storage contract pass through typed, not as 503", async () => {
    const { service } = setup();
    for (const call of [() => service.rotate("nope"), () => service.revoke("nope")]) {
      const error = await call().then(() => null, (e) => e);
      assert.ok(error instanceof ApiKeyOperationError);
      assert.equal(error.code, "api_key_record_not_found");
    }
  });
});

describe("touchLastUsed failing", () => {
  const modes: [string, () => unknown][] = [
    ["throws", () => {
      throw new Error(CAUSE_SECRET);
    }],
    ["rejects", () => Promise.reject(new Error(CAUSE_SECRET))],
    ["never settles", () => new Promise(() => {})],
    ["returns undefined", () => undefined],
    ["returns a thenable whose then throws", () => ({
      then() {
        throw new Error(CAUSE_SECRET);
      },
    })],
  ];
  for (const [name, touch] of modes) {
    it(`verification is unaffected when it ${name}`, async () => {
      const rejections = collectUnhandledRejections();
      const { faulty, service, metrics } = setup({ debounceMs: 0, cache: false });
      const { key } = await service.create({ tenantId: "t1", name: "k", scopes: SCOPES });
      (faulty.inner as unknown as Record<string, unknown>).touchLastUsed = touch;
      for (let i = 0; i < 50; i++) assert.equal((await service.verify(key)).tenantId, "t1");
      const wrong = await service.verify(breakChecksum(key)).then(() => null, (e) => e);
      assert.ok(wrong instanceof ApiKeyError);
      await rejections.stop();
      assert.deepEqual(rejections.reasons, []);
      assert.equal(metrics.filter((m) => m.outcome === "success").length, 50);
    });
  }
});
