/**
 * Rate limits (`@saferoute/api-kit/rate-limits`): named policies and credit
 * balances checked all or nothing against a store; no interval of a policy's
 * window admits more than its limit (a sliding window of sub-buckets, see
 * docs/rate-limits.md). The in-memory store is here; the PostgreSQL and Redis
 * stores are `./rate-limits/postgres` and `./rate-limits/redis`. Also the
 * `@nestjs/throttler` storage over any store. Imports nothing.
 *
 * @example
 * ```ts
 * import { createRateLimiter } from "@saferoute/api-kit/rate-limits";
 *
 * const limiter = createRateLimiter({ onStoreError: "open" }); // timeoutMs 1,000
 * await limiter.ready(); // once, at start-up
 * const result = await limiter.check("key_1", [
 *   { name: "burst", limit: 10, windowMs: 1_000 },
 *   { name: "hourly", limit: 1_000, windowMs: 3_600_000 },
 * ], { cost: 1 });
 * console.log(result.allowed, result.policies.map((p) => `${p.name}: ${p.remaining}`));
 * ```
 *
 * @module
 */
export {
  compileCreditChange,
  compileCreditRefill,
  compileCredits,
  type Credits,
  MAX_CREDITS,
  sameCreditRefill,
  settleCredits,
} from "./credits.ts";
export {
  createRateLimiter,
  type OnStoreError,
  type RateLimitBalance,
  type RateLimitCheckOptions,
  type RateLimitCredits,
  type RateLimiter,
  type RateLimiterMetric,
  type RateLimiterOptions,
  type RateLimitLatencyMetric,
  type RateLimitMetric,
  type RateLimitPolicyResult,
  type RateLimitResult,
} from "./limiter.ts";
export {
  createMemoryRateLimitStore,
  type MemoryRateLimitStore,
  type MemoryRateLimitStoreOptions,
} from "./memory_store.ts";
export {
  type CompiledRateLimitPolicy,
  compileRateLimitPolicies,
  MAX_RATE_LIMIT_POLICIES,
  type RateLimitPolicy,
} from "./policy.ts";
export {
  type CounterResult,
  type CreditBalance,
  type CreditChange,
  type CreditChangeResult,
  type CreditCounter,
  type CreditRefill,
  MAX_SUBJECT_LENGTH,
  type RateLimitCounter,
  type RateLimitStore,
  type StoreBatchAnswer,
  type StoreCheck,
  type WindowCounter,
} from "./store.ts";
export {
  apiKeyThrottlerTracker,
  createThrottlerStorage,
  type ThrottlerConfig,
  type ThrottlerStorageLike,
  type ThrottlerStorageOptions,
  type ThrottlerStorageRecord,
} from "./throttler.ts";
