-- Expiry notices and rotations that wait (`ApiKeysService.notifyExpiring`,
-- `rotate(id, { graceStarts: "first-use" })`): the tables behind the models
-- `ApiKeyExpiryNotice` and `ApiKeyRotationWait` of prisma/schema.prisma, which
-- `PrismaApiKeyStorage` uses when given their delegates
-- (`new PrismaApiKeyStorage(prisma, { expiryNotices: prisma.apiKeyExpiryNotice,
-- rotationWaits: prisma.apiKeyRotationWait })`), and the index of the expiry
-- scan. Apply after 0002, like it:
-- `psql "$DATABASE_URL" -f prisma/migrations/0004_api_key_expiry/migration.sql`.
--
-- * "api_key_expiry_notices": one row per key, the smallest notice threshold
--   claimed so far (0: the key's rotation was reported completed). Claims are
--   compare-and-set: an INSERT, or an UPDATE lowering "threshold_ms".
-- * "api_key_rotation_waits": one row per rotation waiting for its new key's
--   first use, written before the rotation itself, so neither table has a
--   foreign key to "api_keys" (a row may name a key that was never stored).
-- * Neither table has change-feed triggers: lowering an old key's expiry is an
--   UPDATE of "api_keys", which the triggers of 0002 already publish.

-- CreateTable
CREATE TABLE "api_key_expiry_notices" (
    "key_id" TEXT NOT NULL,
    "threshold_ms" BIGINT NOT NULL,
    "claimed_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "api_key_expiry_notices_pkey" PRIMARY KEY ("key_id")
);

-- CreateTable
CREATE TABLE "api_key_rotation_waits" (
    "new_key_id" TEXT NOT NULL,
    "old_key_id" TEXT NOT NULL,
    "grace_period_ms" BIGINT NOT NULL,
    "wait_ends_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "api_key_rotation_waits_pkey" PRIMARY KEY ("new_key_id")
);

-- CreateIndex
CREATE INDEX "api_keys_expires_at_id_idx" ON "api_keys"("expires_at", "id");
