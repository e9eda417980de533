/**
 * Timers that never hold the process open.
 *
 * @module
 */

/** Lets the process exit while `timer` is pending (Node's `unref`, Deno's `unrefTimer`). */
export function unref(timer: ReturnType<typeof setTimeout>): void {
  if (typeof timer === "number") {
    (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno?.unrefTimer(timer);
  } else {
    (timer as { unref?: () => void }).unref?.();
  }
}
