/**
 * A remote store's clock seen from this process: turns a deadline on the local
 * clock (`Date.now()`) into one on the server's clock that is never later than
 * the local deadline, so a server that applies a check only before it never
 * applies one the limiter has already answered.
 *
 * Each round trip gives `server - receivedAt` as a lower bound of the offset
 * (the server read its clock at or before the reply arrived). The tightest
 * (highest) bound is kept: a reply read late, by a busy event loop, gives a
 * loose bound that would make every deadline early. A bound older than
 * `BOUND_TTL_MS` gives way to the next one (clocks drift by ppm; a clock
 * stepped forward is followed at once, one stepped back within that time).
 *
 * @module
 */

/** How long a bound is kept against looser ones (ms of the local clock). */
export const BOUND_TTL_MS = 10_000;

/** The offset estimate of one store. */
export interface ClockOffset {
  /** Whether a round trip has been observed (before that, `toServer` answers `undefined`). */
  readonly known: boolean;
  /** Records one round trip: the server's time (ms) read during it, and when its reply arrived (local ms). */
  observe(serverMs: number, receivedAtMs: number): void;
  /** `localMs` on the server's clock, never later than the true instant; `undefined` until a round trip is seen. */
  toServer(localMs: number): number | undefined;
}

/**
 * Creates an offset estimate.
 *
 * @example
 * ```ts
 * import { createClockOffset } from "./_clock.ts";
 * const clock = createClockOffset();
 * clock.observe(1_000_050, 1_000_000); // server read 50 ms ahead when the reply arrived
 * clock.toServer(1_000_100); // 1_000_150
 * ```
 */
export function createClockOffset(): ClockOffset {
  let offset: number | undefined;
  let keptAt = 0;
  return {
    get known() {
      return offset !== undefined;
    },
    observe(serverMs, receivedAtMs) {
      if (!Number.isFinite(serverMs) || !Number.isFinite(receivedAtMs)) return;
      const bound = serverMs - receivedAtMs;
      if (offset === undefined || bound >= offset || receivedAtMs - keptAt > BOUND_TTL_MS) {
        offset = bound;
        keptAt = receivedAtMs;
      }
    },
    toServer: (localMs) => offset === undefined ? undefined : Math.floor(localMs + offset),
  };
}
