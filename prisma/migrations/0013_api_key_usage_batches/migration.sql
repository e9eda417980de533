-- Idempotent usage flushes (`PrismaApiKeyStorage` option `usageBatches`, with
-- `usage`): the table behind the model `ApiKeyUsageBatch` of
-- prisma/schema.prisma. Each usage write carries a batch id (a UUID the
-- recorder draws per write and keeps while it retries that write); the one
-- statement that adds the rows to "api_key_usage" first inserts the id here
-- with `ON CONFLICT DO NOTHING` and adds the rows only when that insert did,
-- so a write that committed after the storage deadline and is retried is
-- counted once (a retry running while the first write is still open waits
-- for it on the id's key, then skips). Apply like the others:
-- `psql "$DATABASE_URL" -f prisma/migrations/0013_api_key_usage_batches/migration.sql`.
--
-- * One row per write (about one per instance per `flushIntervalMs`).
-- * Prune old ids from a scheduled job (docs/operations.md); keep them longer
--   than any write may be retried (a day is ample):
--   DELETE FROM "api_key_usage_batches" WHERE "recorded_at" < now() - interval '7 days';

-- CreateTable
CREATE TABLE "api_key_usage_batches" (
    "id" TEXT NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "api_key_usage_batches_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "api_key_usage_batches_recorded_at_idx" ON "api_key_usage_batches"("recorded_at");
