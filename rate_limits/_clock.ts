/**
 * A remote store's clock seen from this process: turns a deadline on the local
 * clock (`Date.now()`) into one on the server's clock that is never later than
 * the local deadline, so a server that applies a check only before it never
 * applies one the limiter has already answered.
 *
 * Each round trip gives `server - receivedAt` as a lower bound of the offset
 * (the server read its clock at or before the reply arrived), `receivedAt` on
 * the monotonic clock (`performance.now()`): a local wall clock stepped (NTP)
 * moves no deadline, as a deadline is converted by the time left until it. The
 * tightest (highest) bound is kept: a reply read late, by a busy event loop,
 * gives a loose bound that would make every deadline early. A bound older than
 * `BOUND_TTL_MS` gives way to the next one (clocks drift by ppm; a server
 * clock stepped forward is followed at once, one stepped back within that
 * time).
 *
 * @module
 */

/** How long a bound is kept against looser ones (ms of the monotonic clock). */
export const BOUND_TTL_MS = 10_000;

/** The process's clocks the estimate reads (injected in tests). */
export interface ProcessClocks {
  /** The wall clock deadlines are given on (`Date.now()`). */
  wall(): number;
  /** The monotonic clock round trips are timed on (`performance.now()`). */
  monotonic(): number;
}

const PROCESS_CLOCKS: ProcessClocks = {
  wall: () => Date.now(),
  monotonic: () => performance.now(),
};

/** The offset estimate of one store. */
export interface ClockOffset {
  /** Whether a round trip has been observed (before that, `toServer` answers `undefined`). */
  readonly known: boolean;
  /** Records one round trip whose reply arrives now: the server's time (ms) read during it. */
  observe(serverMs: number): void;
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
 * clock.observe(Date.now() + 50); // the server read 50 ms ahead as its reply arrived
 * clock.toServer(Date.now() + 1_000); // about 1,050 ms after now, on the server's clock
 * ```
 */
export function createClockOffset(clocks: ProcessClocks = PROCESS_CLOCKS): ClockOffset {
  /** The server's clock minus the monotonic clock (a lower bound). */
  let offset: number | undefined;
  let keptAt = 0;
  return {
    get known() {
      return offset !== undefined;
    },
    observe(serverMs) {
      const receivedAt = clocks.monotonic();
      if (!Number.isFinite(serverMs) || !Number.isFinite(receivedAt)) return;
      const bound = serverMs - receivedAt;
      if (offset === undefined || bound >= offset || receivedAt - keptAt > BOUND_TTL_MS) {
        offset = bound;
        keptAt = receivedAt;
      }
    },
    toServer: (localMs) =>
      offset === undefined
        ? undefined
        : Math.floor(localMs - clocks.wall() + clocks.monotonic() + offset),
  };
}
