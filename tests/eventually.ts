/**
 * Waits for work started off the caller's path (a sink's delivery, a hash
 * upgrade, a write-back) by polling its outcome, never by counting event-loop
 * turns: a loaded machine takes more turns, never a different outcome.
 *
 * @module
 */
import assert from "node:assert/strict";

/** Polls `condition` every 10 ms until it holds; fails naming `what` past `timeoutMs`. */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  what = "the condition",
  timeoutMs = 5_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!await condition()) {
    if (Date.now() > until) assert.fail(`never: ${what} (${timeoutMs} ms)`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
