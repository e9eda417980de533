/**
 * Shape checks of the `sort` and `filters` fields a handler returns.
 *
 * @module
 */
import type { SortInfo } from "../client/types.ts";

/**
 * Whether `value` is a {@link SortInfo} (`field` string, `order` `asc`/`desc`).
 * @example
 * ```ts
 * import { isSortInfo } from "@saferoute/api-kit/safe-response";
 * isSortInfo({ field: "name", order: "asc" }); // true
 * isSortInfo({ field: "name", order: "up" }); // false
 * ```
 */
export function isSortInfo(value: unknown): value is SortInfo {
  if (typeof value !== "object" || value === null) return false;
  const { field, order } = value as Record<string, unknown>;
  return typeof field === "string" && (order === "asc" || order === "desc");
}

/** Whether `value` is a filter map (a non-array object). */
export function isFilterMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
