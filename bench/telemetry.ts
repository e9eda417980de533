/**
 * Benchmark: the added cost of the OpenTelemetry bridge (`./telemetry`) on a
 * real SDK (a `MeterProvider` with a reader, a `BasicTracerProvider` without
 * an exporter), per cached authorize, per limiter check (the in-memory store)
 * and per reply, next to the same operation with the bridge off: the added
 * cost is mostly the SDK's own (attribute sets, histograms, span ids).
 *
 * Run: `deno run -A bench/telemetry.ts [--quick]` (or through `deno task bench`).
 *
 * @module
 */
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { ApiKeysService, InMemoryApiKeyStorage } from "../api_keys/mod.ts";
import { createRateLimiter } from "../rate_limits/mod.ts";
import { resolveSettings, Responder } from "../safe_response/mod.ts";
import { instrumentTelemetry } from "../telemetry/mod.ts";
import { alternate, type Case, fmt, printTable, runtimeName } from "./lib/harness.ts";

class Reader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const PEPPER = "bench-pepper-0123456789abcdefghijklmnopqrstuvwxyz";
const SCOPES = [{ resource: "orders", level: "read" as const }];
const POLICY = [{ name: "api", limit: 1_000_000_000, windowMs: 60_000 }];

/** A service, limiter and responder; instrumented when `on`. */
async function build(on: boolean) {
  const limiter = createRateLimiter({ logger: () => {} });
  const service = new ApiKeysService({
    peppers: { 1: PEPPER },
    storage: new InMemoryApiKeyStorage(),
  });
  const responder = new Responder(resolveSettings({ timestamp: false }));
  if (on) {
    instrumentTelemetry({
      meterProvider: new MeterProvider({ readers: [new Reader()] }),
      tracerProvider: new BasicTracerProvider(),
      service,
      limiter,
      responder,
    });
  }
  const { key } = await service.create({ tenantId: "bench", name: "k", scopes: SCOPES });
  await service.authorize(key);
  return { limiter, service, responder, key };
}

const off = await build(false);
const on = await build(true);
const exchange = {
  method: "GET",
  target: "/x",
  requestHeader: () => undefined,
  responseHeader: () => undefined,
};
const planOff = off.responder.plan({});
const planOn = on.responder.plan({});
const pairs: [string, Case, Case][] = [
  [
    "authorize (cached)",
    { name: "off", op: () => off.service.authorize(off.key) },
    { name: "on", op: () => on.service.authorize(on.key) },
  ],
  [
    "limiter check (memory store)",
    { name: "off", op: () => off.limiter.check("k", POLICY) },
    { name: "on", op: () => on.limiter.check("k", POLICY) },
  ],
  [
    "reply (success envelope)",
    {
      name: "off",
      op: () => off.responder.success({ a: 1 }, exchange, { plan: planOff }),
      sync: true,
    },
    {
      name: "on",
      op: () => on.responder.success({ a: 1 }, exchange, { plan: planOn }),
      sync: true,
    },
  ],
];
const rows: string[][] = [];
for (const [name, a, b] of pairs) {
  const [t0, t1] = await alternate([a, b]);
  rows.push([name, fmt(t0.us), fmt(t1.us), fmt(t1.us - t0.us)]);
}
printTable(
  `Telemetry bridge cost (${runtimeName()}; µs per operation, median of rounds)`,
  ["operation", "bridge off", "bridge on", "added"],
  rows,
);
