/**
 * A key of an `ApiKeysService` (memory records, the given rate-limit store)
 * spending its own balance and its tenant's shared pool, for the processes of
 * the exactness tests (tests/limits/fire.ts, tests/limits/cluster_fire.ts):
 * each process has its own key of one tenant; the pool is one balance in the
 * shared store.
 */
import { ApiKeyError, ApiKeysService, InMemoryApiKeyStorage } from "../../api_keys/mod.ts";
import { createRateLimiter } from "../../rate_limits/limiter.ts";
import type { RateLimitStore } from "../../rate_limits/store.ts";

/** One `authorize`'s answer, shaped as fire.ts prints limiter answers. */
export interface PooledAnswer {
  allowed: boolean;
  unavailable: boolean;
  credits?: { remaining: number };
  policies: never[];
  /** `[own, pool]`: the refusing balance's answer (`allowed: false`), else absent. */
  balances: ({ allowed: boolean } | undefined)[];
}

/** A key of `tenantId` with `own` credits and the tenant's pool (`pool` starts it). */
export async function pooledKey(
  store: RateLimitStore,
  tenantId: string,
  own: number,
  pool: number,
): Promise<{ spend(): Promise<PooledAnswer>; ownLeft(): Promise<number | undefined> }> {
  const service = new ApiKeysService({
    peppers: { 1: "exactness-pepper-of-at-least-thirty-two-bytes" },
    storage: new InMemoryApiKeyStorage(),
    cache: { ttlMs: 60_000 },
    limiter: createRateLimiter({ store, timeoutMs: 30_000, logger: () => {} }),
  });
  const { key } = await service.create({
    tenantId,
    name: "pooled",
    scopes: [{ resource: "orders", level: "read" }],
    credits: { remaining: own, pool: { remaining: pool } },
  });
  await service.authorize(key, { cost: 0 }); // warms the verification cache
  return {
    async spend() {
      try {
        const context = await service.authorize(key);
        return {
          allowed: true,
          unavailable: false,
          credits: context.tenantCreditResult,
          policies: [],
          balances: [],
        };
      } catch (error) {
        if (!(error instanceof ApiKeyError)) throw error;
        if (error.code !== "api_key_usage_exceeded") {
          return { allowed: false, unavailable: true, policies: [], balances: [] };
        }
        const refused = { allowed: false };
        return {
          allowed: false,
          unavailable: false,
          credits: error.creditResult,
          policies: [],
          balances: error.creditBalance === "key"
            ? [refused, undefined]
            : error.creditBalance === "tenant"
            ? [undefined, refused]
            : [],
        };
      }
    },
    async ownLeft() {
      const [summary] = await service.listSummaries(tenantId);
      return summary.credits?.remaining;
    },
  };
}
