/**
 * Reading rate-limit response headers (as `@nestjs/throttler` sets them) into
 * `meta.rateLimit`.
 *
 * @module
 */
import type { RateLimitMeta } from "../client/types.ts";

/**
 * Default header prefix: `X-RateLimit-Limit`, `X-RateLimit-Remaining`,
 * `X-RateLimit-Reset`.
 *
 * @example
 * ```ts
 * import { DEFAULT_RATE_LIMIT_HEADER_PREFIX } from "@saferoute/api-kit/safe-response";
 * DEFAULT_RATE_LIMIT_HEADER_PREFIX; // "X-RateLimit"
 * ```
 */
export const DEFAULT_RATE_LIMIT_HEADER_PREFIX = "X-RateLimit";

/**
 * Reads one response header by name (a string, a number, a list or nothing).
 *
 * @example
 * ```ts
 * import type { HeaderReader } from "@saferoute/api-kit/safe-response";
 * const headers = new Headers({ "X-RateLimit-Limit": "10" });
 * const read: HeaderReader = (name) => headers.get(name) ?? undefined;
 * ```
 */
export type HeaderReader = (name: string) => unknown;

function toCount(value: unknown): number | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first === "number") return Number.isFinite(first) && first >= 0 ? first : undefined;
  if (typeof first !== "string" || !/^\s*\d+\s*$/.test(first)) return undefined;
  return Number(first);
}

/**
 * Seconds to wait from a `Retry-After` value: delay-seconds, or an HTTP-date
 * converted against `now` (never negative).
 *
 * @example
 * ```ts
 * import { parseRetryAfter } from "@saferoute/api-kit/safe-response";
 * parseRetryAfter("120"); // 120
 * parseRetryAfter("Thu, 01 Jan 1970 00:01:00 GMT", 0); // 60
 * ```
 */
export function parseRetryAfter(value: unknown, now: number = Date.now()): number | undefined {
  const seconds = toCount(value);
  if (seconds !== undefined) return seconds;
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first !== "string") return undefined;
  const at = Date.parse(first);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * Mirrors `{prefix}-Limit`, `{prefix}-Remaining`, `{prefix}-Reset` and
 * `Retry-After` into a {@link RateLimitMeta}, or `undefined` when none is
 * set. On a throttled response that carries only `Retry-After` (as
 * `@nestjs/throttler` sends it), `remaining` is 0, `reset` is `retryAfter`
 * and `limit` is 0 (unknown).
 *
 * @example
 * ```ts
 * import { parseRateLimitHeaders } from "@saferoute/api-kit/safe-response";
 * const headers = new Headers({
 *   "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "9", "X-RateLimit-Reset": "60",
 * });
 * parseRateLimitHeaders((name) => headers.get(name) ?? undefined);
 * // { limit: 10, remaining: 9, reset: 60 }
 * ```
 */
export function parseRateLimitHeaders(
  read: HeaderReader,
  prefix: string = DEFAULT_RATE_LIMIT_HEADER_PREFIX,
  now: number = Date.now(),
): RateLimitMeta | undefined {
  const limit = toCount(read(`${prefix}-Limit`));
  const remaining = toCount(read(`${prefix}-Remaining`));
  const reset = toCount(read(`${prefix}-Reset`));
  const retryAfter = parseRetryAfter(read("Retry-After"), now);
  if (
    limit === undefined && remaining === undefined && reset === undefined &&
    retryAfter === undefined
  ) {
    return undefined;
  }
  const meta: RateLimitMeta = {
    limit: limit ?? 0,
    remaining: remaining ?? 0,
    reset: reset ?? retryAfter ?? 0,
  };
  if (retryAfter !== undefined) meta.retryAfter = retryAfter;
  return meta;
}
