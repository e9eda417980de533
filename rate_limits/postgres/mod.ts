/**
 * The PostgreSQL store of the rate limiter: counters in the table
 * `rate_limit_counters`, each check one statement (`rate_limit_check`, all
 * policies at once) on the database's clock, exact across every instance on
 * that database. Needs the migration
 * `prisma/migrations/0007_rate_limit_counters` and a `pg` pool or client (an
 * optional peer) from the caller.
 *
 * @example
 * ```ts
 * import pg from "pg";
 * import { createRateLimiter } from "@saferoute/api-kit/rate-limits";
 * import { createPostgresRateLimitStore } from "@saferoute/api-kit/rate-limits/postgres";
 *
 * const pool = new pg.Pool({ connectionString: "postgresql://app:secret@db:5432/app" });
 * const limiter = createRateLimiter({ store: createPostgresRateLimitStore({ pool }) });
 * const { allowed } = await limiter.check("key_1", [{ name: "api", limit: 100, windowMs: 60_000 }]);
 * ```
 *
 * @module
 */
import type { CounterResult, RateLimitCounter, RateLimitStore } from "../store.ts";

/** What the store needs of `pg`: a `pg.Pool` or `pg.Client` has it. */
export interface PostgresQueryable {
  /** Runs one statement. */
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/** Options of `createPostgresRateLimitStore`. */
export interface PostgresRateLimitStoreOptions {
  /** The pool (or client) every check runs on; the caller owns and ends it. */
  pool: PostgresQueryable;
}

/** The PostgreSQL store, with `deleteExpired` for the rows whose log has left its window. */
export interface PostgresRateLimitStore extends RateLimitStore {
  /** Deletes idle rows (one statement); resolves to how many. Run it now and then. */
  deleteExpired(): Promise<number>;
}

const CHECK_SQL = "SELECT allowed, remaining::float8 AS remaining, reset_ms::float8 AS reset_ms" +
  " FROM rate_limit_check($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[])";
const DELETE_SQL = "WITH d AS (DELETE FROM rate_limit_counters WHERE expires_at < now()" +
  " RETURNING 1) SELECT count(*)::int AS n FROM d";

/**
 * Creates the PostgreSQL store. Throws a `TypeError` without a `pool`.
 *
 * @example
 * ```ts
 * import pg from "pg";
 * import { createPostgresRateLimitStore } from "./mod.ts";
 * const store = createPostgresRateLimitStore({ pool: new pg.Pool() });
 * ```
 */
export function createPostgresRateLimitStore(
  options: PostgresRateLimitStoreOptions,
): PostgresRateLimitStore {
  const pool = options?.pool;
  if (typeof pool?.query !== "function") {
    throw new TypeError("createPostgresRateLimitStore needs a pg pool or client as `pool`");
  }
  return {
    name: "postgres",
    async check(counters: readonly RateLimitCounter[]): Promise<CounterResult[]> {
      const { rows } = await pool.query(CHECK_SQL, [
        counters.map((c) => c.subject),
        counters.map((c) => c.name),
        counters.map((c) => c.limit),
        counters.map((c) => c.windowMs),
        counters.map((c) => c.cost),
      ]);
      return rows.map((row) => ({
        allowed: row.allowed === true,
        remaining: Number(row.remaining),
        resetMs: Number(row.reset_ms),
      }));
    },
    async deleteExpired() {
      const { rows } = await pool.query(DELETE_SQL);
      return Number(rows[0]?.n ?? 0);
    },
  };
}
