/**
 * The event sink of each `ApiKeysService`, for the components outside the
 * service that emit its events (the leaked-key handlers' `api_key.exposed`),
 * without a public method on the service.
 *
 * @module
 */
import type { ApiKeyEvent } from "./events.ts";
import type { Dispatch } from "./_sinks.ts";

const sinks = new WeakMap<object, Dispatch<ApiKeyEvent>>();

/** Records the `onEvent` dispatcher of `service` (called by its constructor). */
export function attachEventSink(service: object, emit: Dispatch<ApiKeyEvent> | undefined): void {
  if (emit !== undefined) sinks.set(service, emit);
}

/** The `onEvent` dispatcher of `service`, if it is an `ApiKeysService` with one. */
export function serviceEventSink(service: object): Dispatch<ApiKeyEvent> | undefined {
  return sinks.get(service);
}
