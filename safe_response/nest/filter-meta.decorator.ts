/**
 * `FilterMeta`: include `meta.filters`.
 *
 * @module
 */
import { SetMetadata } from "@nestjs/common";
import { FILTER_META_METADATA } from "./safe-response.constants.ts";

/**
 * Copies the result's `filters` (an object) into `meta.filters`, like
 * `SortMeta` does for `sort`.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { FilterMeta } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("items")
 * class ItemsController {
 *   @Get()
 *   @FilterMeta()
 *   list() {
 *     return { data: [], filters: { status: "active" } };
 *   }
 * }
 * ```
 */
export function FilterMeta(): MethodDecorator & ClassDecorator {
  return SetMetadata(FILTER_META_METADATA, true);
}
