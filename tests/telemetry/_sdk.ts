/**
 * The OpenTelemetry SDK of the telemetry tests: a `MeterProvider` on a reader
 * collected on demand, a `BasicTracerProvider` exporting to memory, and the
 * global context manager an SDK registers.
 *
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { type Context, context, ROOT_CONTEXT } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";

/** A reader collected on demand. */
export class TestReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Fresh providers, their reader and their span exporter. */
export function setup() {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return { reader, meterProvider, exporter, tracerProvider };
}

/**
 * Registers a global context manager keeping the active context across awaits
 * (what an SDK's does); answers what unregisters it.
 */
export function useAsyncContext(): () => void {
  const storage = new AsyncLocalStorage<Context>();
  context.setGlobalContextManager({
    active: () => storage.getStore() ?? ROOT_CONTEXT,
    with: (ctx, fn, thisArg, ...args) => storage.run(ctx, () => fn.call(thisArg, ...args)),
    bind: (_ctx, target) => target,
    enable() {
      return this;
    },
    disable() {
      return this;
    },
  });
  return () => context.disable();
}
