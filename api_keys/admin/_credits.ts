/**
 * Credits in the admin routes' answers: a key's balance in its `KeyView`
 * (its own, or its tenant's pool when it spends only that), the tenant's pool
 * in `KeyList.tenantCredits`, and whether a caller's key spends any balance
 * (then a key it mints spends the same ones: no separate balance).
 *
 * @module
 */
import type { ApiKeySummary, ApiKeySummaryCredits } from "../types.ts";
import type { KeyList, KeyView } from "./types.ts";

const iso = (date: Date | null): string | null => date === null ? null : date.toISOString();

/**
 * The credit fields of a key's `KeyView`: its own balance, else the tenant's
 * pool it spends (`creditsSharedBy: "tenant"`); none without credits.
 *
 * @example
 * ```ts
 * import { creditsView } from "./_credits.ts";
 * creditsView({ tenantCredits: { remaining: 5, nextRefillAt: null } }).creditsSharedBy; // "tenant"
 * ```
 */
export function creditsView(
  summary: Pick<ApiKeySummary, "credits" | "tenantCredits">,
): Pick<KeyView, "credits" | "creditsNextRefillAt" | "creditsRefillAmount" | "creditsSharedBy"> {
  const balance = summary.credits ?? summary.tenantCredits;
  if (balance === undefined) return {};
  return {
    credits: balance.remaining,
    creditsNextRefillAt: iso(balance.nextRefillAt),
    creditsRefillAmount: balance.refill?.amount ?? null,
    ...(summary.credits === undefined ? { creditsSharedBy: "tenant" as const } : {}),
  };
}

/**
 * `KeyList.tenantCredits` of the tenant's pool (`null` when its keys spend none).
 *
 * @example
 * ```ts
 * import { tenantCreditsView } from "./_credits.ts";
 * tenantCreditsView({ remaining: 5, nextRefillAt: null }); // { credits: 5, nextRefillAt: null, refillAmount: null }
 * ```
 */
export function tenantCreditsView(
  pool: ApiKeySummaryCredits | null,
): NonNullable<KeyList["tenantCredits"]> | null {
  return pool === null ? null : {
    credits: pool.remaining,
    nextRefillAt: iso(pool.nextRefillAt),
    refillAmount: pool.refill?.amount ?? null,
  };
}

/**
 * Whether a caller's key spends a balance (its own or the tenant's pool): a
 * key it mints then spends the same ones, never a separate one.
 *
 * @example
 * ```ts
 * import { spendsCredits } from "./_credits.ts";
 * spendsCredits({}); // false
 * ```
 */
export function spendsCredits(summary: Pick<ApiKeySummary, "credits" | "tenantCredits">): boolean {
  return summary.credits !== undefined || summary.tenantCredits !== undefined;
}
