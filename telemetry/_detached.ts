/**
 * A caller-supplied function (a logger, a sink, an error hook) called without
 * waiting and without its failure reaching the caller: a throw, or the
 * rejection of the promise an async one returns (which would otherwise be an
 * unhandled rejection, ending a Deno or Node process). A leaf shared by the
 * api-keys and rate-limits cores and the Fetch bindings.
 *
 * @module
 */

/**
 * Calls `fn(...args)` without waiting for it: a throw, or a rejection of the
 * promise (or thenable) it returns, goes to `onFailure`, which must not throw.
 * Never throws and never leaves an unhandled rejection.
 *
 * @example
 * ```ts
 * import { callDetached } from "./_detached.ts";
 * callDetached(() => Promise.reject(new Error("down")), [], () => {}); // nothing escapes
 * ```
 */
export function callDetached<A extends unknown[]>(
  fn: (...args: A) => unknown,
  args: A,
  onFailure: (error: unknown) => void,
): void {
  try {
    const result = fn(...args) as { then?: unknown } | undefined | null;
    if (result !== undefined && result !== null && typeof result.then === "function") {
      (result as PromiseLike<unknown>).then(undefined, onFailure);
    }
  } catch (error) {
    onFailure(error);
  }
}
