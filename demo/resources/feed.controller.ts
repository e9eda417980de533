/**
 * `/api/feed`: a cursor-paginated activity feed, newest first.
 *
 * @module
 */
import { Controller, Get, UseGuards } from "@nestjs/common";
import { ApiOperation, ApiProperty, ApiSecurity, ApiTags } from "@nestjs/swagger";
import { ApiKeysGuard, RequireScope } from "../../api_keys/nest/mod.ts";
import type { CursorPaginatedResult } from "../../safe_response/mod.ts";
import { CursorPaginated } from "../../safe_response/nest/mod.ts";
import { ApiCursorPaginatedSafeResponse } from "../../safe_response/openapi/mod.ts";
import { ApiKeyThrottlerGuard } from "../api-key-throttler.guard.ts";
import { ValidQuery } from "../validation.ts";
import { FEED_MAX_LIMIT, feedPage } from "./feed.ts";
import { FeedQuery } from "./feed.query.ts";

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
  /** A page of the feed; needs `feed:read`. */
  @Get()
  @ApiOperation({ summary: "Activity feed, cursor-paginated (limit ≤ 20)" })
  @ApiCursorPaginatedSafeResponse(FeedEvent, { description: "A page of the feed" })
  @RequireScope("feed", "read")
  @CursorPaginated({ maxLimit: FEED_MAX_LIMIT, links: true })
  list(@ValidQuery(FeedQuery) query: FeedQuery): CursorPaginatedResult<FeedEvent> {
    return feedPage(query);
  }
}
