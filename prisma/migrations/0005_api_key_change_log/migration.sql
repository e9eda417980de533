-- The change log of `createPostgresFeed`: the trigger of 0002 now records each
-- change (counter, kind, prefix) in "api_key_change_log", and its notice is a
-- wake-up hint only (the payload is the counter, which the feed ignores). The
-- feed reads what it applies from this table, over its own connection, with
-- `n > last counter seen`: anyone who can connect may NOTIFY on the channel,
-- but only a writer of "api_keys" can add a row here. Apply after 0004:
-- `psql "$DATABASE_URL" -f prisma/migrations/0005_api_key_change_log/migration.sql`.
--
-- * One row per change, written in the same transaction as the counter bump,
--   so a read sees every row up to the counter it reads in the same statement.
-- * Retention: every feed deletes rows older than 5 minutes, at most once a
--   minute (`DELETE FROM api_key_change_log WHERE created_at < now() -
--   interval '5 minutes'`, run the same by hand if no feed has DELETE on the
--   table). A feed that finds a row missing resets (drops everything).
-- * Feeds of an older release read the notice as JSON; they ignore this payload
--   and catch each change at their next poll as a reset.
-- * Never write to this table yourself.

-- CreateTable
CREATE TABLE "api_key_change_log" (
    "n" BIGINT NOT NULL,
    "kind" TEXT NOT NULL,
    "prefix" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT clock_timestamp(),

    CONSTRAINT "api_key_change_log_pkey" PRIMARY KEY ("n")
);

-- Bumps the counter, records the change and sends the hint; raises when the
-- counter row is gone (the write fails rather than go unseen).
CREATE OR REPLACE FUNCTION "api_key_change_emit"(channel TEXT, kind TEXT, prefix TEXT) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  counter BIGINT;
BEGIN
  UPDATE "api_key_change_counter" SET "n" = "n" + 1 RETURNING "n" INTO counter;
  IF counter IS NULL THEN
    RAISE EXCEPTION 'api_key_change_counter has no row: restore it with INSERT INTO api_key_change_counter DEFAULT VALUES';
  END IF;
  IF length(prefix) > 64 THEN
    prefix := NULL;
  END IF;
  INSERT INTO "api_key_change_log" ("n", "kind", "prefix") VALUES (counter, kind, prefix);
  PERFORM pg_notify(channel, counter::TEXT);
END;
$$;
