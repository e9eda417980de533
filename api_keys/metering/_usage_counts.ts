/**
 * Usage counts of nothing and their sum: pure helpers of the usage recorder
 * and of the in-memory storage's usage, apart from the recorder so that the
 * storage does not load it.
 *
 * @module
 */
import { API_KEY_USAGE_REFUSALS, type ApiKeyUsageCounts } from "./usage.ts";

/** Counts of nothing. */
export function zeroCounts(): ApiKeyUsageCounts {
  const refused = Object.fromEntries(API_KEY_USAGE_REFUSALS.map((code) => [code, 0]));
  return { accepted: 0, refused: refused as ApiKeyUsageCounts["refused"], cost: 0 };
}

/**
 * The largest usage count, 2^53 − 1: a sum past it stays there (a total that a
 * number, and so every read, still holds exactly; `cost` reaches it first, at
 * about nine requests of the largest cost in one hour).
 */
export const MAX_USAGE_COUNT = Number.MAX_SAFE_INTEGER;

/** `a + b`, at most {@link MAX_USAGE_COUNT}. */
export function plus(a: number, b: number): number {
  return Math.min(MAX_USAGE_COUNT, a + b);
}

/** Adds the counts of `from` to `into` (each at most {@link MAX_USAGE_COUNT}). */
export function addCounts(into: ApiKeyUsageCounts, from: ApiKeyUsageCounts): void {
  into.accepted = plus(into.accepted, from.accepted);
  into.cost = plus(into.cost, from.cost);
  for (const code of API_KEY_USAGE_REFUSALS) {
    into.refused[code] = plus(into.refused[code], from.refused[code]);
  }
}
