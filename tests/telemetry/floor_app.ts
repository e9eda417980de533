/**
 * Run by api_floor_test.ts with `@opentelemetry/api` mapped to its lowest
 * supported version: the bridge against that API (its globals, span kinds and
 * status codes) and a recording meter; prints what was recorded as JSON.
 */
import { context, trace } from "@opentelemetry/api";
import type { MeterProvider } from "@opentelemetry/api";
import { instrumentTelemetry } from "../../telemetry/mod.ts";
import { createRateLimiter } from "../../rate_limits/mod.ts";
import { FakeRemoteStore } from "../rate_limits/_fake_store.ts";

const recorded: Record<string, number> = {};
const instrument = (name: string) => ({
  add: (n: number) => void (recorded[name] = (recorded[name] ?? 0) + n),
  record: () => void (recorded[name] = (recorded[name] ?? 0) + 1),
  addCallback: () => {},
  removeCallback: () => {},
});
const meterProvider = {
  getMeter: () => ({
    createCounter: instrument,
    createHistogram: instrument,
    createObservableGauge: instrument,
  }),
} as unknown as MeterProvider;

const limiter = createRateLimiter({ store: new FakeRemoteStore(), logger: () => {} });
const telemetry = instrumentTelemetry({ meterProvider, limiter });
const span = trace.getTracer("app").startSpan("request");
await context.with(
  trace.setSpan(context.active(), span),
  () => limiter.check("a", [{ name: "api", limit: 5, windowMs: 1_000 }]),
);
telemetry.close();
console.log(JSON.stringify({ api: import.meta.resolve("@opentelemetry/api"), recorded }));
