/**
 * The client-IP step both bindings share: the app's resolver is called, and a
 * throw, a rejection or an answer other than a string means "client IP
 * unknown" (keys with an allowlist are then refused, others pass).
 *
 * @module
 */
import { failureLine } from "./_sinks.ts";

/** Whether `value` is a promise or thenable. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === "function";
}

/**
 * The answer of `resolve(...args)`, or `undefined` when it throws, rejects or
 * answers something other than a string; a throw or rejection is logged
 * through `log` (error name only, see `failureLine`). Synchronous when the
 * resolver is. Never throws or rejects.
 *
 * @param label The resolver's option name, for the log line.
 */
export function resolveClientIp<Args extends unknown[]>(
  resolve: (...args: Args) => unknown,
  args: Args,
  label: string,
  log: (line: string) => void,
): string | undefined | Promise<string | undefined> {
  const unknown = (error: unknown): undefined => {
    log(`${failureLine(label, error)}; client IP treated as unknown`);
    return undefined;
  };
  try {
    const resolved = resolve(...args);
    return isThenable(resolved)
      ? Promise.resolve(resolved).then(stringOrUndefined, unknown)
      : stringOrUndefined(resolved);
  } catch (error) {
    return unknown(error);
  }
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
