/**
 * The demo's rate limits, per API key: the same numbers for the Nest server
 * (`@nestjs/throttler`) and the Fetch one (`demo/fetch/rate_limit.ts`).
 *
 * @module
 */

/** Requests a key may make per window on routes without their own limit. */
export const DEFAULT_RATE_LIMIT = 100;

/** Requests per window and key on `/api/ping`. */
export const PING_LIMIT = 3;

/** The window, in milliseconds. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/** The message of the 429. */
export const RATE_LIMIT_MESSAGE =
  "Too many requests for this API key: wait for the window to reset";
