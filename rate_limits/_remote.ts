/**
 * What the remote stores (Redis, PostgreSQL) share. Their own `error` listener
 * on the client they were given: an event emitter without one ends the
 * process on its first `error` (a lost Redis connection, a terminated
 * PostgreSQL backend), so the store always listens and reports at most one
 * line per interval. (A stalled call's wait is bounded by the door,
 * `_door.ts`: the stores race no timer of their own.) And the one reader of a
 * client's error message (`errorMessageOf`: never throws), for the stores.
 *
 * @module
 */
import { errorMessageOf } from "../telemetry/_error_name.ts";
import { callDetached } from "../telemetry/_detached.ts";
import type { CreditCounter, RateLimitCounter, WindowCounter } from "./store.ts";

export { errorMessageOf };

/** What a client with events has (node-redis clients, `pg.Pool`, `pg.Client`). */
interface Emitter {
  on(event: "error", listener: (error: unknown) => void): unknown;
  off?(event: "error", listener: (error: unknown) => void): unknown;
  removeListener?(event: "error", listener: (error: unknown) => void): unknown;
}

/** Default interval between two lines (ms). */
export const REPORT_INTERVAL_MS = 10_000;

/**
 * Listens for `error` on `client` when it has `on`; each error goes to
 * `logger` (default `console.error`) at most once per `intervalMs`, with the
 * number left out since the last line. Resolves nothing; returns what removes
 * the listener. A logger that throws or rejects is contained.
 *
 * @example
 * ```ts
 * import { EventEmitter } from "node:events";
 * import { reportErrors } from "./_remote.ts";
 * const client = new EventEmitter();
 * const stop = reportErrors(client, "redis", (line) => console.log(line));
 * client.emit("error", new Error("connection lost")); // logged, not thrown
 * stop();
 * ```
 */
export function reportErrors(
  client: unknown,
  store: string,
  logger: (line: string) => void = console.error,
  intervalMs = REPORT_INTERVAL_MS,
): () => void {
  const emitter = client as Partial<Emitter> | undefined;
  if (typeof emitter?.on !== "function") return () => {};
  let last = -Infinity;
  let left = 0;
  const listener = (error: unknown) => {
    const now = Date.now();
    if (now - last < intervalMs) {
      left++;
      return;
    }
    last = now;
    const what = errorMessageOf(error);
    const more = left > 0 ? ` (${left} more since the last line)` : "";
    left = 0;
    // A logger's throw or rejection must not turn into the uncaught error this listener prevents.
    callDetached(logger, [`rate-limit store ${store}: client error: ${what}${more}`], () => {});
  };
  emitter.on.call(client, "error", listener);
  return () => {
    const off = emitter.off ?? emitter.removeListener;
    off?.call(client, "error", listener);
  };
}

/**
 * Splits `counters` into window and credit counters (stores that answer
 * windows first) and puts such answers back in the order given.
 */
export function byKind(counters: readonly RateLimitCounter[]): {
  windows: WindowCounter[];
  credits: CreditCounter[];
  inOrder: <T>(answers: readonly T[]) => T[];
} {
  if (counters.every((c) => c.kind === "window")) { // the common check: nothing to reorder
    return {
      windows: counters as WindowCounter[],
      credits: [],
      inOrder: (answers) => [...answers],
    };
  }
  const windows: WindowCounter[] = [];
  const credits: CreditCounter[] = [];
  const slots = counters.map((c) =>
    c.kind === "credit" ? -1 - (credits.push(c) - 1) : windows.push(c) - 1
  );
  return {
    windows,
    credits,
    inOrder: (answers) => slots.map((s) => answers[s >= 0 ? s : windows.length - 1 - s]),
  };
}
