/**
 * Calls into caller-supplied functions whose result the operation does not
 * wait for (sinks, their error handlers, `onAuthFailed`, the `lastUsedAt`
 * write, the authorizer's `log`, the error reporters named `onError`,
 * `createSafeFetch`'s `logger`): sync or async, never awaited, a throw or
 * rejection contained and reported, never reaching the operation's caller.
 *
 * @module
 */
import { redactApiKeys } from "./key_format.ts";
import { errorNameOf } from "../telemetry/_error_name.ts";
import { callDetached } from "../telemetry/_detached.ts";

/** Delivers one payload; never throws. */
export type Dispatch<T> = (payload: T) => void;

/**
 * Hides the keys in a log line: a service's key layouts' redaction (its
 * `settings.layouts`), or `redactApiKeys` (the current layout) without one.
 */
export type Redact = (line: string) => string;

/**
 * The log line about a failed caller-supplied function: its `label` and the
 * error's name (never its message, which may carry secrets), redacted with
 * `redact`. Never throws.
 */
export function failureLine(
  label: string,
  error: unknown,
  redact: Redact = redactApiKeys,
): string {
  return redact(`api-keys: ${label} failed (${errorNameOf(error)})`);
}

/** Writes `line` with `write` (a console method); never throws. */
export function logLine(write: (line: string) => void, line: string): void {
  try {
    write(line);
  } catch {
    // the console itself failed: nothing left to tell
  }
}

/**
 * A failure reporter for the caller-supplied function `label`: the first
 * failure is logged with one `console.warn` (see `failureLine`), the rest are
 * swallowed. Never throws.
 */
export function warnOnce(
  label: string,
  redact: Redact = redactApiKeys,
): (error: unknown) => void {
  let warned = false;
  return (error) => {
    if (warned) return;
    warned = true;
    logLine(console.warn, `${failureLine(label, error, redact)}; further failures are not logged`);
  };
}

/** What `warnPerOutage` reports to. */
export interface OutageReporter {
  /** A pass failed: logged when the last one succeeded (or none ran). */
  failed(error: unknown): void;
  /** A pass succeeded: after failed ones, that it recovered is logged. */
  succeeded(): void;
}

/**
 * A failure reporter for `label`, a job that runs again and again (a timer's
 * passes): once per outage, the first failure after a success with one
 * `console.warn` (see `failureLine`), and the first success after failures
 * with one `console.info` (since when and how many passes failed). Never throws.
 */
export function warnPerOutage(label: string, redact: Redact = redactApiKeys): OutageReporter {
  let failures = 0;
  let since = 0;
  return {
    failed(error) {
      if (failures++ > 0) return;
      since = Date.now();
      logLine(
        console.warn,
        `${failureLine(label, error, redact)}; further failures are not logged until it recovers`,
      );
    },
    succeeded() {
      if (failures === 0) return;
      const line = `api-keys: ${label} recovered after ${failures} failed pass(es) since ` +
        new Date(since).toISOString();
      failures = 0;
      logLine(console.info, line);
    },
  };
}

/**
 * Freezes `value` and, within it, every array and plain object (dates and
 * class instances are left as they are); answers `value`.
 */
export function freezePayload<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value;
  for (const item of Object.values(value)) freezePayload(item);
  return Object.freeze(value);
}

/**
 * Builds a dispatcher over `sink` (named `label`, e.g. `onEvent`). Every throw
 * or rejection of the sink goes to `onError` (named `label + "Error"`); when
 * there is none, the first one is logged (see `warnOnce`). A failure of
 * `onError` itself, thrown or rejected, is logged once the same way. With
 * `freeze`, each payload is frozen first (see `freezePayload`). The lines are
 * redacted with `redact`.
 */
export function createDispatcher<T>(
  sink: ((payload: T) => unknown) | undefined,
  onError: ((error: unknown, payload: T) => unknown) | undefined,
  label: string,
  freeze = false,
  redact: Redact = redactApiKeys,
): Dispatch<T> | undefined {
  if (sink === undefined) return undefined;
  let fail: (error: unknown, payload: T) => void;
  if (onError === undefined) {
    fail = warnOnce(label, redact);
  } else {
    const handlerFailed = warnOnce(`${label}Error`, redact);
    fail = (error, payload) => callDetached(onError, [error, payload], handlerFailed);
  }
  return (payload) => {
    if (freeze) freezePayload(payload);
    callDetached(sink, [payload], (error) => fail(error, payload));
  };
}
