/**
 * `SortMeta`: include `meta.sort`.
 *
 * @module
 */
import { SetMetadata } from "@nestjs/common";
import { SORT_META_METADATA } from "./safe-response.constants.ts";

/**
 * Copies the result's `sort` (`{ field, order }`) into `meta.sort`. On a
 * paginated route `sort` sits next to `data`; on other routes the handler
 * returns `{ data, sort }` and `data` becomes the envelope's `data`. A
 * missing or malformed `sort` logs one warning per route.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { Paginated, SortMeta } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("items")
 * class ItemsController {
 *   @Get()
 *   @Paginated()
 *   @SortMeta()
 *   list() {
 *     return { data: [], total: 0, page: 1, limit: 10, sort: { field: "name", order: "asc" } };
 *   }
 * }
 * ```
 */
export function SortMeta(): MethodDecorator & ClassDecorator {
  return SetMetadata(SORT_META_METADATA, true);
}
