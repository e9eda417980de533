-- A key's credits (`ApiKeyRecord.credits`): a JSON object
-- `{ remaining, refill?, updatedAt, balanceKeyId? }`, the balance last written
-- back from the limiter's store, validated by the service on every read; NULL
-- for a key without credits. Used by `PrismaApiKeyStorage` with the option
-- `storesCredits: true` (and the model field `credits`); without the option
-- the column is neither read nor written. Apply with
-- `psql "$DATABASE_URL" -f prisma/migrations/0011_api_key_credits/migration.sql`.
--
-- * Nullable, no default: PostgreSQL adds the column without rewriting the
--   table, and existing rows read as keys without credits.
-- * The live balance lives in the limiter's store (memory, Redis, or the
--   `credit_balances` table of 0009); this column is where it reloads from.

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "credits" JSONB;
