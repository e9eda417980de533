/**
 * The PostgreSQL store of the rate limiter: window counters in the table
 * `rate_limit_buckets` (one fixed-size row of sub-buckets per subject, policy
 * name and window), credit balances in `credit_balances` (durable), each
 * batch of checks one statement (`rate_limit_bucket_batch`: every row of the
 * batch locked once, each check applied in order before its deadline or not
 * at all; one more from a check naming a balance under another refill rule;
 * a batch of one check of window counters `rate_limit_bucket_check`, one check
 * with credits `rate_limit_credit_check`, the same rule in cheaper statements)
 * on the database's clock, exact across every instance on that database. A
 * statement without credit counters that allowed a check does not wait for its
 * commit's WAL flush (a database crash
 * may forget its last fraction of a second of window counts, never a balance);
 * `rate_limit_bucket_check` refuses from an unlocked read when it can (no lock,
 * no write) and counts one counter in its newest sub-bucket without a locked read. Needs the migrations
 * `prisma/migrations/0009_credit_balances`, `0012_rate_limit_batches`,
 * `0015_rate_limit_buckets`, `0019_rate_limit_bucket_check`,
 * `0020_rate_limit_refusal_read` and `0021_rate_limit_credit_check` (and, to
 * harden, `0023_function_search_path_schema` and `0024_function_keyed_plans`,
 * and for `changeCredits` `{ anchor: true }`, `0025_credit_change_anchor` and
 * `0026_credit_change_anchor_clock`, for its balance before
 * `0027_credit_change_balance_before`, to fail a check on a corrupt window row
 * `0031_rate_limit_unreadable_rows`, for that count in place
 * `0033_rate_limit_check_in_place`, for a batch's and a credit check's
 * new rows counted HOT `0034_rate_limit_rows_created_at_now`, and for a batch
 * beside the sweep `0035_rate_limit_batch_rows_swept`: without them
 * `ready()` logs one line
 * naming them, and start-up goes on), and
 * a `pg` pool or client (an optional peer) from the caller, whose role holds `SELECT`,
 * `INSERT`, `UPDATE` and `DELETE` on `rate_limit_buckets` and all but `DELETE` on
 * `credit_balances`, `USAGE` on their schema and `EXECUTE` on the functions (`ready()` names any
 * missing). An error of a misconfiguration, a missing
 * migration or a row it cannot read is a `TypeError` (by its SQLSTATE): the check fails closed.
 *
 * Production setup: the store listens for the pool's `error` events itself
 * (a terminated backend never ends the process), and `await limiter.ready()`
 * at start-up names a missing migration.
 *
 * @example
 * ```ts
 * import pg from "pg";
 * import { createRateLimiter } from "@saferoute/api-kit/rate-limits";
 * import { createPostgresRateLimitStore } from "@saferoute/api-kit/rate-limits/postgres";
 *
 * const pool = new pg.Pool({ connectionString: "postgresql://app:secret@db:5432/app" });
 * const limiter = createRateLimiter({ store: createPostgresRateLimitStore({ pool }) });
 * await limiter.ready();
 * const { allowed } = await limiter.check("key_1", [{ name: "api", limit: 100, windowMs: 60_000 }]);
 * ```
 *
 * @module
 */
import type {
  CounterResult,
  CreditCounter,
  RateLimitCounter,
  RateLimitStore,
  StoreBatchAnswer,
  StoreCheck,
  WindowCounter,
} from "../store.ts";
import { compileCreditChange } from "../credits.ts";
import { refillParams } from "../_refill.ts";
import { createClockOffset } from "../_clock.ts";
import { byKind, reportErrors } from "../_remote.ts";
import { assertKnownOptions, optionalBoolean, optionalFunction } from "../_options.ts";
import { MAX_TIMER_MS } from "../../telemetry/_timer.ts";
import { storeError, UNREADABLE_STATE } from "./_sqlstate.ts";

/** Rejects with `error` as the store rejects with it (`storeError`). */
const rejectStoreError = (error: unknown) => Promise.reject(storeError(error));

/** A named (prepared) statement, as `pg`'s `query` takes it. */
export interface PostgresNamedQuery {
  /** The statement's name (with `preparedStatements`): prepared once per connection, then only bound and run. */
  name?: string;
  /** Its SQL. */
  text: string;
  /** Its parameters. */
  values?: unknown[];
  /**
   * Ms after which `pg` gives the statement's connection up (its deadline, then 2 s; none for
   * `deleteExpired`): `pg.Pool` drops it and opens another.
   */
  query_timeout?: number;
}

/** What the store needs of `pg`: a `pg.Pool` or `pg.Client` has it (with `on`, the store listens for its errors). */
export interface PostgresQueryable {
  /** Runs one statement, given as an object (with `preparedStatements`, a named one). */
  query(
    text: string | PostgresNamedQuery,
    values?: unknown[],
  ): Promise<{ rows: Record<string, unknown>[] }>;
  /** Adds an event listener. */
  on?(event: "error", listener: (error: unknown) => void): unknown;
  /** Removes an event listener. */
  off?(event: "error", listener: (error: unknown) => void): unknown;
}

/** Options of `createPostgresRateLimitStore`. */
export interface PostgresRateLimitStoreOptions {
  /** The pool (or client) every check runs on; the caller owns and ends it. */
  pool: PostgresQueryable;
  /**
   * Where the pool's `error` events go, at most one line per 10 s (default
   * `console.error`); the store's own listener keeps a terminated backend from
   * ending the process. Also where `ready()` called on the store itself (not
   * through a limiter, which hands it its own logger) reports a hardening
   * (or `0025_credit_change_anchor`, `0026_credit_change_anchor_clock`,
   * `0027_credit_change_balance_before`, `0031_rate_limit_unreadable_rows`) migration missing
   * (default `console.warn`).
   */
  logger?: (line: string) => void;
  /**
   * Sends the check statements as named prepared statements (`{ name, text,
   * values }`), parsed and planned once per connection (default `true`). Set
   * `false` behind PgBouncer in transaction mode before 1.21 (or with
   * `max_prepared_statements = 0`), or for a `pool` whose `query` takes SQL
   * text only.
   */
  preparedStatements?: boolean;
  /**
   * Every commit waits for its WAL flush, window counts as balances (default
   * `false`: a statement of window counters that allowed a check does not wait,
   * so a database crash may forget its last fraction of a second of counts;
   * balances always wait).
   */
  durableWindows?: boolean;
}

/** The PostgreSQL store, with `deleteExpired` for the rows that count nothing any more. */
export interface PostgresRateLimitStore extends RateLimitStore {
  /** Deletes idle window rows (one statement; never balances); resolves to how many. Run it now and then. */
  deleteExpired(): Promise<number>;
  /** See `RateLimitStore.changeCredits`. */
  changeCredits: NonNullable<RateLimitStore["changeCredits"]>;
  /**
   * See `RateLimitStore.anchorsCredits`: `{ anchor: true }` is taken, with
   * migration `0025_credit_change_anchor` (else a `TypeError` naming it).
   */
  readonly anchorsCredits: true;
  /** See `RateLimitStore.readCredits`. */
  readCredits: NonNullable<RateLimitStore["readCredits"]>;
  /** See `RateLimitStore.ready`. */
  ready: NonNullable<RateLimitStore["ready"]>;
  /** Removes the store's `error` listener (the pool stays open: the caller ends it). */
  close(): void;
}

/**
 * Ends a statement of window counters only: when one of its checks is
 * allowed (it wrote), its transaction's commit does not wait for the WAL flush
 * (`synchronous_commit` off for that transaction only, as Redis answers before
 * its fsync); a database crash may forget the last fraction of a second of
 * window counts, never a balance. A statement that consumed nothing keeps the
 * wait (a refusal `rate_limit_bucket_check` decided before locking wrote
 * nothing: its commit has none).
 */
const NO_FLUSH_WAIT =
  " WHERE CASE WHEN allowed THEN set_config('synchronous_commit', 'off', true) <> '' ELSE true END";
const BATCH_SQL = "SELECT check_no, allowed, remaining::float8 AS remaining, " +
  "reset_ms::float8 AS reset_ms, now_ms::float8 AS now_ms FROM rate_limit_bucket_batch(" +
  "$1::bigint[], $2::int[], $3::int[], $4::text[], $5::text[], $6::bigint[], $7::int[], " +
  "$8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::bigint[], $13::bigint[], " +
  "$14::bigint[], $15::bigint[], $16::int[], $17::int[], $18::bigint[])";
/** One check of window counters on distinct rows (migration 0019): six parameters, no credit locks. */
const CHECK_SQL = "SELECT allowed, remaining::float8 AS remaining, reset_ms::float8 AS reset_ms, " +
  "now_ms::float8 AS now_ms FROM rate_limit_bucket_check($1::bigint, $2::text[], $3::text[], " +
  "$4::bigint[], $5::bigint[], $6::bigint[])";
/** The same of one counter, its six parameters scalars (nothing for the client to serialise as an array). */
const CHECK_ONE_SQL = "SELECT allowed, remaining::float8 AS remaining, " +
  "reset_ms::float8 AS reset_ms, now_ms::float8 AS now_ms FROM rate_limit_bucket_check($1::bigint, " +
  "ARRAY[$2::text], ARRAY[$3::text], ARRAY[$4::bigint], ARRAY[$5::bigint], ARRAY[$6::bigint])";
const BATCH_NAME = "api_kit_rate_limit_batch_1";
/**
 * One check of window counters and balances, each row and balance its own
 * (migration 0021): 14 parameters, no index arrays, no batch loop. It spends
 * credits, so its commit waits for the WAL flush (no `NO_FLUSH_WAIT`).
 */
const CREDIT_CHECK = {
  text: "SELECT allowed, remaining::float8 AS remaining, reset_ms::float8 AS reset_ms, " +
    "now_ms::float8 AS now_ms FROM rate_limit_credit_check($1::bigint, $2::text[], $3::text[], " +
    "$4::bigint[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::bigint[], " +
    "$10::bigint[], $11::bigint[], $12::bigint[], $13::int[], $14::bigint[])",
  name: "api_kit_rate_limit_credit_check_1",
};
/** The same of one window counter then one balance, its 14 parameters scalars. */
const CREDIT_CHECK_ONE = {
  text: "SELECT allowed, remaining::float8 AS remaining, reset_ms::float8 AS reset_ms, " +
    "now_ms::float8 AS now_ms FROM rate_limit_credit_check($1::bigint, ARRAY[$2::text], " +
    "ARRAY[$3::text], ARRAY[$4::bigint], ARRAY[$5::bigint], ARRAY[$6::bigint], " +
    "ARRAY[$7::text], ARRAY[$8::text], ARRAY[$9::bigint], ARRAY[$10::bigint], " +
    "ARRAY[$11::bigint], ARRAY[$12::bigint], ARRAY[$13::int], ARRAY[$14::bigint])",
  name: "api_kit_rate_limit_credit_check_one_1",
};

/**
 * The statements of window counters only, as `{ text, name }` (the name for
 * `preparedStatements`): ending in `NO_FLUSH_WAIT`, or with `durableWindows`
 * as written (names of their own: one connection may serve both kinds of store).
 */
function windowStatements(durable: boolean) {
  const [end, tag] = durable ? ["", "_durable"] : [NO_FLUSH_WAIT, ""];
  return {
    check: { text: CHECK_SQL + end, name: `api_kit_rate_limit_check_2${tag}` },
    checkOne: { text: CHECK_ONE_SQL + end, name: `api_kit_rate_limit_check_one_2${tag}` },
    batch: durable
      ? { text: BATCH_SQL, name: BATCH_NAME }
      : { text: BATCH_SQL + NO_FLUSH_WAIT, name: "api_kit_rate_limit_batch_windows_1" },
  };
}
/**
 * A credit change, with `anchor` `, true` (`{ anchor: true }`: set NULL, add 0; with `set`: add
 * 0). The balance before through the row as JSON: absent (NULL) before migration 0027.
 */
const changeSql = (anchor: string) =>
  "SELECT c.applied, c.remaining::float8 AS remaining, c.reset_ms::float8 AS reset_ms, " +
  "c.now_ms::float8 AS now_ms, (to_jsonb(c) ->> 'remaining_before')::float8 AS before " +
  "FROM credit_change_before($1::bigint, $2, $3, $4::bigint, $5::bigint, $6::bigint, " +
  `$7::bigint, $8::int, $9::bigint, $10::bigint${anchor}) c`;
const CHANGE_SQL = changeSql("");
const ANCHOR_SQL = changeSql(", true");
/** The migration whose `credit_change_before` takes `p_anchor` (`{ anchor: true }`). */
const ANCHOR_MIGRATION = "0025_credit_change_anchor";
/**
 * The migration whose `credit_change_before` anchors the balance at the moment it settled it on
 * (0025's at a later reading of the clock: a refill boundary between them was lost).
 */
const ANCHOR_CLOCK_MIGRATION = "0026_credit_change_anchor_clock";
/** The migration whose `credit_change_before` answers the balance before (`remaining_before`). */
const BEFORE_MIGRATION = "0027_credit_change_balance_before";
/** The migration whose check functions raise `UNREADABLE_STATE` on a window row they cannot read. */
const UNREADABLE_MIGRATION = "0031_rate_limit_unreadable_rows";
/** The migration whose `rate_limit_bucket_check` counts one counter in place (named in its body). */
const IN_PLACE_MIGRATION = "0033_rate_limit_check_in_place";
/** The migration whose batch and credit check create a missing row at now's sub-bucket (named in their bodies). */
const ROWS_AT_NOW_MIGRATION = "0034_rate_limit_rows_created_at_now";
/** The migration whose batch locks every row even when the sweep removed one (named in its body). */
const SWEPT_MIGRATION = "0035_rate_limit_batch_rows_swept";
/** The versions of `credit_change_before` from 0025 on, in order: each has the earlier ones' fixes. */
const CHANGE_VERSIONS = [ANCHOR_MIGRATION, ANCHOR_CLOCK_MIGRATION, BEFORE_MIGRATION];
/** Whether a `READY_SQL` row of `credit_change_before` is `migration`'s version or a later one. */
const changeFrom = (migration: string) => (row: Record<string, unknown>) =>
  CHANGE_VERSIONS.indexOf(String(row.version)) >= CHANGE_VERSIONS.indexOf(migration);
const READ_SQL = "SELECT balance::float8 AS balance, reset_ms::float8 AS reset_ms FROM " +
  "credit_read($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::int[])";
const TIME_SQL = "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms";
/** The connection's defaults a check's transaction runs with (`ready()` refuses the wrong ones). */
const SETTINGS_SQL = "SELECT current_setting('transaction_read_only') AS read_only, " +
  "current_setting('transaction_isolation') AS isolation";
const DELETE_SQL = "WITH d AS (DELETE FROM rate_limit_buckets WHERE expires_at < now()" +
  " RETURNING 1) SELECT count(*)::int AS n FROM d";
/**
 * Ms past a statement's deadline after which `pg` gives its connection up (`query_timeout`: the
 * pool drops it and opens another), as the limiter's door lets go of a call: connections that
 * went silent with their sockets open (a failover behind a virtual IP, a dropped route) would
 * otherwise hold the door's calls until the kernel gives up on them.
 */
const GIVE_UP_MS = 2_000;
/** A statement's deadline when it has none of its own: the longest a limiter waits (`timeoutMs`). */
const LONGEST_WAIT_MS = 60_000;
/** The functions each migration adds, by migration (what `ready()` looks for). */
const MIGRATIONS: [string, string[]][] = [
  ["0009_credit_balances", ["credit_change", "credit_lock", "credit_refill", "credit_period"]],
  ["0012_rate_limit_batches", ["credit_change_before", "credit_read"]],
  ["0015_rate_limit_buckets", ["rate_limit_bucket_batch"]],
  ["0019_rate_limit_bucket_check", ["rate_limit_bucket_check"]],
  ["0021_rate_limit_credit_check", ["rate_limit_credit_check"]],
];
/**
 * The functions a later migration replaced, each as (function, migration):
 * that version carries the migration's name as its comment, which `ready()`
 * also looks for.
 */
const VERSIONS: [string, string][] = [
  ["rate_limit_bucket_check", "0020_rate_limit_refusal_read"],
];
/**
 * The migrations a store works without: those that harden its functions
 * without changing an answer, one a capability needs, and one that makes a
 * check cheaper. Each with the
 * functions it sets, whether a `READY_SQL` row has it, and what goes wrong
 * without it: `ready()` reports (once, never failing) the functions without it.
 */
const UPGRADES: [string, string[], (row: Record<string, unknown>) => boolean, string][] = [
  [
    "0023_function_search_path_schema",
    MIGRATIONS.flatMap(([, names]) => names),
    (row) => row.schema_path === true,
    "a schema or temporary table of the caller's can replace their tables",
  ],
  [
    "0024_function_keyed_plans",
    MIGRATIONS.flatMap(([, names]) => names).filter((name) => name !== "credit_period"),
    (row) => row.keyed_plans === true,
    "a check can read whole tables",
  ],
  [
    ANCHOR_MIGRATION,
    ["credit_change_before"],
    changeFrom(ANCHOR_MIGRATION),
    "a refill rule cannot change with the balance kept: changeCredits { anchor: true } fails",
  ],
  [
    ANCHOR_CLOCK_MIGRATION,
    ["credit_change_before"],
    changeFrom(ANCHOR_CLOCK_MIGRATION),
    "a balance kept across a refill rule change can miss a refill",
  ],
  [
    BEFORE_MIGRATION,
    ["credit_change_before"],
    changeFrom(BEFORE_MIGRATION),
    "a credit change answers no balance before: the audit log records a set's credits.before null",
  ],
  [
    UNREADABLE_MIGRATION,
    ["rate_limit_bucket_batch", "rate_limit_bucket_check", "rate_limit_credit_check"],
    (row) => row.unreadable_state === true,
    "a window row's unit NULL or negative (a corrupt row) is counted as none, never failing the check",
  ],
  [
    IN_PLACE_MIGRATION,
    ["rate_limit_bucket_check"],
    (row) => row.in_place === true,
    "an allowed check of one counter reads its row, locks it and reads it again before writing it",
  ],
  [
    ROWS_AT_NOW_MIGRATION,
    ["rate_limit_bucket_batch", "rate_limit_credit_check"],
    (row) => row.rows_at_now === true,
    "a new counter's row is written twice with its indexed columns changed (an index entry more)",
  ],
  [
    SWEPT_MIGRATION,
    ["rate_limit_bucket_batch"],
    (row) => row.rows_swept === true,
    "a batch beside deleteExpired can read an expired row the sweep removed as none: a check " +
    "refused without remaining, or the whole batch failed (a TypeError)",
  ],
];
/**
 * The schemas of the caller's `search_path` as set (`path`: `ns`, in the order `i`), with the ones
 * whose `USAGE` the role lacks, which PostgreSQL leaves out of its search (and so of
 * `pg_function_is_visible` and `to_regclass`): `ready()` finds the store's objects there too, to
 * name the grant missing rather than a migration.
 */
const SEARCH_PATH_SQL = "path AS (SELECT n.oid AS ns, s.i FROM regexp_matches(" +
  `current_setting('search_path'), '"(?:[^"]|"")*"|[^[:space:],]+', 'g') WITH ORDINALITY ` +
  `AS s(m, i) JOIN pg_namespace n ON n.nspname = CASE WHEN s.m[1] IN ('$user', '"$user"') ` +
  `THEN current_user::text WHEN s.m[1] LIKE '"%' ` +
  `THEN replace(substr(s.m[1], 2, length(s.m[1]) - 2), '""', '"') ELSE lower(s.m[1]) END)`;
/**
 * The order of `path` in which the search finds an object of schema `ns` (of a name in several
 * schemas, the first one): the schemas without `USAGE` last, as PostgreSQL skips them.
 */
const searchOrder = (ns: string) => `has_schema_privilege(${ns}, 'USAGE') DESC, path.i`;
/**
 * The store's functions (names `$1`) the search finds (see `SEARCH_PATH_SQL`), each with its
 * version, hardenings, and whether the role has `USAGE` on its schema and `EXECUTE` on it.
 */
const READY_SQL = `WITH ${SEARCH_PATH_SQL}, f AS (SELECT p.*, rank() OVER (PARTITION BY ` +
  `p.proname ORDER BY ${searchOrder("p.pronamespace")}) AS r FROM pg_proc p ` +
  "JOIN path ON p.pronamespace = path.ns WHERE p.proname = ANY($1::text[])) " +
  "SELECT proname::text AS name, obj_description(oid, 'pg_proc') AS version, " +
  "coalesce(format('search_path=pg_catalog, %s, pg_temp', pronamespace::regnamespace) = " +
  "ANY (proconfig), false) AS schema_path, " +
  "coalesce('enable_seqscan=off' = ANY (proconfig), false) AS keyed_plans, " +
  `strpos(prosrc, '${UNREADABLE_STATE}') > 0 AS unreadable_state, ` +
  `strpos(prosrc, '${IN_PLACE_MIGRATION}') > 0 AS in_place, ` +
  `strpos(prosrc, '${ROWS_AT_NOW_MIGRATION}') > 0 AS rows_at_now, ` +
  `strpos(prosrc, '${SWEPT_MIGRATION}') > 0 AS rows_swept, ` +
  "has_schema_privilege(pronamespace, 'USAGE') AS usable, pronamespace::regnamespace::text " +
  "AS schema, has_function_privilege(oid, 'EXECUTE') AS executable, format('%s.%I(%s)', " +
  "pronamespace::regnamespace, proname, oidvectortypes(proargtypes)) AS signature, " +
  "quote_ident(current_user) AS role FROM f WHERE r = 1 " +
  "ORDER BY array_position($1::text[], proname::text), oid";

/**
 * The privileges the store's statements need, per table (its functions run with the caller's:
 * `SECURITY INVOKER`; `DELETE`, `deleteExpired`), which `ready()` checks, as it checks `USAGE` on
 * the schema of each function of `READY_SQL`'s and `EXECUTE` on it.
 */
const PRIVILEGES: [string, string[]][] = [
  ["rate_limit_buckets", ["SELECT", "INSERT", "UPDATE", "DELETE"]],
  ["credit_balances", ["SELECT", "INSERT", "UPDATE"]],
];
/**
 * The privileges of `PRIVILEGES` (tables `$1`, privileges `$2`) the role lacks, in order; each
 * table the one the search finds (see `SEARCH_PATH_SQL`).
 */
const GRANTS_SQL = `WITH ${SEARCH_PATH_SQL} SELECT g.t AS tbl, g.p AS privilege ` +
  "FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS g(t, p, i) " +
  "WHERE NOT coalesce(has_table_privilege((SELECT c.oid FROM pg_class c JOIN path " +
  `ON c.relnamespace = path.ns WHERE c.relname = g.t ORDER BY ${searchOrder("c.relnamespace")} ` +
  "LIMIT 1), g.p), false) ORDER BY g.i";

/**
 * The `TypeError` naming the privileges the role lacks, with the grants that give them: `USAGE`
 * on a schema and `EXECUTE` on a function of `functions` (`READY_SQL`'s rows), those on tables
 * that `GRANTS_SQL` answered missing (`tables`); `undefined` when none is.
 */
function grantsError(
  functions: readonly Record<string, unknown>[],
  tables: readonly Record<string, unknown>[],
): TypeError | undefined {
  // Each as (what is lacking, the grant's object): the schemas first (a grant of a function
  // names its schema, which needs its USAGE).
  const lacking: [string, string][] = [
    ...new Set(functions.filter((r) => r.usable !== true).map((r) => String(r.schema))),
  ].map((schema) => [`USAGE on schema ${schema}`, `USAGE ON SCHEMA ${schema}`]);
  for (const { executable, signature } of functions) {
    if (executable !== true) {
      lacking.push([`EXECUTE on ${signature}`, `EXECUTE ON FUNCTION ${signature}`]);
    }
  }
  for (const [table] of PRIVILEGES) {
    const privileges = tables.filter((r) => r.tbl === table).map((r) => r.privilege);
    const what = privileges.join(", ");
    if (what !== "") lacking.push([`${what} on ${table}`, `${what} ON ${table}`]);
  }
  if (lacking.length === 0) return undefined;
  const role = String(functions[0]?.role);
  const lacks = listed(lacking.map(([what]) => what));
  const grants = lacking.map(([, object]) => `GRANT ${object} TO ${role};`).join(" ");
  return new TypeError(
    `the PostgreSQL rate-limit store's role ${role} lacks ${lacks}: ${grants} (docs/operations.md)`,
  );
}

/** `["a", "b", "c"]` as `a, b and c`. */
function listed(names: readonly string[]): string {
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/**
 * The line naming each migration of `UPGRADES` some function of `rows`
 * (`READY_SQL`'s) lacks, and what to apply; `undefined` when none does.
 */
function upgradesNotice(rows: readonly Record<string, unknown>[]): string | undefined {
  const lacking = UPGRADES.flatMap(([migration, names, has, risk]) => {
    const without = names.filter((name) => !rows.some((r) => r.name === name && has(r)));
    return without.length === 0 ? [] : [{ migration, without, risk }];
  });
  if (lacking.length === 0) return undefined;
  return "rate-limits: the postgres store's functions lack " +
    lacking.map((l) => `${l.migration} (${l.without.join(", ")}: ${l.risk})`).join(" and ") +
    "; checks are answered: apply " +
    lacking.map((l) => `prisma/migrations/${l.migration}/migration.sql`).join(", then ") +
    " (docs/operations.md)";
}

/**
 * What one check's counters take: `"windows"`, window counters each of its own
 * row (subject, name, window), for `rate_limit_bucket_check`; `"credits"`, such
 * window counters and credit counters each of its own balance (subject, name),
 * for `rate_limit_credit_check`; `undefined` (a row or balance named twice)
 * for `rate_limit_bucket_batch`.
 */
function shapeOf(counters: readonly RateLimitCounter[]): "windows" | "credits" | undefined {
  let credits = false;
  for (let i = 0; i < counters.length; i++) {
    const a = counters[i];
    if (a.kind === "credit") credits = true;
    for (let j = 0; j < i; j++) {
      const b = counters[j];
      if (
        a.kind === b.kind && a.subject === b.subject && a.name === b.name &&
        (a.kind === "credit" || a.windowMs === (b as WindowCounter).windowMs)
      ) return undefined;
    }
  }
  return credits ? "credits" : "windows";
}

/**
 * The distinct counters of `counters` by `keyOf` (the first of each), and per
 * counter the 1-based index of its own.
 */
function distinct<T>(counters: readonly T[], keyOf: (counter: T) => string) {
  const index = new Map<string, number>();
  const list: T[] = [];
  const of = counters.map((c) => {
    const key = keyOf(c);
    let i = index.get(key);
    if (i === undefined) index.set(key, i = list.push(c));
    return i;
  });
  return { list, of };
}

/**
 * The first check of `split` naming a balance that an earlier check named
 * with another refill rule (the rule changed while they queued), or -1:
 * `rate_limit_bucket_batch` refills a balance once, by one rule, so that
 * check and the ones after it go in the next statement.
 */
function ruleChange(split: readonly { readonly credits: readonly CreditCounter[] }[]): number {
  const rules = new Map<string, string>();
  for (let q = 0; q < split.length; q++) {
    const named = split[q].credits.map((c) =>
      [`${c.subject}\u0000${c.name}`, refillParams(c.refill).join()] as const
    );
    if (named.some(([balance, rule]) => (rules.get(balance) ?? rule) !== rule)) return q;
    for (const [balance, rule] of named) rules.set(balance, rule);
  }
  return -1;
}

const LABEL = "createPostgresRateLimitStore";
/** The options taken; any other is a `TypeError` (a misspelt one is no silent default). */
const OPTIONS = Object.keys(
  { pool: true, logger: true, preparedStatements: true, durableWindows: true } satisfies Record<
    keyof PostgresRateLimitStoreOptions,
    true
  >,
);

/**
 * Creates the PostgreSQL store. Throws a `TypeError` without a `pool`, for an
 * unknown option or a `preparedStatements`/`durableWindows` that is not a boolean.
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
  assertKnownOptions(options, OPTIONS, LABEL, { option: "pool", method: "query" });
  const pool = options?.pool;
  if (typeof pool?.query !== "function") {
    throw new TypeError("createPostgresRateLimitStore needs a pg pool or client as `pool`");
  }
  const prepared = optionalBoolean(options.preparedStatements, "preparedStatements", LABEL) ?? true;
  const durable = optionalBoolean(options.durableWindows, "durableWindows", LABEL) ?? false;
  const logger = optionalFunction(options.logger, "logger", LABEL);
  const clock = createClockOffset();
  const stopReporting = reportErrors(pool, "postgres", logger);
  /** Whether `ready()` reported the migrations of `UPGRADES` missing (once per store). */
  let upgradesReported = false;
  const windowsOnly = windowStatements(durable);
  /**
   * Sends one statement (named `name`) due by `deadline` (local ms; default the longest a
   * limiter waits, `Infinity` for none) and resolves to `read` of its result: `pg` gives its
   * connection up `GIVE_UP_MS` after the deadline (a silent peer's connection never answers;
   * the pool opens another). Without `preparedStatements`, SQL text and values only. A throw
   * of the pool is a rejection; an error of a misconfiguration, a missing migration or a row
   * the functions cannot read is a `TypeError` (`storeError`), in the same step as `read` (one
   * promise per statement): every statement of the store is sent here.
   */
  const send = <T>(
    text: string,
    values: unknown[] | undefined,
    name: string | undefined,
    deadline: number | undefined,
    read: (result: { rows: Record<string, unknown>[] }) => T,
  ): Promise<T> => {
    const due = deadline ?? Date.now() + LONGEST_WAIT_MS;
    const giveUp = Number.isFinite(due)
      ? Math.min(Math.max(due - Date.now(), 0) + GIVE_UP_MS, MAX_TIMER_MS)
      : undefined;
    try {
      return (prepared
        ? pool.query(
          name !== undefined && values !== undefined
            ? { name, text, values, query_timeout: giveUp }
            : { text, values, query_timeout: giveUp },
        )
        : pool.query(text, values)) // SQL text only: the pool's own timeout
        .then(read, rejectStoreError);
    } catch (error) {
      return rejectStoreError(error);
    }
  };
  /**
   * A statement's rows (sent at `sentAt`, `clock.now()`), the database's clock its last row
   * answers observed.
   */
  const rowsOf = ({ rows }: { rows: Record<string, unknown>[] }, sentAt: number) => {
    const last = rows[rows.length - 1];
    if (last && "now_ms" in last) clock.observe(Number(last.now_ms), sentAt);
    return rows;
  };
  /**
   * Runs one statement (sent at `sentAt`) and resolves to its rows (see `rowsOf`). No wait of
   * its own: the limiter's door bounds every call.
   */
  const run = (
    text: string,
    values?: unknown[],
    name?: string,
    deadline?: number,
    sentAt = clock.now(),
  ) => send(text, values, name, deadline, (result) => rowsOf(result, sentAt));
  /** Reads the database's clock when no round trip was seen (a deadline is never sent unknown). */
  const knowClock = async (deadline: number) => {
    if (!clock.known) await run(TIME_SQL, [], undefined, deadline);
  };
  /** `deadline` (local ms) on the database's clock, for a call sent at `sentAt` (`clock.now()`). */
  const onServer = (deadline: number, sentAt: number) => clock.toServer(deadline, sentAt) ?? -1;

  /** The answer of `rate_limit_bucket_check` or `rate_limit_credit_check` for `n` counters. */
  const checkAnswer = (answer: Record<string, unknown>[], n: number): StoreBatchAnswer => {
    if (answer.length === 1 && answer[0].allowed === null) return { results: [null] };
    if (answer.length !== n) {
      throw new TypeError("the check's statement answered an unexpected number of rows");
    }
    const results: CounterResult[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const row = answer[i];
      results[i] = {
        allowed: row.allowed === true,
        remaining: Number(row.remaining),
        resetMs: Number(row.reset_ms),
      };
    }
    return { results: [results] };
  };

  /** One check of window counters on distinct rows, in one cheaper statement (scalars for one counter). */
  const checkOne = (
    windows: readonly WindowCounter[],
    deadline: number,
  ): Promise<StoreBatchAnswer> => {
    if (!clock.known) return knowClock(deadline).then(() => checkOne(windows, deadline));
    const n = windows.length;
    const sentAt = clock.now();
    const at = onServer(deadline, sentAt);
    if (n === 1) {
      const [c] = windows;
      const values = [at, c.subject, c.name, c.windowMs, c.limit, c.cost];
      return send(
        windowsOnly.checkOne.text,
        values,
        windowsOnly.checkOne.name,
        deadline,
        (result) => checkAnswer(rowsOf(result, sentAt), 1),
      );
    }
    const [subjects, names, windowMs, limits, costs] = [[], [], [], [], []] as unknown[][];
    for (const c of windows) {
      subjects.push(c.subject);
      names.push(c.name);
      windowMs.push(c.windowMs);
      limits.push(c.limit);
      costs.push(c.cost);
    }
    const values = [at, subjects, names, windowMs, limits, costs];
    return send(
      windowsOnly.check.text,
      values,
      windowsOnly.check.name,
      deadline,
      (result) => checkAnswer(rowsOf(result, sentAt), n),
    );
  };

  /**
   * One check of window counters and balances on distinct rows and balances:
   * `rate_limit_credit_check` (scalars for one window counter then one balance).
   */
  const checkCredits = (
    counters: readonly RateLimitCounter[],
    deadline: number,
  ): Promise<StoreBatchAnswer> => {
    if (!clock.known) return knowClock(deadline).then(() => checkCredits(counters, deadline));
    const sentAt = clock.now();
    const at = onServer(deadline, sentAt);
    const n = counters.length;
    const [w, c] = counters;
    if (n === 2 && w.kind === "window" && c.kind === "credit") {
      const [amount, every, day] = refillParams(c.refill);
      const values: unknown[] = [at, w.subject, w.name, w.windowMs, w.limit, w.cost];
      values.push(c.subject, c.name, c.initial, c.initialAt ?? null, amount, every, day, c.cost);
      return send(
        CREDIT_CHECK_ONE.text,
        values,
        CREDIT_CHECK_ONE.name,
        deadline,
        (result) => checkAnswer(rowsOf(result, sentAt), 2),
      );
    }
    const { windows, credits, inOrder } = byKind(counters);
    const refills = credits.map((c) => refillParams(c.refill));
    const values = [
      at,
      windows.map((c) => c.subject),
      windows.map((c) => c.name),
      windows.map((c) => c.windowMs),
      windows.map((c) => c.limit),
      windows.map((c) => c.cost),
      credits.map((c) => c.subject),
      credits.map((c) => c.name),
      credits.map((c) => c.initial),
      credits.map((c) => c.initialAt ?? null),
      ...[0, 1, 2].map((i) => refills.map((r) => r[i])),
      credits.map((c) => c.cost),
    ];
    return send(CREDIT_CHECK.text, values, CREDIT_CHECK.name, deadline, (result) => {
      const { results: [answers] } = checkAnswer(rowsOf(result, sentAt), n);
      return { results: [answers && inOrder(answers)] };
    });
  };

  /**
   * Any other batch: one statement of `rate_limit_bucket_batch`; one more from each check naming
   * a balance under another refill rule than an earlier check (`ruleChange`), in order.
   */
  const checkMany = async (checks: readonly StoreCheck[]): Promise<StoreBatchAnswer> => {
    const split = checks.map(({ counters }) => byKind(counters));
    const credits = split.flatMap((k) => k.credits);
    const next = credits.length > 1 ? ruleChange(split) : -1;
    if (next > 0) {
      const { results } = await checkMany(checks.slice(0, next));
      const rest = await checkMany(checks.slice(next));
      return { results: [...results, ...rest.results] };
    }
    await knowClock(checks[0].deadline);
    const sentAt = clock.now();
    const deadlines = checks.map((check) => onServer(check.deadline, sentAt));
    const windows = split.flatMap((k) => k.windows);
    const rows = distinct(windows, (c) => `${c.subject}\u0000${c.name}\u0000${c.windowMs}`);
    const balances = distinct(credits, (c) => `${c.subject}\u0000${c.name}`);
    const refills = balances.list.map((c) => refillParams(c.refill));
    const batch = credits.length === 0 ? windowsOnly.batch : { text: BATCH_SQL, name: BATCH_NAME };
    const answer = await run(
      batch.text,
      [
        deadlines,
        split.map((k) => k.windows.length),
        split.map((k) => k.credits.length),
        rows.list.map((c) => c.subject),
        rows.list.map((c) => c.name),
        rows.list.map((c) => c.windowMs),
        rows.of,
        windows.map((c) => c.limit),
        windows.map((c) => c.cost),
        balances.list.map((c) => c.subject),
        balances.list.map((c) => c.name),
        balances.list.map((c) => c.initial),
        balances.list.map((c) => c.initialAt ?? null),
        ...[0, 1, 2].map((i) => refills.map((r) => r[i])),
        balances.of,
        credits.map((c) => c.cost),
      ],
      batch.name,
      Math.max(...checks.map((check) => check.deadline)),
      sentAt,
    );
    let at = 0;
    const results = split.map((kinds, q) => {
      const first = answer[at];
      if (first?.allowed === null && Number(first.check_no) === q + 1) {
        at++;
        return null;
      }
      const answers: CounterResult[] = [];
      for (let i = 0; i < checks[q].counters.length; i++, at++) {
        const row = answer[at];
        if (Number(row?.check_no) !== q + 1) {
          throw new TypeError("rate_limit_bucket_batch answered an unexpected row");
        }
        answers.push({
          allowed: row.allowed === true,
          remaining: Number(row.remaining),
          resetMs: Number(row.reset_ms),
        });
      }
      return kinds.inOrder(answers);
    });
    if (at !== answer.length) {
      throw new TypeError("rate_limit_bucket_batch answered an unexpected row");
    }
    return { results };
  };

  return {
    name: "postgres",
    anchorsCredits: true,
    checkBatch(checks: readonly StoreCheck[]) {
      if (checks.length === 0) return Promise.resolve({ results: [] });
      const [{ counters, deadline }] = checks;
      const shape = checks.length === 1 && counters.length > 0 ? shapeOf(counters) : undefined;
      if (shape === "windows") return checkOne(counters as readonly WindowCounter[], deadline);
      if (shape === "credits") return checkCredits(counters, deadline);
      return checkMany(checks);
    },
    async changeCredits(counter: CreditCounter, change, deadline) {
      const valid = compileCreditChange(change);
      const anchor = "anchor" in valid;
      await knowClock(deadline);
      const sentAt = clock.now();
      const [row] = await run(
        anchor ? ANCHOR_SQL : CHANGE_SQL,
        [
          onServer(deadline, sentAt),
          counter.subject,
          counter.name,
          counter.initial,
          counter.initialAt ?? null,
          ...refillParams(counter.refill),
          "set" in valid ? valid.set : null,
          "add" in valid ? valid.add : anchor ? 0 : null,
        ],
        undefined,
        deadline,
        sentAt,
      ).catch((error) => {
        // No credit_change_before taking p_anchor (undefined_function): the migration is missing.
        if (!anchor || (error as { cause?: { code?: unknown } }).cause?.code !== "42883") {
          throw error;
        }
        throw new TypeError(
          "the PostgreSQL rate-limit store misses credit_change_before of " +
            `${ANCHOR_MIGRATION}: apply prisma/migrations/${ANCHOR_MIGRATION}/migration.sql`,
          { cause: error },
        );
      });
      if (row?.applied !== true) return null;
      const answer = {
        allowed: true,
        remaining: Number(row.remaining),
        resetMs: Number(row.reset_ms),
      };
      return row.before === null ? answer : { ...answer, before: Number(row.before) };
    },
    async readCredits(counters) {
      if (counters.length === 0) return [];
      const refills = counters.map((c) => refillParams(c.refill));
      const rows = await run(READ_SQL, [
        counters.map((c) => c.subject),
        counters.map((c) => c.name),
        ...[0, 1, 2].map((i) => refills.map((r) => r[i])),
      ]);
      return counters.map((_, i) =>
        rows[i]?.balance === null || rows[i] === undefined
          ? null
          : { allowed: true, remaining: Number(rows[i].balance), resetMs: Number(rows[i].reset_ms) }
      );
    },
    async deleteExpired() {
      const [row] = await run(DELETE_SQL, undefined, undefined, Infinity); // the caller's wait
      return Number(row?.n ?? 0);
    },
    async ready(warn = logger ?? console.warn) {
      const rows = await run(READY_SQL, [MIGRATIONS.flatMap(([, functions]) => functions)]);
      const found = new Set(rows.flatMap((row) => [row.name, `${row.name} of ${row.version}`]));
      // What each migration leaves, in the order they apply: the first one missing is named.
      const missing = [
        ...MIGRATIONS.flatMap(([migration, functions]) =>
          functions.map((name) => [migration, name])
        ),
        ...VERSIONS.map(([name, migration]) => [migration, `${name} of ${migration}`]),
      ].filter(([, wanted]) => !found.has(wanted)).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
      if (missing.length > 0) {
        const [migration] = missing[0];
        const names = missing.filter(([m]) => m === migration).map(([, name]) => name);
        // The later migrations missing too, so one round applies them all.
        const later = [...new Set(missing.map(([m]) => m))].slice(1);
        throw new TypeError(
          `the PostgreSQL rate-limit store misses ${names.join(", ")}: ` +
            `apply prisma/migrations/${migration}/migration.sql` +
            (later.length === 0 ? "" : `, then ${listed(later)} (each ` +
              "prisma/migrations/<name>/migration.sql, in this order)"),
        );
      }
      const grants = grantsError(
        rows,
        await run(GRANTS_SQL, [
          PRIVILEGES.flatMap(([table, privileges]) => privileges.map(() => table)),
          PRIVILEGES.flatMap(([, privileges]) => privileges),
        ]),
      );
      if (grants !== undefined) throw grants;
      const [settings] = await run(SETTINGS_SQL);
      if (settings?.read_only !== "off") {
        throw new TypeError(
          "the PostgreSQL rate-limit store's connection is read-only (a standby, or " +
            "default_transaction_read_only on): every check writes; connect it to the primary",
        );
      }
      // PostgreSQL runs read uncommitted as read committed.
      if (settings.isolation !== "read committed" && settings.isolation !== "read uncommitted") {
        throw new TypeError(
          `the PostgreSQL rate-limit store's connection runs at ${settings.isolation} ` +
            "(default_transaction_isolation): its functions lock rows by read committed's rule, " +
            "and at another level concurrent checks of one counter fail as an outage; set it to " +
            "read committed for the store's role (docs/operations.md)",
        );
      }
      const notice = upgradesNotice(rows);
      if (notice !== undefined && !upgradesReported) {
        upgradesReported = true;
        try {
          warn(notice);
        } catch {
          // A logger's throw never fails start-up.
        }
      }
      // Three readings of the clock: the tightest offset wins (a slow first reply makes deadlines early).
      for (let i = 0; i < 3; i++) await run(TIME_SQL);
    },
    close: stopReporting,
  };
}
