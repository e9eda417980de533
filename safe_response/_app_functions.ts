/**
 * Calls to the application's functions (the module's function options, an
 * i18n service, the request-context store). They are synchronous: a throw,
 * or a returned promise, is a failure the caller turns into a generic 500 or
 * a fallback; a returned promise's rejection is handled here, so it never
 * becomes an unhandled rejection (which ends a Node process).
 *
 * @module
 */

/**
 * What calling an application function gave: its value, or a log line
 * saying why there is none (it may quote the failure; never send it).
 */
export type AppCallOutcome<T> = { ok: true; value: T } | { ok: false; failure: string };

/**
 * A log line and stack describing a thrown value; never throws itself (a
 * hostile `message` getter, a proxy). A `stack` that is not a string (one an
 * error-serialising library replaced) is left out.
 */
export function describeThrown(value: unknown): [line: string, stack: string | undefined] {
  try {
    if (value instanceof Error) {
      const stack: unknown = value.stack;
      return [`${value.name}: ${value.message}`, typeof stack === "string" ? stack : undefined];
    }
    return [`Non-error thrown: ${String(value)}`, undefined];
  } catch {
    return ["Non-error thrown (not printable)", undefined];
  }
}

/** Whether `value` is a promise-like (one whose `then` cannot even be read counts). */
function isThenable(value: unknown): boolean {
  if (typeof value !== "function" && (typeof value !== "object" || value === null)) return false;
  try {
    return typeof (value as { then?: unknown }).then === "function";
  } catch {
    return true;
  }
}

/**
 * Calls the application function `call`; `what` names it in the failure
 * line (as "option `dateFormatter`"). A throw, or a returned promise (whose
 * rejection is then handled), is a failure.
 */
export function callAppFunction<T>(what: string, call: () => T): AppCallOutcome<T> {
  let value: T;
  try {
    value = call();
  } catch (error) {
    return { ok: false, failure: `${what} threw (${describeThrown(error)[0]})` };
  }
  if (!isThenable(value)) return { ok: true, value };
  // Adopting the thenable observes its rejection (a throwing `then` becomes one) and the
  // handler marks it handled; this never throws synchronously.
  new Promise((resolve) => resolve(value)).catch(() => {});
  return { ok: false, failure: `${what} returned a promise; it must be synchronous` };
}
