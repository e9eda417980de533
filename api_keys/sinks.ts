/**
 * Delivery to caller-supplied sinks: sync or async, never awaited, errors
 * routed to an error handler and never to the operation's caller.
 *
 * @module
 */

/**
 * Delivers one payload; never throws.
 *
 * @example
 * ```ts
 * import type { Dispatch } from "./sinks.ts";
 * const dispatch: Dispatch<string> = (payload) => console.log(payload);
 * ```
 */
export type Dispatch<T> = (payload: T) => void;

/**
 * Builds a dispatcher over `sink`. A throw or rejection goes to `onError`; when
 * there is none, the first one is logged with one `console.warn` (naming only
 * `label` and the error's name) and the rest are swallowed. An error thrown by
 * `onError` itself is swallowed.
 *
 * @example
 * ```ts
 * import { createDispatcher } from "./sinks.ts";
 * const dispatch = createDispatcher((n: number) => console.log(n), undefined, "onMetric");
 * dispatch?.(1); // undefined when there is no sink
 * ```
 */
export function createDispatcher<T>(
  sink: ((payload: T) => void | Promise<void>) | undefined,
  onError: ((error: unknown, payload: T) => void) | undefined,
  label: string,
): Dispatch<T> | undefined {
  if (sink === undefined) return undefined;
  let warned = false;
  const fail = (error: unknown, payload: T): void => {
    if (onError !== undefined) {
      try {
        onError(error, payload);
      } catch {
        // the error handler itself failed: nothing left to tell
      }
      return;
    }
    if (!warned) {
      warned = true;
      const name = error instanceof Error ? error.name : typeof error;
      console.warn(`api-keys: ${label} sink failed (${name}); further failures are not logged`);
    }
  };
  return (payload) => {
    try {
      const result = sink(payload);
      if (result !== undefined && typeof (result as Promise<void>).then === "function") {
        (result as Promise<void>).then(undefined, (error) => fail(error, payload));
      }
    } catch (error) {
      fail(error, payload);
    }
  };
}
