/**
 * The demo's rate limits, per API key: the policies stored with the keys, and
 * the same throttling numbers for the Nest server (`@nestjs/throttler`) and
 * the Fetch one (`demo/fetch/rate_limit.ts`).
 *
 * @module
 */
import { createRateLimiter, type RateLimiter } from "../rate_limits/mod.ts";

/** Requests a key may make per window on routes without their own limit. */
export const DEFAULT_RATE_LIMIT = 100;

/** Requests per window and key on `/api/ping`. */
export const PING_LIMIT = 3;

/** The window, in milliseconds. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/** The policy of every demo key, counted by the library's limiter in the key check. */
export const DEMO_KEY_POLICY = { name: "demo", limit: 1_000, windowMs: RATE_LIMIT_WINDOW_MS };

/** The policy of the `limited` demo key: two requests a minute, so the tour meets its 429. */
export const LIMITED_KEY_POLICY = { name: "tiny", limit: 2, windowMs: RATE_LIMIT_WINDOW_MS };

/** The credits of the `trial` demo key: no refill, so the tour spends them all and meets its 429. */
export const TRIAL_KEY_CREDITS = 20;

/** The limiter of a demo's key service: in memory (one process); its start-up line goes to `log`. */
export function createDemoKeyLimiter(log: (line: string) => void = () => {}): RateLimiter {
  return createRateLimiter({ logger: log });
}

/** The message of the 429. */
export const RATE_LIMIT_MESSAGE =
  "Too many requests for this API key: wait for the window to reset";
