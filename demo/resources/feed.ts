/**
 * The activity feed both demo servers serve: 37 generated events, newest
 * first, paged by opaque cursors.
 *
 * @module
 */
import type { CursorPaginatedResult } from "../../safe_response/mod.ts";
import { DemoHttpError } from "../http_error.ts";

/** Largest feed page; larger `limit` values are clamped to it. */
export const FEED_MAX_LIMIT = 20;

/** Feed page size when the request gives none. */
export const FEED_DEFAULT_LIMIT = 5;

/** Entries in the feed. */
export const FEED_SIZE = 37;

/** One feed entry. */
export interface FeedEntry {
  /** Id, `evt_NNN`. */
  id: string;
  /** What happened. */
  type: "project.created" | "project.renamed" | "project.archived";
  /** Project concerned. */
  projectId: string;
  /** When (ISO 8601). */
  at: string;
}

const TYPES: FeedEntry["type"][] = ["project.created", "project.renamed", "project.archived"];
const EVENTS: readonly FeedEntry[] = Array.from({ length: FEED_SIZE }, (_, i) => {
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
    throw new DemoHttpError(400, {
      code: "INVALID_CURSOR",
      message: "cursor must be a nextCursor or previousCursor returned by the feed",
    });
  }
  return offset;
}

/**
 * The page after `cursor` (default: the newest), `limit` entries (default
 * 5, clamped to {@link FEED_MAX_LIMIT}). A cursor the feed never issued is a
 * 400 `INVALID_CURSOR`.
 */
export function feedPage(
  query: { cursor?: string; limit?: number },
): CursorPaginatedResult<FeedEntry> {
  const offset = query.cursor === undefined ? 0 : decodeCursor(query.cursor);
  const limit = Math.min(query.limit ?? FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT);
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
