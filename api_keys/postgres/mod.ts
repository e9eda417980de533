/**
 * The PostgreSQL change feed: every instance on one database learns within
 * milliseconds that a key changed (by any instance, tool or SQL session), so
 * it can drop its cached verification. Imports `pg` (an optional peer). Needs
 * migrations `0002_api_key_change_feed` and `0005_api_key_change_log` and a
 * direct (session) connection, not a transaction pooler; see
 * docs/operations.md, "Fleets: the change feed".
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
 * connecting; an unreachable database leaves it unhealthy, retrying (100 ms,
 * doubling up to 5 s, with jitter). It reads the change log every `pollMs`
 * and at once after a `LISTEN` notice; a gap in the log, and the first sync
 * of a connection after changes, become a reset. Throws a `TypeError` naming
 * a bad option.
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
