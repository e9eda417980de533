/**
 * `Paginated` and `CursorPaginated`: pagination meta computed from the
 * handler's result.
 *
 * @module
 */
import { SetMetadata } from "@nestjs/common";
import type { PaginationOptions } from "../pagination.ts";
import { PAGINATION_METADATA } from "./safe-response.constants.ts";

/**
 * The stored pagination setting of a route.
 *
 * @example
 * ```ts
 * import type { PaginationSetting } from "@saferoute/api-kit/safe-response/nest";
 * const setting: PaginationSetting = { kind: "offset", maxLimit: 100, links: true };
 * ```
 */
export interface PaginationSetting {
  /** Offset or cursor pagination. */
  kind: "offset" | "cursor";
  /** Clamp of the reported page size. */
  maxLimit?: number;
  /** Whether links are added. */
  links: boolean;
}

function setting(
  kind: PaginationSetting["kind"],
  options: PaginationOptions,
  name: string,
): PaginationSetting {
  const { maxLimit, links = false } = options;
  if (maxLimit !== undefined && (!Number.isSafeInteger(maxLimit) || maxLimit < 1)) {
    throw new TypeError(`${name}: \`maxLimit\` must be a positive integer`);
  }
  if (typeof links !== "boolean") throw new TypeError(`${name}: \`links\` must be a boolean`);
  const result: PaginationSetting = { kind, links };
  if (maxLimit !== undefined) result.maxLimit = maxLimit;
  return result;
}

/**
 * Offset pagination: the handler returns a `PaginatedResult`
 * (`{ data, total, page, limit }`); `data` becomes the envelope's `data` and
 * `meta.pagination` is computed. `maxLimit` clamps the reported `limit`
 * (handlers clamp their own queries); `links` (default `false`) adds relative
 * links.
 *
 * @example
 * ```ts
 * import { Controller, Get, Query } from "@nestjs/common";
 * import { Paginated } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("items")
 * class ItemsController {
 *   @Get()
 *   @Paginated({ maxLimit: 100, links: true })
 *   list(@Query("page") page = "1", @Query("limit") limit = "20") {
 *     const size = Math.min(Number(limit), 100);
 *     return { data: [], total: 0, page: Number(page), limit: size };
 *   }
 * }
 * ```
 */
export function Paginated(options: PaginationOptions = {}): MethodDecorator & ClassDecorator {
  return SetMetadata(PAGINATION_METADATA, setting("offset", options, "Paginated"));
}

/**
 * Cursor pagination: the handler returns a `CursorPaginatedResult`
 * (`{ data, nextCursor, hasMore, limit }`, optional `previousCursor`,
 * `totalCount`). Links use the `cursor` query parameter.
 *
 * @example
 * ```ts
 * import { Controller, Get } from "@nestjs/common";
 * import { CursorPaginated } from "@saferoute/api-kit/safe-response/nest";
 *
 * @Controller("feed")
 * class FeedController {
 *   @Get()
 *   @CursorPaginated({ links: true })
 *   list() {
 *     return { data: ["a", "b"], nextCursor: "b", hasMore: true, limit: 2 };
 *   }
 * }
 * ```
 */
export function CursorPaginated(options: PaginationOptions = {}): MethodDecorator & ClassDecorator {
  return SetMetadata(PAGINATION_METADATA, setting("cursor", options, "CursorPaginated"));
}
