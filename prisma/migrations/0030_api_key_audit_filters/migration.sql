-- The audit log's `actor` and `action` filters (`auditLog`, `GET /audit?actor=` and `?action=`)
-- read an index instead of the tenant's whole chain: (tenant_id, actor, seq) and
-- (tenant_id, action, seq), as 0017's (tenant_id, key_id, seq) serves `keyId`. Apply after 0017,
-- with the same search_path as the others:
-- `psql "$DATABASE_URL" -f prisma/migrations/0030_api_key_audit_filters/migration.sql`.
--
-- * Plain CREATE INDEX, so it runs in one transaction like the others (`--single-transaction`,
--   `prisma migrate deploy`): each build holds a SHARE lock on api_key_audit, so audited changes
--   wait until it ends. On a large table, build them first without that lock, one statement
--   each, outside a transaction (docs/operations.md, "The audit log"):
--   `CREATE INDEX CONCURRENTLY IF NOT EXISTS "api_key_audit_tenant_id_actor_seq_idx" ON
--   "api_key_audit"("tenant_id", "actor", "seq");` and the same for "action"; this migration
--   then changes nothing.
-- * Applied again, it changes nothing. Nothing restarts: the next read uses them.

CREATE INDEX IF NOT EXISTS "api_key_audit_tenant_id_actor_seq_idx"
    ON "api_key_audit"("tenant_id", "actor", "seq");
CREATE INDEX IF NOT EXISTS "api_key_audit_tenant_id_action_seq_idx"
    ON "api_key_audit"("tenant_id", "action", "seq");
