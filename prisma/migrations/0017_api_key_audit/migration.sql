-- The verifiable audit log (`PrismaApiKeyStorage` option `audit`): one hash
-- chain of records per tenant. Apply like the others:
-- `psql "$DATABASE_URL" -f prisma/migrations/0017_api_key_audit/migration.sql`.
--
-- * "api_key_audit_heads": one row per tenant, the chain's head (last
--   sequence number and hash) and, after pruning, its anchor (the first kept
--   record's sequence number and previous hash). Appending locks this row
--   until the change's transaction ends, so sequence numbers have no gaps,
--   also with several instances writing.
-- * "api_key_audit": the records. "body" is the canonical JSON the library
--   wrote (never a raw key, secret, hash or pepper); "key_id", "actor" and
--   "action" are generated from it for the filters and cannot be written.
-- * "api_key_audit_append(tenant, body)": reads, locks and advances the head
--   and inserts the record, in one statement inside the change's transaction;
--   the record's time is the database clock (ms). Its hash is
--   sha256(prev_hash || '\n' || tenant_id || '\n' || seq || '\n' || at || '\n' || body)
--   in lowercase hex, `at` as ISO 8601 UTC with milliseconds, the first
--   record's prev_hash 64 zeros (api_keys/audit/chain.ts computes the same).
-- * Sizing: about 300 to 600 bytes per record plus indexes; prune with
--   `service.pruneAuditLog` (docs/operations.md, "The audit log").

-- CreateTable
CREATE TABLE "api_key_audit_heads" (
    "tenant_id" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,
    "anchor_seq" BIGINT NOT NULL DEFAULT 1,
    "anchor_prev_hash" TEXT NOT NULL DEFAULT repeat('0', 64),

    CONSTRAINT "api_key_audit_heads_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateTable
CREATE TABLE "api_key_audit" (
    "tenant_id" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "body" TEXT NOT NULL,
    "prev_hash" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "key_id" TEXT GENERATED ALWAYS AS (("body"::jsonb) ->> 'keyId') STORED,
    "actor" TEXT GENERATED ALWAYS AS (("body"::jsonb) ->> 'actor') STORED,
    "action" TEXT GENERATED ALWAYS AS (("body"::jsonb) ->> 'action') STORED,

    CONSTRAINT "api_key_audit_pkey" PRIMARY KEY ("tenant_id", "seq")
);

-- CreateIndex
CREATE INDEX "api_key_audit_tenant_id_at_idx" ON "api_key_audit"("tenant_id", "at");
CREATE INDEX "api_key_audit_tenant_id_key_id_seq_idx" ON "api_key_audit"("tenant_id", "key_id", "seq");

-- CreateFunction
CREATE OR REPLACE FUNCTION api_key_audit_append(p_tenant TEXT, p_body TEXT)
RETURNS TABLE (seq BIGINT, at TIMESTAMPTZ, prev_hash TEXT, hash TEXT)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_at TIMESTAMPTZ;
  v_iso TEXT;
  v_seq BIGINT;
  v_prev TEXT;
  v_hash TEXT;
BEGIN
  -- Locks the head (or creates it) until the transaction ends.
  INSERT INTO api_key_audit_heads AS h (tenant_id, seq, hash)
  VALUES (p_tenant, 0, repeat('0', 64))
  ON CONFLICT (tenant_id) DO UPDATE SET seq = h.seq
  RETURNING h.seq, h.hash INTO v_seq, v_prev;
  -- Read after the lock: times never decrease along a tenant's chain.
  v_at := date_trunc('milliseconds', clock_timestamp());
  v_iso := to_char(v_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
  v_seq := v_seq + 1;
  v_hash := encode(sha256(convert_to(
    v_prev || E'\n' || p_tenant || E'\n' || v_seq::text || E'\n' || v_iso || E'\n' || p_body,
    'UTF8')), 'hex');
  UPDATE api_key_audit_heads SET seq = v_seq, hash = v_hash WHERE tenant_id = p_tenant;
  INSERT INTO api_key_audit (tenant_id, seq, at, body, prev_hash, hash)
  VALUES (p_tenant, v_seq, v_at, p_body, v_prev, v_hash);
  RETURN QUERY SELECT v_seq, v_at, v_prev, v_hash;
END $$;
