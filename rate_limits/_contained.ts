/**
 * A caller-supplied function called without its failure reaching the caller:
 * a throw, or the rejection of the promise an async one returns (which would
 * otherwise be an unhandled rejection, ending a Deno or Node process).
 *
 * @module
 */

/**
 * Calls `fn(...args)`; a throw or rejection goes to `onFailure`. Never throws.
 *
 * @example
 * ```ts
 * import { contained } from "./_contained.ts";
 * contained(() => Promise.reject(new Error("down")), [], () => {}); // nothing escapes
 * ```
 */
export function contained<A extends unknown[]>(
  fn: (...args: A) => unknown,
  args: A,
  onFailure: (error: unknown) => void,
): void {
  try {
    Promise.resolve(fn(...args)).catch(onFailure);
  } catch (error) {
    onFailure(error);
  }
}
