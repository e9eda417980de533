-- Audit records start at seq 1 (`api_key_audit_append` of 0017 numbers them
-- from there): a row written by hand at seq 0 or below is refused. Verify,
-- checkpoints and exports read such a row first and name it `inserted`; this
-- keeps it out. Apply like the others, with the same search_path as they were:
-- `psql "$DATABASE_URL" -f prisma/migrations/0028_audit_seq_positive/migration.sql`.
--
-- * Fails, changing nothing, while a row at seq 0 or below exists: delete it
--   (after keeping it as evidence) and apply again.
-- * Applied again, it changes nothing. Nothing restarts.

ALTER TABLE "api_key_audit" DROP CONSTRAINT IF EXISTS "api_key_audit_seq_positive";
ALTER TABLE "api_key_audit" ADD CONSTRAINT "api_key_audit_seq_positive" CHECK ("seq" >= 1);
