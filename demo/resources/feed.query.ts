/**
 * Query of `GET /api/feed`: an opaque cursor and a page size.
 *
 * @module
 */
import { ApiPropertyOptional } from "@nestjs/swagger";
import { Type } from "class-transformer";
import { IsInt, IsOptional, IsString, Matches, Min } from "class-validator";

export { FEED_MAX_LIMIT } from "./feed.ts";

/** Cursor and size of a feed page. */
export class FeedQuery {
  /** `nextCursor` or `previousCursor` of an earlier page; omitted = newest. */
  @ApiPropertyOptional({ example: "MTA" })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,16}$/, { message: "cursor must be a cursor returned by the feed" })
  cursor?: string;

  /** Page size (default 5; values above 20 are clamped to 20). */
  @ApiPropertyOptional({ minimum: 1, default: 5, description: "clamped to 20" })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  limit?: number;
}
