/**
 * The PostgreSQL store of the rate limiter: window counters in the table
 * `rate_limit_counters`, credit balances in `credit_balances` (durable), each
 * check one statement (`rate_limit_check`, all counters at once) on the
 * database's clock, exact across every instance on that database. Needs the
 * migration `prisma/migrations/0007_rate_limit_counters` (and
 * `0009_credit_balances` for credits) and a `pg` pool or client (an optional
 * peer) from the caller.
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
import {
  byKind,
  type CounterResult,
  type CreditCounter,
  type RateLimitCounter,
  type RateLimitStore,
} from "../store.ts";
import { assertCreditChange, refillParams } from "../credits.ts";

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
  /** Deletes idle window rows (one statement; never balances); resolves to how many. Run it now and then. */
  deleteExpired(): Promise<number>;
  /** See `RateLimitStore.changeCredits`. */
  changeCredits: NonNullable<RateLimitStore["changeCredits"]>;
}

const COLUMNS = "SELECT allowed, remaining::float8 AS remaining, reset_ms::float8 AS reset_ms";
const WINDOW_ARGS = "$1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[]";
const CHECK_SQL = `${COLUMNS} FROM rate_limit_check(${WINDOW_ARGS})`;
const CREDIT_CHECK_SQL = `${COLUMNS} FROM rate_limit_check(${WINDOW_ARGS}, $6::text[], ` +
  "$7::text[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::int[])";
const CHANGE_SQL = "SELECT remaining::float8 AS remaining, reset_ms::float8 AS reset_ms FROM " +
  "credit_change($1, $2, $3::bigint, $4::bigint, $5::bigint, $6::bigint, $7::int, $8::bigint, $9::bigint)";
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
      const { windows, credits, inOrder } = byKind(counters);
      const values: unknown[] = [
        windows.map((c) => c.subject),
        windows.map((c) => c.name),
        windows.map((c) => c.limit),
        windows.map((c) => c.windowMs),
        windows.map((c) => c.cost),
      ];
      if (credits.length > 0) {
        const refills = credits.map((c) => refillParams(c.refill));
        values.push(
          credits.map((c) => c.subject),
          credits.map((c) => c.name),
          credits.map((c) => c.cost),
          credits.map((c) => c.initial),
          credits.map((c) => c.initialAt ?? null),
          ...[0, 1, 2].map((i) => refills.map((r) => r[i])),
        );
      }
      const { rows } = await pool.query(credits.length > 0 ? CREDIT_CHECK_SQL : CHECK_SQL, values);
      if (rows.length !== counters.length) {
        throw new TypeError("rate_limit_check answered an unexpected number of rows");
      }
      return inOrder(rows.map((row) => ({
        allowed: row.allowed === true,
        remaining: Number(row.remaining),
        resetMs: Number(row.reset_ms),
      })));
    },
    async changeCredits(counter: CreditCounter, change) {
      const valid = assertCreditChange(change);
      const { rows } = await pool.query(CHANGE_SQL, [
        counter.subject,
        counter.name,
        counter.initial,
        counter.initialAt ?? null,
        ...refillParams(counter.refill),
        "set" in valid ? valid.set : null,
        "add" in valid ? valid.add : null,
      ]);
      return {
        allowed: true,
        remaining: Number(rows[0].remaining),
        resetMs: Number(rows[0].reset_ms),
      };
    },
    async deleteExpired() {
      const { rows } = await pool.query(DELETE_SQL);
      return Number(rows[0]?.n ?? 0);
    },
  };
}
