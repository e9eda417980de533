-- Audit records start at seq 1 (`api_key_audit_append` of 0017 numbers them
-- from there): a row written by hand at seq 0 or below is refused. Verify,
-- checkpoints and exports read such a row first and name it `inserted`; this
-- keeps it out. Apply like the others, with the same search_path as they were:
-- `psql "$DATABASE_URL" -f prisma/migrations/0028_audit_seq_positive/migration.sql`.
--
-- * The constraint is added `NOT VALID` (a brief ACCESS EXCLUSIVE lock, no
--   scan) and committed, then validated by a scan under SHARE UPDATE
--   EXCLUSIVE: appends go on meanwhile, also under `--single-transaction`
--   (the COMMIT below ends psql's transaction; psql then warns "there is no
--   transaction in progress").
-- * Fails while a row at seq 0 or below exists: the constraint stays, not
--   validated (it already refuses new such rows). Delete the row (after
--   keeping it as evidence) and apply again.
-- * Applied again once validated, it changes nothing and takes no lock on
--   the table. Nothing restarts.

BEGIN;

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'api_key_audit'::regclass
      AND conname = 'api_key_audit_seq_positive') THEN
    ALTER TABLE "api_key_audit" ADD CONSTRAINT "api_key_audit_seq_positive" CHECK ("seq" >= 1)
      NOT VALID;
  END IF;
END
$$;

COMMIT;

DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'api_key_audit'::regclass
      AND conname = 'api_key_audit_seq_positive' AND NOT convalidated) THEN
    ALTER TABLE "api_key_audit" VALIDATE CONSTRAINT "api_key_audit_seq_positive";
  END IF;
END
$$;
