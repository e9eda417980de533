/**
 * `@nestjs/throttler` over a rate-limit store, typed structurally (this file
 * imports nothing from Nest): a `ThrottlerStorage` that counts in the store, so
 * every instance of a fleet shares one count, and a tracker by API key id.
 *
 * @module
 */
import { compileRateLimitPolicies } from "./policy.ts";
import type { RateLimitStore, WindowCounter } from "./store.ts";

/** What `ThrottlerStorage.increment` returns (throttler 5 and 6; 4 reads the first two). */
export interface ThrottlerStorageRecord {
  /** Hits counted in the window (limit + 1 when this one was refused). */
  totalHits: number;
  /** Seconds until the window's oldest counted hit expires. */
  timeToExpire: number;
  /** Whether this hit is refused. */
  isBlocked: boolean;
  /** Seconds until a refused tracker may try again (0 when not blocked). */
  timeToBlockExpire: number;
}

/**
 * `@nestjs/throttler`'s `ThrottlerStorage`: 6 and 5 call
 * `increment(key, ttlMs, limit, blockDurationMs, throttlerName)`, 4 calls
 * `increment(key, ttlSeconds)` and compares the hits with its limit itself.
 */
export interface ThrottlerStorageLike {
  /** Counts one hit of `key`. */
  increment(
    key: string,
    ttl: number,
    limit?: number,
    blockDuration?: number,
    throttlerName?: string,
  ): Promise<ThrottlerStorageRecord>;
}

/** The policy name for a throttler name: lowercased, other characters as `_`, at most 58. */
function policyName(throttlerName: string): string {
  const name = throttlerName.toLowerCase().slice(0, 58).replace(/[^a-z0-9_\-.*]/g, "_");
  return /^[a-z*]/.test(name) ? name : `t.${name}`.slice(0, 58);
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/**
 * A `ThrottlerStorage` over `store`: a throttler's hits are a sliding window of
 * `ttl` in the store (exact across instances on PostgreSQL or Redis), one store
 * call per hit. A refused hit is not counted. With a `blockDuration` longer
 * than `ttl`, a refusal also blocks the tracker for `blockDuration` (a second
 * store call, on refusals only); hits during a block are refused.
 *
 * @example
 * ```ts
 * import { createMemoryRateLimitStore } from "./memory_store.ts";
 * import { createThrottlerStorage } from "./throttler.ts";
 * const storage = createThrottlerStorage(createMemoryRateLimitStore());
 * // ThrottlerModule.forRoot({ throttlers: [{ ttl: 60_000, limit: 10 }], storage })
 * const record = await storage.increment("tracker", 60_000, 10, 60_000, "default");
 * record.totalHits; // 1
 * ```
 */
export function createThrottlerStorage(store: RateLimitStore): ThrottlerStorageLike {
  return {
    async increment(key, ttl, limit, blockDuration, throttlerName = "default") {
      const legacy = limit === undefined; // throttler 4: ttl in seconds, no limit
      const windowMs = legacy ? ttl * 1000 : ttl;
      const max = legacy ? Number.MAX_SAFE_INTEGER : limit;
      const name = policyName(throttlerName);
      const [policy] = compileRateLimitPolicies([{ name, limit: max, windowMs }]);
      const subject = key.slice(0, 512);
      const hit: WindowCounter = { kind: "window", subject, ...policy, cost: 1 };
      const blocks = !legacy && blockDuration !== undefined && blockDuration > windowMs;
      const block: WindowCounter = {
        kind: "window",
        subject,
        name: `${name}.block`,
        limit: 1,
        windowMs: blocks ? blockDuration : 1,
        cost: 0,
      };
      const [counted, blocked] = await store.check(blocks ? [hit, block] : [hit]);
      const timeToExpire = seconds(counted.resetMs);
      if (blocked !== undefined && blocked.remaining === 0) {
        return {
          totalHits: max + 1,
          timeToExpire,
          isBlocked: true,
          timeToBlockExpire: seconds(blocked.resetMs),
        };
      }
      if (counted.allowed) {
        return {
          totalHits: max - counted.remaining,
          timeToExpire,
          isBlocked: false,
          timeToBlockExpire: 0,
        };
      }
      let wait = counted.resetMs;
      if (blocks) {
        const [started] = await store.check([{ ...block, cost: 1 }]);
        wait = started.allowed ? block.windowMs : started.resetMs;
      }
      return {
        totalHits: max + 1,
        timeToExpire,
        isBlocked: true,
        timeToBlockExpire: seconds(wait),
      };
    },
  };
}

/**
 * A throttler tracker: `key:<id>` for a request the API-key guard verified
 * (`request.apiKey.keyId`), else `ip:<client IP>` (`request.ip`). Synchronous,
 * so it serves throttler 5 and 6's `getTracker` option and throttler 4's
 * `getTracker(req)` override, which does not await.
 *
 * @example
 * ```ts
 * import { apiKeyThrottlerTracker } from "./throttler.ts";
 * // ThrottlerModule.forRoot({ throttlers: [...], getTracker: apiKeyThrottlerTracker })
 * apiKeyThrottlerTracker({ apiKey: { keyId: "0190" } }); // "key:0190"
 * ```
 */
export function apiKeyThrottlerTracker(request: Record<string, unknown>): string {
  const context = request.apiKey as { keyId?: unknown } | undefined;
  if (typeof context?.keyId === "string" && context.keyId !== "") return `key:${context.keyId}`;
  const socket = request.socket as { remoteAddress?: unknown } | undefined;
  const ip = typeof request.ip === "string" ? request.ip : socket?.remoteAddress;
  return `ip:${typeof ip === "string" ? ip : "unknown"}`;
}
