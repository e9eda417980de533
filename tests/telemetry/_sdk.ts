/**
 * The OpenTelemetry SDK of the telemetry tests: a `MeterProvider` on a reader
 * collected on demand, a `BasicTracerProvider` exporting to memory.
 *
 * @module
 */
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
