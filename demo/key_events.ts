/**
 * The demo's log of key lifecycle events an operator acts on: expiry notices
 * (`api_key.expiring`, from the expiry-notice interval of `ApiKeysModule`),
 * rotations that wait for the new key, and completed rotations. Prefixes and
 * ids only: no event carries key material.
 *
 * @module
 */
import type { ApiKeyEvent } from "../api_keys/mod.ts";
import type { ApiKeyExpiryNoticesOptions } from "../api_keys/nest/mod.ts";

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** The demo's expiry notices: 7 days and 1 day before, checked every minute. */
export const DEMO_EXPIRY_NOTICES: ApiKeyExpiryNoticesOptions = Object.freeze({
  thresholdsMs: [7 * DAY, DAY],
  intervalMs: 60_000,
});

/** `ms` in the largest whole unit (days, hours, minutes), else in ms. */
function duration(ms: number): string {
  for (const [unit, size] of [["day", DAY], ["hour", HOUR], ["minute", 60_000]] as const) {
    if (ms % size === 0) return `${ms / size} ${unit}${ms === size ? "" : "s"}`;
  }
  return `${ms} ms`;
}

/**
 * The log line of `event`, or `undefined` for the events the demo does not log.
 *
 * @example
 * ```ts
 * import { formatKeyEvent } from "./key_events.ts";
 * formatKeyEvent({
 *   type: "api_key.expiring", at: new Date(), keyId: "k1", tenantId: "demo", prefix: "AbCdEfGhIjKl",
 *   environment: "live", expiresAt: new Date("2030-01-08T00:00:00Z"), thresholdMs: 604_800_000,
 * }); // "expiry notice: key AbCdEfGhIjKl (tenant demo, live) expires within 7 days, at 2030-01-08T00:00:00.000Z"
 * ```
 */
export function formatKeyEvent(event: ApiKeyEvent): string | undefined {
  switch (event.type) {
    case "api_key.expiring":
      return `expiry notice: key ${event.prefix} (tenant ${event.tenantId}, ${event.environment}) ` +
        `expires within ${duration(event.thresholdMs)}, at ${event.expiresAt.toISOString()}`;
    case "api_key.rotated":
      return event.graceStarts === "first-use"
        ? `rotation waiting: key ${event.oldPrefix} works until the first use of ` +
          `${event.newPrefix} plus its grace, at the latest ${event.graceExpiresAt.toISOString()}`
        : undefined;
    case "api_key.rotation_completed":
      return `rotation completed: key ${event.oldPrefix} stopped working at ` +
        event.endedAt.toISOString();
    default:
      return undefined;
  }
}

/**
 * An `onEvent` sink writing the line of each logged event to `log`.
 *
 * @example
 * ```ts
 * import { keyEventLogger } from "./key_events.ts";
 * const onEvent = keyEventLogger((line) => console.log(`[keys] ${line}`));
 * ```
 */
export function keyEventLogger(log: (line: string) => void): (event: ApiKeyEvent) => void {
  return (event) => {
    const line = formatKeyEvent(event);
    if (line !== undefined) log(line);
  };
}
