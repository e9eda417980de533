-- A rotated key's rate-limit chain (`ApiKeyRecord.rateLimitKeyId`): the id of
-- its rotation chain's first key, whose window counters every key of the
-- chain counts on, so during a grace the old and the new key share their
-- windows. NULL for a key that was never rotated (it counts on its own id).
-- Used by `PrismaApiKeyStorage` with the options `storesRateLimits: true` and
-- `storesRateLimitKeyId: true` (and the model field `rateLimitKeyId`); without
-- them the column is never written, and a rotated key without credits counts
-- on its own windows. Apply with
-- `psql "$DATABASE_URL" -f prisma/migrations/0014_api_key_rate_limit_key_id/migration.sql`.
--
-- * Nullable, no default: PostgreSQL adds the column without rewriting the
--   table, and existing rows read as keys that count on their own id.
-- * No foreign key: the first key's row may be deleted while its successors
--   still count on its id (the counters live in the limiter's store).

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "rate_limit_key_id" TEXT;
