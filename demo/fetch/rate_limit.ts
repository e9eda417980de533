/**
 * The Fetch demo's rate limit: a fixed window per API key and route, as the
 * Nest demo's `@nestjs/throttler` does. It sets the same headers on the
 * handler's response (`X-RateLimit-Limit`, `-Remaining`, `-Reset`, and
 * `Retry-After` on a 429), which `./safe-response/fetch` mirrors into
 * `meta.rateLimit`.
 *
 * @module
 */
import type { SafeContext } from "../../safe_response/fetch/mod.ts";
import { DemoHttpError } from "../http_error.ts";
import { RATE_LIMIT_MESSAGE, RATE_LIMIT_WINDOW_MS } from "../limits.ts";

/** Counts requests per key and route in fixed windows. */
export class RateLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();

  /**
   * Counts one request of `tracker` against `limit`, sets the headers on
   * `context`, and throws the 429 when the window is used up.
   */
  hit(tracker: string, limit: number, context: SafeContext, now = Date.now()): void {
    let window = this.#windows.get(tracker);
    if (window === undefined || now - window.start >= RATE_LIMIT_WINDOW_MS) {
      window = { start: now, count: 0 };
      this.#windows.set(tracker, window);
    }
    window.count++;
    const reset = Math.ceil((window.start + RATE_LIMIT_WINDOW_MS - now) / 1000);
    context.headers.set("X-RateLimit-Limit", String(limit));
    context.headers.set("X-RateLimit-Remaining", String(Math.max(0, limit - window.count)));
    context.headers.set("X-RateLimit-Reset", String(reset));
    if (window.count > limit) {
      context.headers.set("Retry-After", String(reset));
      throw new DemoHttpError(429, { code: "TOO_MANY_REQUESTS", message: RATE_LIMIT_MESSAGE });
    }
  }
}
