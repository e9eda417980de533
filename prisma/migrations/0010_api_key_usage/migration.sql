-- Usage per key and UTC hour (`ApiKeysService` option `usage`, read by
-- `ApiKeysService.usage`): the table behind the model `ApiKeyUsage` of
-- prisma/schema.prisma. `PrismaApiKeyStorage` writes it with its `usage`
-- option: each flush adds its counts with
-- `INSERT … ON CONFLICT ("key_id", "bucket") DO UPDATE SET n = n + EXCLUDED.n`,
-- 1,000 rows per statement. Apply like the others:
-- `psql "$DATABASE_URL" -f prisma/migrations/0010_api_key_usage/migration.sql`.
--
-- * One row per (key, hour); "tenant_id" is the key's (keys never change
--   tenant), so a tenant's usage is read with the index, without a join.
-- * No foreign key: usage outlives nothing it refers to, and a flush must not
--   wait on "api_keys" locks for the insert.
-- * Prune old hours with one statement (docs/operations.md):
--   DELETE FROM "api_key_usage" WHERE "bucket" < now() - interval '400 days';

-- CreateTable
CREATE TABLE "api_key_usage" (
    "key_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "bucket" TIMESTAMPTZ(3) NOT NULL,
    "accepted" BIGINT NOT NULL DEFAULT 0,
    "invalid" BIGINT NOT NULL DEFAULT 0,
    "revoked" BIGINT NOT NULL DEFAULT 0,
    "expired" BIGINT NOT NULL DEFAULT 0,
    "scope_insufficient" BIGINT NOT NULL DEFAULT 0,
    "environment_mismatch" BIGINT NOT NULL DEFAULT 0,
    "ip_not_allowed" BIGINT NOT NULL DEFAULT 0,
    "rate_limited" BIGINT NOT NULL DEFAULT 0,
    "usage_exceeded" BIGINT NOT NULL DEFAULT 0,
    "cost" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "api_key_usage_pkey" PRIMARY KEY ("key_id", "bucket")
);

-- CreateIndex
CREATE INDEX "api_key_usage_tenant_id_bucket_idx" ON "api_key_usage"("tenant_id", "bucket");

-- CreateIndex
CREATE INDEX "api_key_usage_bucket_idx" ON "api_key_usage"("bucket");
