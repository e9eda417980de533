/**
 * `/api/feed`: a cursor-paginated activity feed, newest first.
 *
 * @module
 */
import { Controller, Get, UseGuards } from "@nestjs/common";
import { ApiOperation, ApiProperty, ApiSecurity, ApiTags } from "@nestjs/swagger";
import { ApiKeysGuard, RequireScope } from "../../api_keys/nest/mod.ts";
import type { CursorPaginatedResult, CursorPaginationQuery } from "../../safe_response/mod.ts";
import { CursorPaginated, PaginationQuery } from "../../safe_response/nest/mod.ts";
import { ApiCursorPaginatedSafeResponse } from "../../safe_response/openapi/mod.ts";
import { ApiKeyThrottlerGuard } from "../api_key_throttler.guard.ts";
import { ValidQuery } from "../validation.ts";
import { FeedQuery } from "./feed.query.ts";
import { FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, feedPage } from "./feed.ts";

/** One feed entry. */
export class FeedEvent {
  /** Id, `evt_NNN`. */
  @ApiProperty({ example: "evt_037" })
  id!: string;
  /** What happened. */
  @ApiProperty({ enum: ["project.created", "project.renamed", "project.archived"] })
  type!: "project.created" | "project.renamed" | "project.archived";
  /** Project concerned. */
  @ApiProperty({ example: "prj_038" })
  projectId!: string;
  /** When (ISO 8601). */
  @ApiProperty({ type: String, format: "date-time" })
  at!: string;
}

/** The activity feed. */
@ApiTags("feed")
@ApiSecurity("api-key")
@Controller("api/feed")
@UseGuards(ApiKeysGuard, ApiKeyThrottlerGuard)
export class FeedController {
  /**
   * A page of the feed; needs `feed:read`. `cursor` and `limit` come parsed
   * and clamped from `PaginationQuery()`.
   */
  @Get()
  @ApiOperation({ summary: "Activity feed, cursor-paginated (limit ≤ 20)" })
  @ApiCursorPaginatedSafeResponse(FeedEvent, { description: "A page of the feed" })
  @RequireScope("feed", "read")
  @CursorPaginated({ maxLimit: FEED_MAX_LIMIT, defaultLimit: FEED_DEFAULT_LIMIT, links: true })
  list(
    @ValidQuery(FeedQuery) _query: FeedQuery,
    @PaginationQuery() { cursor, limit = FEED_DEFAULT_LIMIT }: CursorPaginationQuery,
  ): CursorPaginatedResult<FeedEvent> {
    return feedPage({ cursor, limit });
  }
}
