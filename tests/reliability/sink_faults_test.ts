import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiKeyError,
  type ApiKeysServiceOptions,
  InMemoryApiKeyStorage,
} from "../../api_keys/mod.ts";
import { overrideStorage } from "../api_keys/helpers.ts";
import { collectUnhandledRejections, heapUsed, serviceOver } from "./harness.ts";

const OPS = 10_000;
const SCOPES = [{ resource: "orders", level: "read" as const }];

type Mode = "throws" | "rejects" | "rejects with a non-error" | "never resolves";
const MODES: Mode[] = ["throws", "rejects", "rejects with a non-error", "never resolves"];

function failingSink(mode: Mode, calls: { n: number }): (payload: unknown) => void | Promise<void> {
  return () => {
    calls.n++;
    switch (mode) {
      case "throws":
        throw new Error("sink down");
      case "rejects":
        return Promise.reject(new Error("sink down"));
      case "rejects with a non-error":
        return Promise.reject(undefined);
      default:
        return new Promise<void>(() => {});
    }
  };
}

/** Runs `count` operations: three valid verifies/authorizes, then one bad key, repeating. */
async function operate(
  service: ReturnType<typeof serviceOver>,
  key: string,
  count: number,
): Promise<void> {
  const bad = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
  for (let i = 0; i < count; i++) {
    if (i % 4 === 3) {
      const error = await service.verify(bad).then(() => null, (e) => e);
      assert.ok(error instanceof ApiKeyError);
    } else {
      const call = i % 2 === 0 ? service.verify(key) : service.authorize(key);
      assert.equal((await call).tenantId, "t1");
    }
  }
}

describe("event and metric sinks that fail", () => {
  for (const mode of MODES) {
    it(`operations succeed and every failure is reported when the sinks ${mode} (${OPS} ops)`, async () => {
      const rejections = collectUnhandledRejections();
      const eventCalls = { n: 0 };
      const metricCalls = { n: 0 };
      // Counted, with a few samples kept: retaining 20,000 errors would be the test's own leak.
      const eventErrors = { n: 0, samples: [] as [unknown, unknown][] };
      const metricErrors = { n: 0, samples: [] as [unknown, unknown][] };
      const record = (into: typeof eventErrors, error: unknown, payload: unknown) => {
        into.n++;
        if (into.samples.length < 100) into.samples.push([error, payload]);
      };
      const options: Partial<ApiKeysServiceOptions> = {
        emitUsageEvents: true,
        onEvent: failingSink(mode, eventCalls),
        onMetric: failingSink(mode, metricCalls),
        onEventError: (error, event) => record(eventErrors, error, event),
        onMetricError: (error, metric) => record(metricErrors, error, metric),
      };
      const service = serviceOver(new InMemoryApiKeyStorage(), options);
      const { key } = await service.create({ tenantId: "t1", name: "k", scopes: SCOPES });
      await operate(service, key, 1_000); // warm-up: caches, JIT
      const before = await heapUsed();
      await operate(service, key, OPS);
      const growth = (await heapUsed()) - before;
      await rejections.stop();
      console.log(`# sinks ${mode}: heap growth over ${OPS} ops ${(growth / 1024).toFixed(0)} KiB`);

      assert.deepEqual(rejections.reasons, []);
      // Every verify emits one metric; valid ones a used event, bad ones an auth_failed event.
      assert.equal(metricCalls.n, 11_000);
      assert.equal(eventCalls.n, 1 + 11_000); // created + one per operation
      const expectedErrors = mode === "never resolves" ? 0 : 1;
      assert.equal(metricErrors.n, metricCalls.n * expectedErrors);
      assert.equal(eventErrors.n, eventCalls.n * expectedErrors);
      for (const [error, metric] of metricErrors.samples) {
        assert.equal(error instanceof Error, mode !== "rejects with a non-error");
        assert.equal((metric as { type: string }).type, "api_key.verification");
      }
      assert.ok(
        eventErrors.samples.every(([, event]) =>
          typeof (event as { type: string }).type === "string"
        ),
      );
      assert.ok(growth < 4 * 1024 * 1024, `heap grew by ${growth} bytes`);
    });
  }

  it("without error handlers, one warning per sink and no unhandled rejection", async () => {
    const rejections = collectUnhandledRejections();
    const original = console.warn;
    const warnings: string[] = [];
    console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(" "));
    try {
      const service = serviceOver(new InMemoryApiKeyStorage(), {
        onEvent: () => Promise.reject(new Error("sink down")),
        onMetric: () => {
          throw new Error("sink down");
        },
        onAuthFailed: () => {
          throw new Error("callback down");
        },
      });
      const { key } = await service.create({ tenantId: "t1", name: "k", scopes: SCOPES });
      await operate(service, key, 400);
      await rejections.stop();
    } finally {
      console.warn = original;
    }
    assert.deepEqual(rejections.reasons, []);
    assert.equal(warnings.length, 3, warnings.join("\n"));
    assert.ok(warnings.some((w) => w.includes("onEvent")));
    assert.ok(warnings.some((w) => w.includes("onMetric")));
    assert.ok(warnings.some((w) => w.includes("onAuthFailed")));
  });

  it("error handlers that throw are contained", async () => {
    const rejections = collectUnhandledRejections();
    const service = serviceOver(new InMemoryApiKeyStorage(), {
      onEvent: () => Promise.reject(new Error("sink down")),
      onEventError: () => {
        throw new Error("handler down");
      },
      onMetric: () => {
        throw new Error("sink down");
      },
      onMetricError: () => {
        throw new Error("handler down");
      },
    });
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: SCOPES });
    await operate(service, key, 400);
    await rejections.stop();
    assert.deepEqual(rejections.reasons, []);
  });
});

/** How a user callback fails: each kind of throw and rejection, and an error that throws on every touch. */
const CALLBACK_FAILURES: Record<string, () => unknown> = {
  "throws": () => {
    throw new Error("callback down");
  },
  "rejects with an Error": () => Promise.reject(new Error("callback down")),
  "rejects with a non-Error": () => Promise.reject("callback down"),
  "rejects with an object that throws when inspected": () =>
    Promise.reject(
      new Proxy({}, {
        get() {
          throw new Error("inspected");
        },
        getPrototypeOf() {
          throw new Error("inspected");
        },
      }),
    ),
};

/** The options that make the user function `callback` fail with `failure`. */
function failingCallback(
  callback: string,
  failure: () => unknown,
): Partial<ApiKeysServiceOptions> {
  const sinkDown = () => {
    throw new Error("sink down");
  };
  switch (callback) {
    case "onAuthFailed":
      return { onAuthFailed: failure as () => void };
    case "onEventError":
      return { onEvent: sinkDown, onEventError: failure as () => void, emitUsageEvents: true };
    case "onMetricError":
      return { onMetric: sinkDown, onMetricError: failure as () => void };
    default: // touchLastUsed: the best-effort write of every verification
      return {
        debounceMs: 0,
        storage: overrideStorage(new InMemoryApiKeyStorage(), {
          touchLastUsed: failure as () => Promise<void>,
        }),
      };
  }
}

describe("user callbacks that fail", () => {
  for (const callback of ["onAuthFailed", "onEventError", "onMetricError", "touchLastUsed"]) {
    for (const [mode, failure] of Object.entries(CALLBACK_FAILURES)) {
      it(`${callback} that ${mode}: requests still succeed, one warning, no unhandled rejection`, async () => {
        const rejections = collectUnhandledRejections();
        const original = console.warn;
        const warnings: string[] = [];
        console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(" "));
        try {
          const overrides = failingCallback(callback, failure);
          const service = serviceOver(overrides.storage ?? new InMemoryApiKeyStorage(), overrides);
          const { key } = await service.create({ tenantId: "t1", name: "k", scopes: SCOPES });
          // Valid keys verify and authorize; bad ones fail with their ApiKeyError (asserted inside).
          await operate(service, key, 40);
          await new Promise((resolve) => setTimeout(resolve, 10));
        } finally {
          console.warn = original;
          await rejections.stop();
        }
        assert.deepEqual(rejections.reasons, [], "an unhandled rejection escaped");
        const reports = warnings.filter((w) => w.includes(callback));
        assert.equal(reports.length, 1, `expected one warning naming ${callback}: ${warnings}`);
        assert.ok(!reports[0].includes("callback down"), "the warning carries the error's message");
      });
    }
  }

  it("a warning never carries a key, even in the error's name", async () => {
    const original = console.warn;
    const warnings: string[] = [];
    console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(" "));
    let key = "";
    try {
      const service = serviceOver(new InMemoryApiKeyStorage(), {
        onAuthFailed: () => {
          const error = new Error("down");
          error.name = `Failed for ${key}`;
          throw error;
        },
      });
      key = (await service.create({ tenantId: "t1", name: "k", scopes: SCOPES })).key;
      await operate(service, key, 8);
    } finally {
      console.warn = original;
    }
    assert.equal(warnings.length, 1, warnings.join("\n"));
    assert.ok(!warnings[0].includes(key));
    assert.ok(warnings[0].includes("[REDACTED_API_KEY]"), warnings[0]);
  });
});
