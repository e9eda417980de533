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

/** Adds the counts of `from` to `into`. */
export function addCounts(into: ApiKeyUsageCounts, from: ApiKeyUsageCounts): void {
  into.accepted += from.accepted;
  into.cost += from.cost;
  for (const code of API_KEY_USAGE_REFUSALS) into.refused[code] += from.refused[code];
}
