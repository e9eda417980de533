/**
 * Which numbered migration (`prisma/migrations/NNNN_name/`) adds each table,
 * column, function and index, so an error about a missing one names the migration to
 * apply (checked against the SQL files by the test).
 *
 * @module
 */

/**
 * Each database object → the migrations that create it, oldest first (indexes: for the record,
 * never missing in an error). A migration that only alters functions (0022 and 0023, their
 * `search_path`) creates nothing and is not listed.
 */
export const MIGRATION_OF: Readonly<Record<string, readonly string[]>> = {
  // tables
  api_keys: ["0001_init"],
  api_key_change_counter: ["0002_api_key_change_feed"],
  api_key_expiry_notices: ["0004_api_key_expiry"],
  api_key_rotation_waits: ["0004_api_key_expiry"],
  api_key_change_log: ["0005_api_key_change_log"],
  rate_limit_counters: ["0007_rate_limit_counters"],
  credit_balances: ["0009_credit_balances"],
  api_key_usage: ["0010_api_key_usage"],
  api_key_usage_batches: ["0013_api_key_usage_batches"],
  rate_limit_buckets: ["0015_rate_limit_buckets"],
  api_key_audit_heads: ["0017_api_key_audit"],
  api_key_audit: ["0017_api_key_audit"],
  // columns of api_keys
  hash_scheme: ["0003_api_key_hash_scheme"],
  layout: ["0006_api_key_layout"],
  rate_limits: ["0008_api_key_rate_limits"],
  credits: ["0011_api_key_credits"],
  rate_limit_key_id: ["0014_api_key_rate_limit_key_id"],
  // columns of api_key_change_counter
  epoch: ["0029_api_key_change_epoch"],
  // functions
  api_key_change_emit: [
    "0002_api_key_change_feed",
    "0005_api_key_change_log",
    "0032_api_key_change_restore",
  ],
  api_key_change_notify: ["0002_api_key_change_feed"],
  rate_limit_check: ["0007_rate_limit_counters", "0009_credit_balances"],
  credit_boundary: ["0009_credit_balances"],
  credit_change: ["0009_credit_balances"],
  credit_lock: ["0009_credit_balances", "0024_function_keyed_plans"],
  credit_period: ["0009_credit_balances"],
  credit_refill: ["0009_credit_balances"],
  credit_change_before: [
    "0012_rate_limit_batches",
    "0025_credit_change_anchor",
    "0026_credit_change_anchor_clock",
    "0027_credit_change_balance_before",
  ],
  credit_read: ["0012_rate_limit_batches", "0024_function_keyed_plans"],
  rate_limit_batch: ["0012_rate_limit_batches"],
  rate_limit_bucket_batch: [
    "0015_rate_limit_buckets",
    "0024_function_keyed_plans",
    "0031_rate_limit_unreadable_rows",
    "0034_rate_limit_rows_created_at_now",
    "0035_rate_limit_batch_rows_swept",
  ],
  rate_limit_bucket_check: [
    "0019_rate_limit_bucket_check",
    "0020_rate_limit_refusal_read",
    "0024_function_keyed_plans",
    "0031_rate_limit_unreadable_rows",
    "0033_rate_limit_check_in_place",
  ],
  rate_limit_credit_check: [
    "0021_rate_limit_credit_check",
    "0024_function_keyed_plans",
    "0031_rate_limit_unreadable_rows",
    "0034_rate_limit_rows_created_at_now",
  ],
  api_key_audit_append: ["0017_api_key_audit"],
  // indexes
  api_keys_prefix_key: ["0001_init"],
  api_keys_tenant_id_idx: ["0001_init"],
  api_keys_expires_at_id_idx: ["0004_api_key_expiry"],
  rate_limit_counters_expires_at_idx: ["0007_rate_limit_counters"],
  api_key_usage_tenant_id_bucket_idx: ["0010_api_key_usage"],
  api_key_usage_bucket_idx: ["0010_api_key_usage"],
  api_key_usage_batches_recorded_at_idx: ["0013_api_key_usage_batches"],
  rate_limit_buckets_expires_at_idx: ["0015_rate_limit_buckets"],
  api_keys_tenant_id_created_at_id_idx: ["0016_api_key_pages"],
  api_keys_tenant_id_name_id_idx: ["0016_api_key_pages"],
  api_keys_tenant_id_last_used_at_id_idx: ["0016_api_key_pages"],
  api_keys_replaced_by_key_id_idx: ["0016_api_key_pages"],
  api_key_audit_tenant_id_at_idx: ["0017_api_key_audit"],
  api_key_audit_tenant_id_key_id_seq_idx: ["0017_api_key_audit"],
  api_key_audit_tenant_id_actor_seq_idx: ["0030_api_key_audit_filters"],
  api_key_audit_tenant_id_action_seq_idx: ["0030_api_key_audit_filters"],
  api_keys_tenant_id_pool_updated_at_idx: ["0018_api_key_tenant_pool"],
};

/** `column|table|relation|function <name> does not exist`, as PostgreSQL and Prisma word it. */
const MISSING = /\b(column|table|relation|function) [`"]?(?:\w+\.)?"?(\w+)[^\n]*? does not exist/;

/**
 * When `error` says a table, column or function of a known migration does not
 * exist: an `Error` naming the migration to apply, with `error` as its cause;
 * else `undefined`.
 */
export function missingMigrationError(error: unknown): Error | undefined {
  const message = error instanceof Error ? error.message : undefined;
  const match = message === undefined ? null : MISSING.exec(message);
  const migrations = match === null ? undefined : MIGRATION_OF[match[2]];
  if (match === null || migrations === undefined) return undefined;
  const paths = migrations.map((name) => `prisma/migrations/${name}`).join(" and ");
  return new Error(
    `the database has no ${match[1] === "relation" ? "table" : match[1]} ${match[2]}: ` +
      `apply ${paths}`,
    { cause: error },
  );
}
