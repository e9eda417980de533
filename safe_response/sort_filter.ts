/**
 * Shape checks of the `sort` and `filters` fields a handler returns: only what JSON sends as the
 * object it is and the client's `hasSort`/`hasFilters` accept.
 *
 * @module
 */
import type { SortInfo } from "../client/types.ts";
import { isSortInfo as isSentSortInfo } from "../client/meta.ts";
import { isPlainObject } from "./_plain_object.ts";

/**
 * Whether JSON sends `value` as the object it is: a plain object (no array, class instance, `Date`,
 * `Map`) without `toJSON`. Never throws.
 */
function isSentAsIs(value: unknown): value is Record<string, unknown> {
  try {
    return isPlainObject(value) && typeof value.toJSON !== "function";
  } catch {
    return false; // a getter that throws
  }
}

/**
 * Whether `value` is a {@link SortInfo} (`field` string, `order` `asc`/`desc`) in a plain object.
 * @example
 * ```ts
 * import { isSortInfo } from "@saferoute/api-kit/safe-response";
 * isSortInfo({ field: "name", order: "asc" }); // true
 * isSortInfo({ field: "name", order: "up" }); // false
 * ```
 */
export function isSortInfo(value: unknown): value is SortInfo {
  return isSentAsIs(value) && isSentSortInfo(value);
}

/** Whether `value` is a filter map: a plain object. */
export function isFilterMap(value: unknown): value is Record<string, unknown> {
  return isSentAsIs(value);
}
