/**
 * `/api/feed`: a cursor-paginated activity feed, newest first.
 *
 * @module
 */
import { BadRequestException, Controller, Get, UseGuards } from "@nestjs/common";
import { ApiOperation, ApiProperty, ApiSecurity, ApiTags } from "@nestjs/swagger";
import { ApiKeysGuard, RequireScope } from "../../api_keys/nest/mod.ts";
import type { CursorPaginatedResult, CursorPaginationQuery } from "../../safe_response/mod.ts";
import { CursorPaginated, PaginationQuery } from "../../safe_response/nest/mod.ts";
import { ApiCursorPaginatedSafeResponse } from "../../safe_response/openapi/mod.ts";
import { ApiKeyThrottlerGuard } from "../api-key-throttler.guard.ts";
import { ValidQuery } from "../validation.ts";
import { FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, FeedQuery } from "./feed.query.ts";

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

/** Entries in the feed. */
export const FEED_SIZE = 37;

const TYPES: FeedEvent["type"][] = ["project.created", "project.renamed", "project.archived"];
const EVENTS: readonly FeedEvent[] = Array.from({ length: FEED_SIZE }, (_, i) => {
  const n = FEED_SIZE - i; // newest first
  return {
    id: `evt_${String(n).padStart(3, "0")}`,
    type: TYPES[n % TYPES.length],
    projectId: `prj_${String((n % 42) + 1).padStart(3, "0")}`,
    at: new Date(Date.UTC(2025, 5, 1) + n * 3_600_000).toISOString(),
  };
});

/** Opaque cursor of an offset (base64url of its decimal form). */
function encodeCursor(offset: number): string {
  return btoa(String(offset)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
}

function decodeCursor(cursor: string): number {
  let offset = NaN;
  try {
    const text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    if (/^\d{1,6}$/.test(text)) offset = Number(text);
  } catch {
    // not base64: rejected below
  }
  if (!(offset >= 0 && offset < FEED_SIZE)) {
    throw new BadRequestException({
      code: "INVALID_CURSOR",
      message: "cursor must be a nextCursor or previousCursor returned by the feed",
    });
  }
  return offset;
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
    const offset = cursor === undefined ? 0 : decodeCursor(cursor);
    const end = offset + limit;
    return {
      data: EVENTS.slice(offset, end),
      nextCursor: end < FEED_SIZE ? encodeCursor(end) : null,
      previousCursor: offset > 0 ? encodeCursor(Math.max(0, offset - limit)) : null,
      hasMore: end < FEED_SIZE,
      limit,
      totalCount: FEED_SIZE,
    };
  }
}
