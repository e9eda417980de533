/** The OpenTelemetry bridge on a real SDK: every instrument of docs/telemetry.md, spans, no secret. */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { context, SpanKind, trace } from "@opentelemetry/api";
import type { DataPoint, MetricReader, ResourceMetrics } from "@opentelemetry/sdk-metrics";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { instrumentTelemetry, TELEMETRY_SCOPE, TELEMETRY_VERSION } from "../../telemetry/mod.ts";
import {
  ApiKeysService,
  InMemoryApiKeyChangeFeed,
  InMemoryApiKeyStorage,
} from "../../api_keys/mod.ts";
import type { ApiKeyUsageRow } from "../../api_keys/metering/usage.ts";
import {
  compileRateLimitPolicies,
  createMemoryRateLimitStore,
  createRateLimiter,
  type RateLimitStore,
} from "../../rate_limits/mod.ts";
import { defineErrors, SafeException } from "../../safe_response/mod.ts";
import { createSafeFetch } from "../../safe_response/fetch/mod.ts";
import { breakChecksum, FakeClocks, PEPPER_1, READ_ORDERS } from "../api_keys/helpers.ts";
import { creditedKey, CreditedStorage } from "../api_keys/credited_storage.ts";
import { FakeRemoteStore } from "../rate_limits/_fake_store.ts";
import { collectUnhandledRejections } from "../reliability/harness.ts";
import { setup, useAsyncContext } from "./_sdk.ts";

/** The active context kept across awaits (what an SDK's context manager does). */
after(useAsyncContext());

interface Point {
  name: string;
  attributes: Record<string, unknown>;
  value: unknown;
  scope: string;
  version?: string;
}

/** Every instrument name collected by this file's tests. */
const SEEN = new Set<string>();

async function collect(reader: MetricReader): Promise<Point[]> {
  const { resourceMetrics } = await reader.collect() as { resourceMetrics: ResourceMetrics };
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) SEEN.add(metric.descriptor.name);
  }
  return resourceMetrics.scopeMetrics.flatMap((scope) =>
    scope.metrics.flatMap((metric) =>
      (metric.dataPoints as DataPoint<unknown>[]).map((point) => ({
        name: metric.descriptor.name,
        attributes: { ...point.attributes },
        value: point.value,
        scope: scope.scope.name,
        version: scope.scope.version,
      }))
    )
  );
}

/** The value (a counter's sum, a histogram's count) of `name` at exactly `attributes`. */
function valueOf(points: Point[], name: string, attributes: Record<string, unknown>): number {
  const point = points.find((p) =>
    p.name === name &&
    JSON.stringify(sortKeys(p.attributes)) === JSON.stringify(sortKeys(attributes))
  );
  if (point === undefined) return 0;
  const v = point.value as number | { count: number };
  return typeof v === "number" ? v : v.count;
}

function sortKeys(o: Record<string, unknown>) {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

const PEPPER_SCAN = PEPPER_1;

describe("instrumentTelemetry", () => {
  it("counts authorizations, cache lookups, credits and usage rows; tenants only when allow-listed; no secret", async () => {
    const { reader, meterProvider, exporter, tracerProvider } = setup();
    const clocks = new FakeClocks();
    const limiter = createRateLimiter({
      store: createMemoryRateLimitStore({ now: () => clocks.now }),
      logger: () => {},
    });
    const store = new CreditedStorage();
    const service = new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage: store,
      limiter,
      usage: true,
      clock: clocks.clock,
      monotonicClock: clocks.monotonicClock,
    });
    const telemetry = instrumentTelemetry({
      meterProvider,
      tracerProvider,
      service,
      limiter,
      tenantAllowList: ["t-other"],
    });
    const { key } = await creditedKey(service, store, { remaining: 2 });
    await assert.rejects(service.authorize(undefined));
    await assert.rejects(service.authorize("sk_live_garbage"));
    const request = tracerProvider.getTracer("app").startSpan("request");
    await context.with(trace.setSpan(context.active(), request), () => service.authorize(key)); // miss
    request.end();
    clocks.advance(5);
    await service.authorize(key); // hit; spends the last credit
    await assert.rejects(service.authorize(key)); // usage_exceeded
    await service.close();
    const spans = exporter.getFinishedSpans();
    const lookups = spans.filter((s) => s.name === "api_key.storage.lookup");
    assert.equal(lookups.length, 1, "the miss looks up; a malformed key and a hit do not");
    assert.equal(parentOf(lookups[0]), request.spanContext().spanId);
    const writes = spans.filter((s) => s.name === "api_key.usage.write");
    assert.deepEqual(writes.map((s) => s.attributes["api_key.usage.rows"]), [1]);
    const points = await collect(reader);
    const env = (outcome: string, environment: string) => ({
      "api_key.outcome": outcome,
      "api_key.environment": environment,
    });
    assert.equal(valueOf(points, "api_key.authorizations", env("missing", "unknown")), 1);
    assert.equal(
      valueOf(points, "api_key.authorizations", env("credential_rejected", "unknown")),
      1,
    );
    assert.equal(valueOf(points, "api_key.authorizations", env("success", "live")), 2);
    assert.equal(valueOf(points, "api_key.authorizations", env("usage_exceeded", "live")), 1);
    assert.equal(valueOf(points, "api_key.authorization.duration", env("success", "live")), 2);
    assert.equal(valueOf(points, "api_key.cache.lookups", { "api_key.cache.result": "miss" }), 1);
    assert.equal(valueOf(points, "api_key.cache.lookups", { "api_key.cache.result": "hit" }), 2);
    assert.equal(valueOf(points, "api_key.credits.spent", {}), 2);
    assert.equal(valueOf(points, "api_key.credits.exhausted", {}), 1);
    assert.equal(valueOf(points, "api_key.usage.rows", { "api_key.usage.outcome": "written" }), 1);
    assert.equal(
      valueOf(points, "rate_limit.checks", {
        "rate_limit.outcome": "store",
        "rate_limit.result": "allowed",
      }),
      2,
    );
    for (const point of points) {
      assert.equal(point.scope, TELEMETRY_SCOPE);
      assert.equal(point.version, TELEMETRY_VERSION);
      assert.ok(!("api_key.tenant" in point.attributes), "t1 is not allow-listed");
    }
    assertNoSecret(points, exporter.getFinishedSpans(), [key, key.slice(-20), PEPPER_SCAN]);
    telemetry.close();
    await service.authorize(undefined).catch(() => {});
    const later = await collect(reader);
    assert.equal(valueOf(later, "api_key.authorizations", env("missing", "unknown")), 1);
  });

  it("an allow-listed tenant gets api_key.tenant; the same service cannot be instrumented twice", async () => {
    const { reader, meterProvider } = setup();
    const limiter = createRateLimiter({ logger: () => {} });
    const store = new CreditedStorage();
    const service = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: store, limiter });
    instrumentTelemetry({ meterProvider, service, tenantAllowList: ["t1"] });
    assert.throws(() => instrumentTelemetry({ meterProvider, service }), /instrumented already/);
    assert.throws(() => instrumentTelemetry({ meterProvider, service: {} as never }), TypeError);
    const { key } = await creditedKey(service, store, { remaining: 5 });
    await service.authorize(key);
    const points = await collect(reader);
    assert.equal(
      valueOf(points, "api_key.authorizations", {
        "api_key.outcome": "success",
        "api_key.environment": "live",
        "api_key.tenant": "t1",
      }),
      1,
    );
    assert.equal(valueOf(points, "api_key.credits.spent", { "api_key.tenant": "t1" }), 1);
  });

  it("api_key.credits.exhausted counts each balance a spend left at 0: a key's own, its tenant's pool", async () => {
    const { reader, meterProvider } = setup();
    const limiter = createRateLimiter({ logger: () => {} });
    const service = new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage: new InMemoryApiKeyStorage(),
      limiter,
    });
    instrumentTelemetry({ meterProvider, service });
    const create = (tenantId: string, remaining: number) =>
      service.create({
        tenantId,
        name: "k",
        scopes: READ_ORDERS,
        credits: { remaining, pool: { remaining: 1 } },
      });
    const pooled = await create("t-pool", 5);
    const spent = await service.authorize(pooled.key);
    assert.deepEqual([spent.creditResult?.remaining, spent.tenantCreditResult?.remaining], [4, 0]);
    assert.equal(valueOf(await collect(reader), "api_key.credits.exhausted", {}), 1, "the pool");
    const both = await create("t-both", 1);
    await service.authorize(both.key);
    assert.equal(valueOf(await collect(reader), "api_key.credits.exhausted", {}), 3, "both");
  });

  it("checks answered by one store call: one store span linked to each check span, each a child of its request span", async () => {
    const { reader, meterProvider, exporter, tracerProvider } = setup();
    const store = new FakeRemoteStore();
    store.requestDelayMs = 5;
    const limiter = createRateLimiter({ store, logger: () => {}, onStoreError: "closed" });
    instrumentTelemetry({ meterProvider, tracerProvider, limiter });
    const tracer = tracerProvider.getTracer("app");
    const policy = [{ name: "api", limit: 1, windowMs: 60_000 }];
    const requests = await Promise.all(["a", "b", "a"].map((subject) => {
      const span = tracer.startSpan(`request ${subject}`);
      return context.with(trace.setSpan(context.active(), span), async () => {
        const result = await limiter.check(subject, policy);
        span.end();
        return { span, result };
      });
    }));
    // The first reaches an idle limiter and is sent at once; the two others share one call.
    assert.deepEqual(store.batches, [1, 2]);
    assert.deepEqual(requests.map((r) => r.result.allowed), [true, true, false]);
    const spans = exporter.getFinishedSpans();
    const checks = spans.filter((s) => s.name === "rate_limit.check");
    const calls = spans.filter((s) => s.name === "rate_limit.store.call")
      .sort((a, b) => a.links.length - b.links.length);
    assert.equal(checks.length, 3);
    assert.equal(calls.length, 2);
    for (const [i, check] of checks.entries()) {
      assert.equal(parentOf(check), requests[i].span.spanContext().spanId);
      assert.equal(check.instrumentationScope.name, TELEMETRY_SCOPE);
      assert.equal(check.attributes["rate_limit.store.name"], "fake");
    }
    for (const call of calls) assert.equal(call.attributes["rate_limit.store.name"], "fake");
    assert.deepEqual(
      calls.flatMap((call) => call.links.map((l) => l.context.spanId)).sort(),
      checks.map((c) => c.spanContext().spanId).sort(),
    );
    assert.deepEqual(calls.map((call) => call.attributes["rate_limit.store.checks"]), [1, 2]);
    assert.equal(checks[2].attributes["rate_limit.result"], "refused");
    store.failing = new Error("down");
    assert.equal((await limiter.check("c", policy)).outcome, "closed");
    const points = await collect(reader);
    const refused = { "rate_limit.outcome": "store", "rate_limit.result": "refused" };
    assert.equal(valueOf(points, "rate_limit.checks", refused), 1);
    assert.equal(
      valueOf(points, "rate_limit.checks", {
        "rate_limit.outcome": "closed",
        "rate_limit.result": "refused",
      }),
      1,
    );
    assert.equal(
      valueOf(points, "rate_limit.store.unavailable", {
        "rate_limit.reason": "error",
        "rate_limit.on_store_error": "closed",
      }),
      1,
    );
    // Three store calls: the two above, and the failed one in its own series (error.type).
    assert.equal(
      valueOf(points, "rate_limit.store.duration", { "rate_limit.store.name": "fake" }),
      2,
    );
    assert.equal(
      valueOf(points, "rate_limit.store.duration", {
        "rate_limit.store.name": "fake",
        "error.type": "Error",
      }),
      1,
    );
    assert.equal(valueOf(points, "rate_limit.check.duration", refused), 1);
    const failed = exporter.getFinishedSpans().filter((s) => s.name === "rate_limit.store.call");
    assert.equal(failed.at(-1)!.status.code, 2, "the failed store call's span is an error");
  });

  it("a check that throws (a store bug, a malformed reply): its span and its store call's end as errors; not counted", async () => {
    const policy = [{ name: "api", limit: 5, windowMs: 60_000 }];
    const remote = (checkBatch: RateLimitStore["checkBatch"]): RateLimitStore => ({
      name: "remote",
      checkBatch,
    });
    const inProcess = (checkNow: RateLimitStore["checkNow"]): RateLimitStore => ({
      name: "local",
      checkBatch: () => Promise.reject(new Error("unused")),
      checkNow,
    });
    const cases: [string, RateLimitStore, number][] = [
      ["a remote TypeError", remote(() => Promise.reject(new TypeError("bug"))), 1],
      ["a malformed reply", remote(() => Promise.resolve({ results: [] })), 1],
      [
        "a malformed answer",
        remote(() => Promise.resolve({ results: [{ allowed: 1 }] } as never)),
        1,
      ],
      [
        "an in-process TypeError",
        inProcess(() => {
          throw new TypeError("bug");
        }),
        0,
      ],
      ["an in-process malformed answer", inProcess(() => []), 0],
    ];
    for (const [what, store, storeCalls] of cases) {
      const { reader, meterProvider, exporter, tracerProvider } = setup();
      const limiter = createRateLimiter({ store, logger: () => {} });
      const telemetry = instrumentTelemetry({ meterProvider, tracerProvider, limiter });
      await assert.rejects(limiter.check("k", policy), TypeError, what);
      const spans = exporter.getFinishedSpans();
      const checks = spans.filter((s) => s.name === "rate_limit.check");
      const calls = spans.filter((s) => s.name === "rate_limit.store.call");
      assert.deepEqual(checks.map((s) => s.status.code), [2], `${what}: the check span, ERROR`);
      assert.deepEqual(calls.map((s) => s.status.code), Array(storeCalls).fill(2), what);
      assert.deepEqual(
        [...checks, ...calls].map((s) => s.attributes["error.type"]),
        Array(1 + storeCalls).fill("TypeError"),
        `${what}: error.type, the error's name`,
      );
      const points = await collect(reader);
      assert.equal(points.filter((p) => p.name === "rate_limit.checks").length, 0, what);
      telemetry.close();
    }
  });

  it("a malformed reply arriving after its check timed out: the store call's span is an error", async () => {
    const { exporter, tracerProvider } = setup();
    const store: RateLimitStore = {
      name: "remote",
      checkBatch: () =>
        new Promise((resolve) =>
          setTimeout(() => resolve({ results: [[{ allowed: 1 }]] } as never), 80)
        ),
    };
    const limiter = createRateLimiter({ store, logger: () => {}, timeoutMs: 30 });
    const telemetry = instrumentTelemetry({ tracerProvider, limiter });
    const policy = [{ name: "api", limit: 5, windowMs: 60_000 }];
    assert.equal((await limiter.check("k", policy)).outcome, "open", "timed out");
    await new Promise((resolve) => setTimeout(resolve, 120));
    const calls = exporter.getFinishedSpans().filter((s) => s.name === "rate_limit.store.call");
    assert.deepEqual(calls.map((s) => s.status.code), [2]);
    telemetry.close();
  });

  it("a remembered refusal: counted as the store's refusal, a check span, no store call", async () => {
    const { reader, meterProvider, exporter, tracerProvider } = setup();
    const store = new FakeRemoteStore();
    const limiter = createRateLimiter({ store, logger: () => {} });
    instrumentTelemetry({ meterProvider, tracerProvider, limiter });
    const policies = compileRateLimitPolicies([{ name: "api", limit: 1, windowMs: 60_000 }]);
    for (let i = 0; i < 4; i++) await limiter.check("k", policies);
    assert.equal(store.calls, 2, "the first refusal only reached the store");
    const points = await collect(reader);
    const refused = { "rate_limit.outcome": "store", "rate_limit.result": "refused" };
    assert.equal(valueOf(points, "rate_limit.checks", refused), 3);
    assert.equal(
      valueOf(points, "rate_limit.store.duration", { "rate_limit.store.name": "fake" }),
      2,
    );
    const spans = exporter.getFinishedSpans();
    assert.equal(spans.filter((s) => s.name === "rate_limit.check").length, 4);
    assert.equal(spans.filter((s) => s.name === "rate_limit.store.call").length, 2);
  });

  it("close() while checks are in flight: their spans still end (outcome, or ERROR), each after its store call", async () => {
    const policy = [{ name: "api", limit: 5, windowMs: 60_000 }];
    const answered = new FakeRemoteStore();
    answered.replyDelayMs = 20;
    const malformed: RateLimitStore = {
      name: "remote",
      checkBatch: () => new Promise((resolve) => setTimeout(() => resolve({ results: [] }), 20)),
    };
    for (const store of [answered, malformed]) {
      const { exporter, tracerProvider } = setup();
      const limiter = createRateLimiter({ store, logger: () => {}, timeoutMs: 500 });
      const telemetry = instrumentTelemetry({ tracerProvider, limiter });
      const pending = limiter.check("k", policy);
      telemetry.close(); // e.g. the app's shutdown (Nest's onModuleDestroy)
      const outcome = await pending.then((r) => r.outcome, (e: Error) => e.name);
      const spans = exporter.getFinishedSpans();
      const checks = spans.filter((s) => s.name === "rate_limit.check");
      const calls = spans.filter((s) => s.name === "rate_limit.store.call");
      assert.equal(checks.length, 1, `${store.name}: the check's span ended`);
      assert.equal(calls.length, 1);
      assert.equal(parentOf(calls[0]), checks[0].spanContext().spanId);
      if (store === answered) {
        assert.equal(outcome, "store");
        assert.equal(checks[0].attributes["rate_limit.outcome"], "store");
        assert.equal(checks[0].attributes["rate_limit.result"], "allowed");
      } else {
        assert.equal(outcome, "TypeError");
        assert.equal(checks[0].status.code, 2, "a malformed reply: ERROR");
      }
    }
  });

  it("counts each response as its binding writes it: once per request, the status sent", async () => {
    const { reader, meterProvider } = setup();
    const Errors = defineErrors({ BAD: { status: 400, message: "Bad" } });
    const safe = createSafeFetch({
      timestamp: false,
      errorCatalog: Errors,
      logger: { warn: () => {}, error: () => {} },
    });
    const telemetry = instrumentTelemetry({ meterProvider, responder: safe });
    const ok = safe.route({}, () => ({ a: 1 }));
    const routes = [
      ok,
      ok,
      safe.route({}, () => {
        throw new Error("boom");
      }),
      // Bodies that cannot be serialised (a BigInt): the 500 sent instead is the one counted.
      safe.route({}, () => ({ id: 1n })),
      safe.route({}, () => {
        throw new SafeException("BAD", { details: { id: 1n } });
      }),
    ];
    const sent: number[] = [];
    for (const route of routes) sent.push((await route(new Request("http://x/items"))).status);
    assert.deepEqual(sent, [200, 200, 500, 500, 500]);
    // A reply built and never written (by a binding of one's own) is not counted.
    const { responder } = safe;
    const exchange = {
      method: "GET",
      target: "/x",
      requestHeader: () => undefined,
      responseHeader: () => undefined,
    };
    responder.success({ a: 1 }, exchange, { plan: responder.plan({}) });
    const points = await collect(reader);
    const responses = points.filter((p) => p.name === "safe_response.responses");
    assert.deepEqual(
      Object.fromEntries(
        responses.map((p) => [p.attributes["safe_response.status_class"], p.value]),
      ),
      { "2xx": 2, "5xx": 3 },
    );
    telemetry.close();
  });

  it("refuses an unknown option by name (a misspelt limiter would record nothing) and options that are not an object", () => {
    const { meterProvider } = setup();
    const limiter = createRateLimiter({ logger: () => {} });
    assert.throws(
      () => instrumentTelemetry({ meterProvider, limitter: limiter, tenantAllowlist: [] } as never),
      {
        name: "TypeError",
        message: /^instrumentTelemetry: unknown options `limitter`, `tenantAllowlist` \(known: /,
      },
    );
    for (const bad of [undefined, null, "limiter", []]) {
      assert.throws(() => instrumentTelemetry(bad as never), {
        name: "TypeError",
        message: "instrumentTelemetry: options must be an object",
      });
    }
    // Nothing was claimed by the refused calls.
    instrumentTelemetry({ meterProvider, limiter }).close();
  });

  it("the same change feed cannot be instrumented twice until close() (its gauges would read it twice)", () => {
    const { meterProvider } = setup();
    const feed = new InMemoryApiKeyChangeFeed();
    const telemetry = instrumentTelemetry({ meterProvider, changeFeed: feed });
    assert.throws(() => instrumentTelemetry({ meterProvider, changeFeed: feed }), {
      name: "TypeError",
      message: "changeFeed is instrumented already",
    });
    telemetry.close();
    instrumentTelemetry({ meterProvider, changeFeed: feed }).close();
  });

  it("observes the change feed", async () => {
    const { reader, meterProvider } = setup();
    const inner = new InMemoryApiKeyChangeFeed();
    let reads = 0;
    const feed = {
      subscribe: inner.subscribe.bind(inner),
      status: () => (reads++, { ...inner.status(), noticesArrive: true }),
      close: inner.close.bind(inner),
    };
    const telemetry = instrumentTelemetry({ meterProvider, changeFeed: feed });
    const points = await collect(reader);
    assert.equal(valueOf(points, "api_key.change_feed.healthy", {}), 1);
    assert.equal(valueOf(points, "api_key.change_feed.staleness", {}), 0);
    assert.equal(valueOf(points, "api_key.change_feed.notices_arrive", {}), 1);
    const before = reads;
    assert.ok(before >= 3);
    telemetry.close();
    await collect(reader);
    assert.equal(reads, before, "close() removes the gauges' callbacks");
  });

  it("usage rows written, failed and dropped; a failed write's span is an error", async () => {
    const { reader, meterProvider, exporter, tracerProvider } = setup();
    const store = new FlakyUsageStorage();
    const service = new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage: store,
      usage: { maxPendingKeys: 1, flushIntervalMs: 3_600_000, onMetric: () => {} },
    });
    instrumentTelemetry({ meterProvider, tracerProvider, service });
    const keys = await Promise.all(
      ["a", "b"].map((name) => service.create({ tenantId: "t1", name, scopes: READ_ORDERS })),
    );
    for (const { key } of keys) await service.authorize(key); // 2 rows past a bound of 1
    store.failing = true;
    await assert.rejects(service.close());
    store.failing = false;
    await service.close();
    const points = await collect(reader);
    const rows = (outcome: string) =>
      valueOf(points, "api_key.usage.rows", { "api_key.usage.outcome": outcome });
    assert.deepEqual([rows("dropped"), rows("failed"), rows("written")], [1, 1, 1]);
    const writes = exporter.getFinishedSpans().filter((s) => s.name === "api_key.usage.write");
    assert.deepEqual(writes.map((s) => s.status.code), [2, 0], "failed (ERROR), then written");
    assert.deepEqual(
      writes.map((s) => s.attributes["error.type"]),
      ["ApiKeyStorageError", undefined],
    );
    assertNoSecret(points, exporter.getFinishedSpans(), keys.map((k) => k.key));
  });

  it("a usage flush's span is a root: its timer, armed in one request, never joins that request's trace", async () => {
    const { exporter, meterProvider, tracerProvider } = setup();
    const service = new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage: new InMemoryApiKeyStorage(),
      usage: { flushIntervalMs: 100, onMetric: () => {} },
    });
    instrumentTelemetry({ meterProvider, tracerProvider, service });
    const [a, b] = await Promise.all(
      ["t-a", "t-b"].map((tenantId) =>
        service.create({ tenantId, name: "k", scopes: READ_ORDERS })
      ),
    );
    const tracer = tracerProvider.getTracer("app");
    for (const { key } of [a, b]) {
      const request = tracer.startSpan("request");
      await context.with(trace.setSpan(context.active(), request), () => service.authorize(key));
      request.end();
    }
    const deadline = Date.now() + 5_000;
    while (!exporter.getFinishedSpans().some((s) => s.name === "api_key.usage.write")) {
      assert.ok(Date.now() < deadline, "the flush timer wrote within 5 s");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await service.close();
    const writes = exporter.getFinishedSpans().filter((s) => s.name === "api_key.usage.write");
    assert.deepEqual(
      writes.map(parentOf),
      writes.map(() => undefined),
      "no parent: every tenant's rows",
    );
  });

  it("a revoked key's cached refusal is a negative hit; a failing storage's lookup span is an error", async () => {
    const { reader, meterProvider, exporter, tracerProvider } = setup();
    const store = new FlakyUsageStorage();
    const service = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: store });
    instrumentTelemetry({ meterProvider, tracerProvider, service });
    const { id, key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    await service.revoke(id);
    await assert.rejects(service.authorize(key)); // miss: the storage says revoked
    await assert.rejects(service.authorize(key)); // the cached refusal
    const other = await service.create({ tenantId: "t1", name: "o", scopes: READ_ORDERS });
    store.lookupFails = true;
    await assert.rejects(service.authorize(other.key));
    const points = await collect(reader);
    const lookups = (result: string) =>
      valueOf(points, "api_key.cache.lookups", { "api_key.cache.result": result });
    assert.deepEqual([lookups("miss"), lookups("negative_hit"), lookups("hit")], [2, 1, 0]);
    const spans = exporter.getFinishedSpans().filter((s) => s.name === "api_key.storage.lookup");
    assert.deepEqual(spans.map((s) => s.status.code), [0, 2], "found, then failed (ERROR)");
    assert.deepEqual(spans.map((s) => s.attributes["error.type"]), [
      undefined,
      "ApiKeyStorageError",
    ]);
    assert.equal(
      valueOf(points, "api_key.authorizations", {
        "api_key.outcome": "error",
        "api_key.environment": "unknown", // not verified: its claimed environment is not reported
      }),
      1,
    );
  });

  it("a lastUsedAt write is a span under the request's; a failed one is an error", async () => {
    const { exporter, tracerProvider } = setup();
    const store = new FlakyUsageStorage();
    const service = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: store });
    instrumentTelemetry({ tracerProvider, service });
    const keys = await Promise.all(
      ["a", "b"].map((name) => service.create({ tenantId: "t1", name, scopes: READ_ORDERS })),
    );
    const request = tracerProvider.getTracer("app").startSpan("request");
    await context.with(
      trace.setSpan(context.active(), request),
      () => service.authorize(keys[0].key),
    );
    request.end();
    store.touchFails = true;
    await service.authorize(keys[1].key); // the write fails detached: the authorization stands
    await new Promise((resolve) => setTimeout(resolve, 10));
    const touches = exporter.getFinishedSpans().filter((s) => s.name === "api_key.storage.touch");
    assert.deepEqual(touches.map((s) => s.status.code), [0, 2], "written, then failed (ERROR)");
    assert.deepEqual(touches.map((s) => s.attributes["error.type"]), [undefined, "Error"]);
    assert.equal(parentOf(touches[0]), request.spanContext().spanId);
  });

  it("a lastUsedAt write that never settles: its span ends as an error at the storage deadline", async () => {
    const { exporter, tracerProvider } = setup();
    const store = new FlakyUsageStorage();
    const service = new ApiKeysService({
      peppers: { 1: PEPPER_1 },
      storage: store,
      storageTimeoutMs: 20,
    });
    instrumentTelemetry({ tracerProvider, service });
    const { key } = await service.create({ tenantId: "t1", name: "a", scopes: READ_ORDERS });
    store.touchHangs = true;
    await service.authorize(key);
    await new Promise((resolve) => setTimeout(resolve, 80));
    const touches = exporter.getFinishedSpans().filter((s) => s.name === "api_key.storage.touch");
    assert.deepEqual(touches.map((s) => s.status.code), [2], "ended at the deadline, ERROR");
    assert.equal(touches[0].attributes["error.type"], "timeout");
  });

  it("the change feed's gauges: lag in seconds, +Inf while unbounded; notices absent until known", async () => {
    const { reader, meterProvider } = setup();
    const inner = new InMemoryApiKeyChangeFeed();
    let status: Record<string, unknown> = { stalenessMs: Infinity, healthy: false };
    const feed = {
      subscribe: inner.subscribe.bind(inner),
      status: () => ({ ...inner.status(), noticesArrive: null, ...status }),
      close: inner.close.bind(inner),
    };
    instrumentTelemetry({ meterProvider, changeFeed: feed });
    const gauges = async () =>
      Object.fromEntries(
        (await collect(reader)).filter((p) => p.name.startsWith("api_key.change_feed."))
          .map((p) => [p.name.slice("api_key.change_feed.".length), p.value]),
      );
    // Before the first sync: unbounded (an alert on the lag fires), notices not known yet.
    assert.deepEqual(await gauges(), { staleness: Infinity, healthy: 0 });
    status = { stalenessMs: 2_500, healthy: true, noticesArrive: false };
    assert.deepEqual(await gauges(), { staleness: 2.5, healthy: 1, notices_arrive: 0 });
    // After close() (or a feed never synced again): unbounded, never the last finite lag.
    status = { stalenessMs: Infinity, healthy: false, noticesArrive: true };
    assert.deepEqual(await gauges(), { staleness: Infinity, healthy: 0, notices_arrive: 1 });
  });

  it("a check the store does not answer in time counts as unavailable (timeout)", async () => {
    const { reader, meterProvider } = setup();
    const store = new FakeRemoteStore();
    store.stalled = true;
    const limiter = createRateLimiter({ store, logger: () => {}, timeoutMs: 20 });
    instrumentTelemetry({ meterProvider, limiter });
    const result = await limiter.check("x", [{ name: "a", limit: 1, windowMs: 1_000 }]);
    store.resume();
    const points = await collect(reader);
    assert.equal(
      valueOf(points, "rate_limit.store.unavailable", {
        "rate_limit.reason": "timeout",
        "rate_limit.on_store_error": limiter.onStoreError,
      }),
      1,
    );
    assert.equal(
      valueOf(points, "rate_limit.checks", {
        "rate_limit.outcome": result.outcome,
        "rate_limit.result": result.allowed ? "allowed" : "refused",
      }),
      1,
    );
    assert.notEqual(result.outcome, "store");
  });

  it("an SDK that throws never fails an authorization, a check or a reply", async () => {
    const boom = () => {
      throw new Error("exporter down");
    };
    const instrument = { add: boom, record: boom, addCallback: boom, removeCallback: boom };
    const meterProvider = {
      getMeter: () => ({
        createCounter: () => instrument,
        createHistogram: () => instrument,
        createObservableGauge: () => instrument,
      }),
    };
    const tracerProvider = { getTracer: () => ({ startSpan: boom }) };
    const limiter = createRateLimiter({ store: new FakeRemoteStore(), logger: () => {} });
    const store = new CreditedStorage();
    const service = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: store, limiter });
    const safe = createSafeFetch({ timestamp: false });
    instrumentTelemetry({ meterProvider, tracerProvider, service, limiter, responder: safe });
    const { key } = await creditedKey(service, store, { remaining: 5 });
    assert.equal((await service.authorize(key)).creditResult?.remaining, 4);
    assert.equal(
      (await limiter.check("x", [{ name: "a", limit: 1, windowMs: 1_000 }])).allowed,
      true,
    );
    const reply = await safe.route({}, () => 1)(new Request("http://x/x"));
    assert.equal(reply.status, 200);
  });

  /**
   * A meter provider whose gauges keep their callbacks in `registered`; the `failAddAt`-th
   * `addCallback` and the `failRemoveAt`-th `removeCallback` (counted in `counts`) throw.
   */
  const gaugeMeter = (
    registered: Set<unknown>,
    counts: { adds: number; removes: number },
    failAddAt: number,
    failRemoveAt = 0,
  ) => ({
    getMeter: () => ({
      createCounter: () => ({ add() {} }),
      createHistogram: () => ({ record() {} }),
      createObservableGauge: () => ({
        addCallback: (callback: unknown) => {
          if (++counts.adds === failAddAt) throw new Error("add bug");
          registered.add(callback);
        },
        removeCallback: (callback: unknown) => {
          registered.delete(callback);
          if (++counts.removes === failRemoveAt) throw new Error("remove bug");
        },
      }),
    }),
  });

  it("an SDK that throws while the gauges are set up: the call throws, leaving no callback registered; a retry works", () => {
    const registered = new Set<unknown>();
    const counts = { adds: 0, removes: 0 };
    const limiter = createRateLimiter({ logger: () => {} });
    const feed = new InMemoryApiKeyChangeFeed();
    assert.throws(
      () =>
        instrumentTelemetry({
          meterProvider: gaugeMeter(registered, counts, 2),
          limiter,
          changeFeed: feed,
        }),
      /add bug/,
    );
    assert.equal(registered.size, 0, "the first gauge's callback was removed");
    const telemetry = instrumentTelemetry({
      meterProvider: gaugeMeter(registered, counts, 0),
      limiter,
      changeFeed: feed,
    });
    assert.equal(registered.size, 3);
    telemetry.close();
    assert.equal(registered.size, 0);
  });

  it("an SDK whose removeCallback throws: close() and a failed setup still remove every other callback, the first error thrown", () => {
    const registered = new Set<unknown>();
    const counts = { adds: 0, removes: 0 };
    const limiter = createRateLimiter({ logger: () => {} });
    const feed = new InMemoryApiKeyChangeFeed();
    const telemetry = instrumentTelemetry({
      meterProvider: gaugeMeter(registered, counts, 0, 1),
      limiter,
      changeFeed: feed,
    });
    assert.equal(registered.size, 3);
    assert.throws(() => telemetry.close(), /remove bug/);
    assert.equal(registered.size, 0, "the gauges after the failing removal were removed");
    // A failed setup: the setup's error is thrown, not the removal's, and nothing stays registered.
    Object.assign(counts, { adds: 0, removes: 0 });
    assert.throws(
      () =>
        instrumentTelemetry({
          meterProvider: gaugeMeter(registered, counts, 3, 1),
          limiter,
          changeFeed: feed,
        }),
      /add bug/,
    );
    assert.equal(registered.size, 0);
  });

  it("a span whose setters throw (an SDK's or a span processor's fault) still ends, once: a check's, a store call's, a lookup's", async () => {
    const started: string[] = [];
    const ended: string[] = [];
    const boom = () => {
      throw new Error("sdk bug");
    };
    const tracerProvider = {
      getTracer: () => ({
        startSpan: (name: string) => {
          const id = `${name}#${started.push(name)}`;
          return {
            spanContext: () => ({
              traceId: "0".repeat(31) + "1",
              spanId: "1".repeat(16),
              traceFlags: 1,
            }),
            setAttribute: boom,
            setAttributes: boom,
            setStatus: boom,
            end: () => void ended.push(id),
            isRecording: () => true,
          };
        },
      }),
    };
    const store = new FakeRemoteStore();
    const limiter = createRateLimiter({ store, logger: () => {} });
    const storage = new FlakyUsageStorage();
    const service = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage });
    const telemetry = instrumentTelemetry({
      tracerProvider: tracerProvider as never,
      limiter,
      service,
    });
    const policy = [{ name: "api", limit: 5, windowMs: 60_000 }];
    assert.equal((await limiter.check("k", policy)).allowed, true); // a check's answer
    store.failing = new Error("down"); // a failed store call
    assert.equal((await limiter.check("k", policy)).outcome, "open");
    const { key } = await service.create({ tenantId: "t1", name: "k", scopes: READ_ORDERS });
    storage.lookupFails = true; // a failed lookup
    await assert.rejects(service.authorize(key));
    await new Promise((resolve) => setTimeout(resolve, 20));
    telemetry.close();
    assert.deepEqual(
      started.map((name, i) => `${name}#${i + 1}`).sort(),
      [...ended].sort(),
      "every span started ended, once",
    );
    assert.deepEqual([...started].sort(), [
      "api_key.storage.lookup",
      "rate_limit.check",
      "rate_limit.check",
      "rate_limit.store.call",
      "rate_limit.store.call",
    ]);
  });

  it("error.type: a store call the door gave up on is `timeout`, a rejected one its error's name (never its message); CLIENT spans", async () => {
    const { reader, meterProvider, exporter, tracerProvider } = setup();
    const store = new FakeRemoteStore();
    const limiter = createRateLimiter({ store, timeoutMs: 20, logger: () => {} });
    const telemetry = instrumentTelemetry({ meterProvider, tracerProvider, limiter });
    const policy = [{ name: "api", limit: 5, windowMs: 60_000 }];
    await limiter.check("a", policy); // answered
    store.stalled = true; // never settles: let go of SETTLE_MS past its answer
    assert.equal((await limiter.check("b", policy)).outcome, "open");
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    class ConnectionRefused extends Error {
      override name = "ConnectionRefused";
    }
    store.failing = new ConnectionRefused("connect ECONNREFUSED 10.0.0.7:6379");
    assert.equal((await limiter.check("c", policy)).outcome, "open");
    store.failing = undefined;
    store.resume();
    telemetry.close();
    const calls = exporter.getFinishedSpans().filter((s) => s.name === "rate_limit.store.call");
    assert.deepEqual(calls.map((s) => s.kind), [SpanKind.CLIENT, SpanKind.CLIENT, SpanKind.CLIENT]);
    assert.deepEqual(calls.map((s) => s.status.code), [0, 2, 2]);
    assert.deepEqual(
      calls.map((s) => s.attributes["error.type"]),
      [undefined, "timeout", "ConnectionRefused"],
    );
    const points = await collect(reader);
    const duration = (errorType?: string) =>
      valueOf(points, "rate_limit.store.duration", {
        "rate_limit.store.name": "fake",
        ...(errorType === undefined ? {} : { "error.type": errorType }),
      });
    assert.deepEqual([duration(), duration("timeout"), duration("ConnectionRefused")], [1, 1, 1]);
    const data = JSON.stringify([points, calls.map((s) => [s.attributes, s.events, s.status])]);
    assert.ok(!data.includes("ECONNREFUSED") && !data.includes("10.0.0.7"), "no message");
  });

  it("an SDK whose instruments and spans answer rejected promises: no unhandled rejection, every operation answers", async () => {
    const rejected = () => Promise.reject(new Error("exporter down"));
    const instrument = { add: rejected, record: rejected, addCallback() {}, removeCallback() {} };
    const meterProvider = {
      getMeter: () => ({
        createCounter: () => instrument,
        createHistogram: () => instrument,
        createObservableGauge: () => instrument,
      }),
    };
    const span = {
      setAttributes: () => span,
      setAttribute: () => span,
      setStatus: () => span,
      spanContext: () => ({ traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 0 }),
      end: rejected,
    };
    const tracerProvider = { getTracer: () => ({ startSpan: () => span }) };
    const unhandled = collectUnhandledRejections();
    try {
      const store = new FakeRemoteStore();
      const limiter = createRateLimiter({ store, logger: () => {} });
      const storage = new CreditedStorage();
      const service = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage, limiter });
      const safe = createSafeFetch({ timestamp: false });
      const telemetry = instrumentTelemetry({
        meterProvider,
        tracerProvider,
        service,
        limiter,
        responder: safe,
      });
      const { key } = await creditedKey(service, storage, { remaining: 5 });
      assert.equal((await service.authorize(key)).creditResult?.remaining, 4);
      const policy = [{ name: "a", limit: 1, windowMs: 1_000 }];
      assert.equal((await limiter.check("x", policy)).allowed, true);
      store.failing = new Error("down"); // a failed store call's span
      assert.equal((await limiter.check("y", policy)).outcome, "open");
      const reply = await safe.route({}, () => 1)(new Request("http://x/x"));
      assert.equal(reply.status, 200);
      await new Promise((resolve) => setTimeout(resolve, 20));
      telemetry.close();
      await service.close();
    } finally {
      await unhandled.stop();
    }
    assert.deepEqual(unhandled.reasons, []);
  });

  it("bounded cardinality: thirty keys of thirty tenants make no more series", async () => {
    const { reader, meterProvider } = setup();
    const store = new CreditedStorage();
    const service = new ApiKeysService({ peppers: { 1: PEPPER_1 }, storage: store });
    instrumentTelemetry({ meterProvider, service });
    for (let i = 0; i < 30; i++) {
      const { key } = await service.create({
        tenantId: `tenant-${i}`,
        name: "k",
        scopes: READ_ORDERS,
      });
      await service.authorize(key);
      await assert.rejects(service.authorize(breakChecksum(key)));
    }
    const points = await collect(reader);
    const series = points.filter((p) => p.name === "api_key.authorizations");
    assert.equal(series.length, 2, JSON.stringify(series.map((s) => s.attributes)));
    for (const point of points) {
      for (const name of Object.keys(point.attributes)) {
        assert.match(name, /^(api_key\.(outcome|environment|cache\.result|usage\.outcome))$/);
      }
    }
  });
  it("the instrumentation scope is the package's name and version (deno.json)", () => {
    const deno = JSON.parse(readFileSync(new URL("../../deno.json", import.meta.url), "utf8"));
    assert.deepEqual([TELEMETRY_SCOPE, TELEMETRY_VERSION], [deno.name, deno.version]);
  });

  // The docs are the repository's, not the npm test tree's: Deno only.
  it("every instrument of docs/telemetry.md fired above, and no other", {
    skip: !("Deno" in globalThis),
  }, () => {
    const page = readFileSync(new URL("../../docs/telemetry.md", import.meta.url), "utf8");
    const section = page.slice(page.indexOf("## Instruments"), page.indexOf("## Spans"));
    const documented = [...section.matchAll(/^\| `([a-z_.]+)`/gm)].map((m) => m[1]).sort();
    assert.equal(documented.length, 14);
    assert.deepEqual([...SEEN].sort(), documented);
  });
});

/** In-memory storage whose usage writes, lookups (its `peekByPrefix`) or touches fail on demand. */
class FlakyUsageStorage extends InMemoryApiKeyStorage {
  failing = false;
  lookupFails = false;
  touchFails = false;
  touchHangs = false;
  override recordUsage(rows: readonly ApiKeyUsageRow[], batchId?: string): Promise<void> {
    if (this.failing) return Promise.reject(new Error("usage down"));
    return super.recordUsage(rows, batchId);
  }
  override touchLastUsed(id: string, lastUsedAt: Date): Promise<void> {
    if (this.touchFails) return Promise.reject(new Error("touch down"));
    if (this.touchHangs) return new Promise(() => {}); // a lock wait that never ends
    return super.touchLastUsed(id, lastUsedAt);
  }
  override peekByPrefix(prefix: string) {
    if (this.lookupFails) throw new Error("storage down");
    return super.peekByPrefix(prefix);
  }
}

function parentOf(span: ReadableSpan): string | undefined {
  const s = span as unknown as { parentSpanContext?: { spanId: string }; parentSpanId?: string };
  return s.parentSpanContext?.spanId ?? s.parentSpanId;
}

/** Every attribute of every point and span, scanned for each of `secrets`. */
function assertNoSecret(points: Point[], spans: ReadableSpan[], secrets: string[]): void {
  const data = JSON.stringify([
    points.map((p) => p.attributes),
    spans.map((s) => [s.name, s.attributes, s.events, s.links]),
  ]);
  for (const secret of secrets) assert.ok(!data.includes(secret), "a secret in telemetry");
}
