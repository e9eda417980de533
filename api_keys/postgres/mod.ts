/**
 * The PostgreSQL change feed of the API-key component: every instance of a
 * fleet on one database learns within milliseconds that a key was created,
 * revoked, rotated, changed or deleted, by whichever instance, tool or SQL
 * session, so each can drop what its verification cache holds about it.
 * The only module of this package that imports `pg` (an optional peer).
 *
 * Needs the migrations `prisma/migrations/0002_api_key_change_feed` (a change
 * counter and triggers on `api_keys`) and `0005_api_key_change_log` (the log
 * the feed reads); see docs/operations.md, "Fleets: the change feed", for
 * what it guarantees and what it costs, and give it a direct (session)
 * connection, not one through a transaction pooler.
 *
 * @example
 * ```ts
 * import { createPostgresFeed } from "@saferoute/api-kit/api-keys/postgres";
 *
 * const feed = createPostgresFeed({ connectionString: "postgresql://app:secret@db:5432/app" });
 * feed.subscribe((notice) => {
 *   if (notice.kind === "reset") console.log("drop every cached key");
 *   else console.log(`drop ${notice.prefix} (${notice.kind})`);
 * });
 * console.log(feed.status().healthy);
 * await feed.close();
 * ```
 *
 * @module
 */
import {
  type PostgresApiKeyChangeFeed,
  PostgresChangeFeed,
  type PostgresFeedOptions,
} from "./_feed.ts";

export type { PostgresApiKeyChangeFeed, PostgresFeedClient, PostgresFeedOptions } from "./_feed.ts";

/**
 * Creates a change feed over one dedicated PostgreSQL connection and starts
 * connecting (it never throws for an unreachable database: it stays
 * unhealthy and retries). The connection `LISTEN`s on `channel`, checks the
 * change log and that the triggers notify it, probes whether its notices
 * arrive (`status().noticesArrive`, one warning when not), and reads the log
 * every `pollMs` and at once after a notice (a hint only: what it delivers
 * comes from the log); a counter advance without its log rows becomes a
 * reset. A lost
 * connection is retried after 100 ms, doubling up to 5 s, with jitter; the
 * first sync of every connection resets unless the counter has not moved.
 * Throws a `TypeError` naming a bad option.
 *
 * @example
 * ```ts
 * import pg from "pg";
 * import { createPostgresFeed } from "@saferoute/api-kit/api-keys/postgres";
 *
 * const feed = createPostgresFeed({
 *   client: () => new pg.Client({ connectionString: "postgresql://app:secret@db:5432/app" }),
 *   pollMs: 250,
 * });
 * const { stalenessMs } = feed.status(); // Infinity until the first sync
 * await feed.close();
 * ```
 */
export function createPostgresFeed(options: PostgresFeedOptions): PostgresApiKeyChangeFeed {
  return new PostgresChangeFeed(options);
}
