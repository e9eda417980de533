-- The change counter's numbering gets an identity: `epoch`, a random value
-- drawn when the counter row is inserted. A counter row lost and restored
-- (`INSERT INTO api_key_change_counter DEFAULT VALUES`, as the trigger's error
-- advises) restarts at 0 under a new epoch, so `createPostgresFeed` resets even
-- when the restored counter has already passed the last change it delivered
-- (the restore and enough writes in one transaction); without this column it
-- catches only a counter gone below. Apply after 0002 (PostgreSQL 13 or later:
-- `gen_random_uuid()` is built in), with the same search_path as the others:
-- `psql "$DATABASE_URL" -f prisma/migrations/0029_api_key_change_epoch/migration.sql`.
--
-- * Nothing restarts: a running feed reads the epoch from its next
--   connection on; feeds of an older release ignore it.
-- * Applied again, it changes nothing. Never write to this column yourself.

ALTER TABLE "api_key_change_counter"
    ADD COLUMN IF NOT EXISTS "epoch" UUID NOT NULL DEFAULT gen_random_uuid();
