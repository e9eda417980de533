-- A key's rate-limit policies (`ApiKeyRecord.rateLimits`): a JSON array of
-- `{ name, limit, windowMs, cost, sharedBy? }`, validated by the service on
-- write and on every read; NULL for a key without policies. Used by
-- `PrismaApiKeyStorage` with the option `storesRateLimits: true` (and the model
-- field `rateLimits`); without the option the column is neither read nor
-- written. Apply with
-- `psql "$DATABASE_URL" -f prisma/migrations/0008_api_key_rate_limits/migration.sql`.
--
-- * Nullable, no default: PostgreSQL adds the column without rewriting the
--   table, and existing rows read as keys without policies.
-- * The counters themselves live in the limiter's store (memory, Redis, or the
--   `rate_limit_counters` table of 0007), not here.

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "rate_limits" JSONB;
