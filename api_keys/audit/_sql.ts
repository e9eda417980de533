/**
 * The SQL of the audit capability of `PrismaApiKeyStorage` over migration
 * `0017_api_key_audit`, and its rows read as records. Appending is one
 * statement (`api_key_audit_append`: the head read, locked and advanced with
 * the insert), sent inside the change's transaction.
 *
 * @module
 */
import { epochMsOf, instantOf, sqlInstant } from "../storage/_sql_instant.ts";
import { GENESIS_HASH } from "./chain.ts";
import type { AuditChainState, AuditReadQuery, StoredAuditRecord } from "./types.ts";

/** Appends a record: `$1` tenant, `$2` body (canonical JSON). */
export const APPEND_AUDIT_SQL = `SELECT seq, ${epochMsOf("at")} AS at, prev_hash, hash ` +
  "FROM api_key_audit_append($1::text, $2::text)";

/**
 * Reads records in `order` and the chain's head and anchor in one statement
 * (one snapshot: an append or a prune committed meanwhile is seen by both or
 * by neither): `$1` tenant, `$2`/`$3` after/before seq, `$4`/`$5` the time
 * window, `$6` key id, `$7` actor, `$8` action, `$9` limit; each filter null
 * when not given. One row per record, each with the head's columns (one row
 * with null record columns when none; null head columns for an empty chain).
 */
export function readAuditSql(order: "asc" | "desc"): string {
  const by = order === "asc" ? "ASC" : "DESC";
  return `WITH head AS (
  SELECT seq, hash, anchor_seq, anchor_prev_hash FROM api_key_audit_heads WHERE tenant_id = $1::text
), page AS (
  SELECT tenant_id, seq, at, body, prev_hash, hash FROM api_key_audit
  WHERE tenant_id = $1::text AND ($2::bigint IS NULL OR seq > $2::bigint)
    AND ($3::bigint IS NULL OR seq < $3::bigint)
    AND ($4::text IS NULL OR at >= $4::text::timestamptz)
    AND ($5::text IS NULL OR at < $5::text::timestamptz)
    AND ($6::text IS NULL OR key_id = $6::text) AND ($7::text IS NULL OR actor = $7::text)
    AND ($8::text IS NULL OR action = $8::text)
  ORDER BY seq ${by} LIMIT $9::int
)
SELECT head.seq AS head_seq, head.hash AS head_hash, head.anchor_seq, head.anchor_prev_hash,
  page.tenant_id, page.seq, ${epochMsOf("page.at")} AS at, page.body, page.prev_hash, page.hash
FROM (SELECT 1) AS one LEFT JOIN head ON true LEFT JOIN page ON true
ORDER BY page.seq ${by}`;
}

/** The parameters of `readAuditSql` for `query`. */
export function readAuditParams(query: AuditReadQuery): unknown[] {
  return [
    query.tenantId,
    query.afterSeq ?? null,
    query.beforeSeq ?? null,
    sqlInstant(query.from),
    sqlInstant(query.to),
    query.keyId ?? null,
    query.actor ?? null,
    query.action ?? null,
    query.limit,
  ];
}

/**
 * Prunes `$1`'s records written before `$2`, keeping the head's record, and
 * sets the anchor to the first kept record, in one statement; answers `n`.
 * The anchor only moves forward: the statement's snapshot predates its wait
 * on the head row's lock, so a prune committed meanwhile is seen through
 * that row only (the locked row is read at its latest version), and the
 * first record kept is never before the anchor it holds.
 */
export const PRUNE_AUDIT_SQL = `WITH head AS (
  SELECT seq, anchor_seq FROM api_key_audit_heads WHERE tenant_id = $1::text FOR UPDATE
), keep AS (
  SELECT a.seq, a.prev_hash FROM api_key_audit a, head
  WHERE a.tenant_id = $1::text AND a.seq >= head.anchor_seq
    AND (a.at >= $2::text::timestamptz OR a.seq = head.seq)
  ORDER BY a.seq LIMIT 1
), gone AS (
  DELETE FROM api_key_audit a USING keep WHERE a.tenant_id = $1::text AND a.seq < keep.seq
  RETURNING 1
), anchored AS (
  UPDATE api_key_audit_heads h SET anchor_seq = keep.seq, anchor_prev_hash = keep.prev_hash
  FROM keep WHERE h.tenant_id = $1::text AND keep.seq > h.anchor_seq
)
SELECT count(*)::int AS n FROM gone`;

const num = (value: unknown): number => typeof value === "bigint" ? Number(value) : value as number;

/** A row of `readAuditSql` or `APPEND_AUDIT_SQL` (with `tenantId` and `body`) as a record. */
export function toStoredAuditRecord(
  row: unknown,
  given?: { tenantId: string; body: string },
): StoredAuditRecord {
  const r = row as Record<string, unknown>;
  return {
    tenantId: (given?.tenantId ?? r.tenant_id) as string,
    seq: num(r.seq),
    at: instantOf(r.at),
    body: (given?.body ?? r.body) as string,
    prevHash: r.prev_hash as string,
    hash: r.hash as string,
  };
}

/** A row of `readAuditSql` (its head's columns; none: an empty chain) as a state. */
export function toAuditChainState(row: unknown): AuditChainState {
  const r = row as Record<string, unknown> | undefined;
  if (r === undefined || r.head_seq === null || r.head_seq === undefined) {
    return { head: null, anchor: { seq: 1, prevHash: GENESIS_HASH } };
  }
  return {
    head: num(r.head_seq) === 0 ? null : { seq: num(r.head_seq), hash: r.head_hash as string },
    anchor: { seq: num(r.anchor_seq), prevHash: r.anchor_prev_hash as string },
  };
}

/** The rows of `readAuditSql` as the records and the state read with them. */
export function toAuditReadAnswer(
  rows: unknown,
): { records: StoredAuditRecord[]; state: AuditChainState } {
  const list = (Array.isArray(rows) ? rows : []) as Record<string, unknown>[];
  return {
    records: list.filter((row) => row.seq !== null && row.seq !== undefined).map((row) =>
      toStoredAuditRecord(row)
    ),
    state: toAuditChainState(list[0]),
  };
}
