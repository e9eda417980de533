/**
 * Query of `GET /api/feed`: an opaque cursor and a page size.
 *
 * @module
 */
import { ApiPropertyOptional } from "@nestjs/swagger";
import { Allow, IsOptional, IsString, Matches } from "class-validator";

/**
 * The feed's own rule for `cursor` (one it issued); `cursor` and `limit` are
 * parsed, clamped and documented by `CursorPaginated` and read with
 * `PaginationQuery()`.
 */
export class FeedQuery {
  /** `nextCursor` or `previousCursor` of an earlier page; omitted = newest. */
  @ApiPropertyOptional({ example: "MTA" })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,16}$/, { message: "cursor must be a cursor returned by the feed" })
  cursor?: string;

  /** Read by `PaginationQuery()`. */
  @Allow()
  limit?: unknown;
}
