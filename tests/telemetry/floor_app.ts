/**
 * Run by floor_app_test.ts in a process of its own with `@opentelemetry/api`
 * swapped for its lowest supported version (an import map on Deno, a resolve
 * hook on Node over the npm build): the bridge against that API (its globals,
 * context, span kinds, status codes, links), a recording meter and the SDK's
 * in-memory span exporter; prints a {@link FloorReport} as JSON.
 */
import { context, trace } from "@opentelemetry/api";
import type { MeterProvider } from "@opentelemetry/api";
import { instrumentTelemetry } from "../../telemetry/mod.ts";
import { createRateLimiter } from "../../rate_limits/mod.ts";
import { ApiKeysService } from "../../api_keys/service.ts";
import { InMemoryApiKeyStorage } from "../../api_keys/storage/in_memory.ts";
import { FakeRemoteStore } from "../rate_limits/_fake_store.ts";
import { setup, useAsyncContext } from "./_sdk.ts";

/** What the floor app prints. */
export interface FloorReport {
  /** Where `@opentelemetry/api` resolved from. */
  api: string;
  /** Per instrument: values added, or values recorded. */
  recorded: Record<string, number>;
  /** Finished spans: name, parent span's name, names of the linked spans. */
  spans: { name: string; parent: string | null; links: string[] }[];
}

const PEPPER = "floor-app-pepper-0123456789abcdefghijklmnop";
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
// The API's global context manager (registered through the lowest API) and the SDK's spans.
const stopContext = useAsyncContext();
const { exporter, tracerProvider } = setup();

const limiter = createRateLimiter({ store: new FakeRemoteStore(), logger: () => {} });
const service = new ApiKeysService({
  peppers: { 1: PEPPER },
  storage: new InMemoryApiKeyStorage(),
});
const telemetry = instrumentTelemetry({ meterProvider, tracerProvider, limiter, service });
const { key } = await service.create({
  tenantId: "floor",
  name: "floor",
  scopes: [{ resource: "orders", level: "read" }],
});
const request = tracerProvider.getTracer("app").startSpan("request");
await context.with(trace.setSpan(context.active(), request), async () => {
  // Three checks: the first sent at once (an idle limiter), the two others coalesced into one
  // store call; a verification reaching the storage.
  await Promise.all(
    ["a", "b", "c"].map((subject) =>
      limiter.check(subject, [{ name: "api", limit: 5, windowMs: 1_000 }])
    ),
  );
  await service.authorize(key);
});
request.end();
await new Promise((resolve) => setTimeout(resolve, 0)); // the detached lastUsedAt write settles
telemetry.close();
stopContext();

const finished = exporter.getFinishedSpans();
const nameOf = (spanId: string | undefined) =>
  finished.find((s) => s.spanContext().spanId === spanId)?.name ?? null;
const report: FloorReport = {
  api: import.meta.resolve("@opentelemetry/api"),
  recorded,
  spans: finished.map((span) => ({
    name: span.name,
    // `parentSpanContext` on SDK 2.x, `parentSpanId` before.
    parent: nameOf(
      (span as { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId ??
        (span as { parentSpanId?: string }).parentSpanId,
    ),
    links: span.links.map((link) => nameOf(link.context.spanId) ?? "?"),
  })),
};
console.log(JSON.stringify(report));
