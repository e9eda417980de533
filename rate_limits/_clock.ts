/**
 * A remote store's clock seen from this process: turns a deadline on the local
 * clock (`Date.now()`) into one on the server's clock that is not later than
 * the local deadline, so a server that applies a check only before it never
 * applies one the limiter has already answered.
 *
 * Each round trip, sent at `sentAt` and read at `receivedAt` on the monotonic
 * clock (`performance.now()`: a local wall clock stepped (NTP) moves no
 * deadline, as a deadline is converted by the time left until it), bounds the
 * offset: the server read its clock between the two, so the offset is at least
 * `server - receivedAt` and at most `server - sentAt` (plus the part of a ms its
 * reading lost to the floor). The tightest (highest)
 * lower bound is kept: a reply read late, by a busy event loop, gives a loose
 * bound that would make every deadline early. A kept bound above a round
 * trip's upper bound (the server's clock stepped back) gives way to that
 * round trip's at once; one older than `BOUND_TTL_MS` gives way to the next
 * one (clocks drift by ppm). A step back smaller than a round trip's bounds
 * allow can go unseen: deadlines are then late by less than that round trip.
 * A server clock stepped forward is followed at once (a higher lower bound).
 *
 * @module
 */

/** How long a bound is kept against looser ones (ms of the monotonic clock). */
export const BOUND_TTL_MS = 10_000;

/**
 * How far a server's reading may lag its instant: the stores answer it in whole ms, floored, so a
 * round trip's upper bound (`server - sentAt`) may sit up to this under the true offset.
 */
const READING_MS = 1;

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
  /** The monotonic clock (ms), read once as a call is sent: its `sentAt`. */
  now(): number;
  /** Records one round trip sent at `sentAt` (`now()`) whose reply arrives now: the server's time (ms) read during it. */
  observe(serverMs: number, sentAt: number): void;
  /**
   * `localMs` on the server's clock, for a call sent at `sentAt` (`now()`, read just before): not
   * later than the true instant unless the server's clock stepped back since the last round trip
   * (see the module); `undefined` until a round trip is seen.
   */
  toServer(localMs: number, sentAt: number): number | undefined;
}

/**
 * Creates an offset estimate.
 *
 * @example
 * ```ts
 * import { createClockOffset } from "./_clock.ts";
 * const clock = createClockOffset();
 * const sentAt = clock.now();
 * clock.observe(Date.now() + 50, sentAt); // the server read 50 ms ahead as its reply arrived
 * clock.toServer(Date.now() + 1_000, clock.now()); // about 1,050 ms after now, on the server's clock
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
    now: () => clocks.monotonic(),
    observe(serverMs, sentAt) {
      const receivedAt = clocks.monotonic();
      if (!Number.isFinite(serverMs - sentAt) || !Number.isFinite(receivedAt)) return;
      const bound = serverMs - receivedAt;
      if (
        offset === undefined || bound >= offset || serverMs + READING_MS - sentAt < offset ||
        receivedAt - keptAt > BOUND_TTL_MS
      ) {
        offset = bound;
        keptAt = receivedAt;
      }
    },
    toServer: (localMs, sentAt) =>
      offset === undefined ? undefined : Math.floor(localMs - clocks.wall() + sentAt + offset),
  };
}
