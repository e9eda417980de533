-- The change feed's trigger function names a safe restore of a lost counter row: above the log's
-- rows (`INSERT INTO api_key_change_counter (n) SELECT coalesce(max(n), 0) FROM
-- api_key_change_log`). The `DEFAULT VALUES` that 0002 and 0005 named restarts the counter at 0,
-- and every key write then failed on the log's primary key until its rows were pruned (5 minutes
-- with a feed running, never without one). Apply like the others, with the same search_path as
-- they were (this migration reads the schema from it):
-- `psql "$DATABASE_URL" -f prisma/migrations/0032_api_key_change_restore/migration.sql`.
--
-- * api_key_change_emit of 0005 is replaced with only its error's text changed; then it gets
--   0023's search_path again (CREATE OR REPLACE sets FROM CURRENT first). Fails first, changing
--   nothing, when the current schema does not hold it. Applied again, it changes nothing.
-- * Nothing restarts; instances of every release keep working (none reads the text).

-- The schema of the earlier migrations, or nothing changes.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_proc p
      WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
        AND p.proname = 'api_key_change_emit') THEN
    RAISE EXCEPTION 'schema % does not hold api_key_change_emit: apply with the search_path of the earlier migrations',
      current_schema();
  END IF;
END
$$;

-- Bumps the counter, records the change and sends the hint; raises when the
-- counter row is gone (the write fails rather than go unseen).
CREATE OR REPLACE FUNCTION "api_key_change_emit"(channel TEXT, kind TEXT, prefix TEXT) RETURNS VOID
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  counter BIGINT;
BEGIN
  UPDATE "api_key_change_counter" SET "n" = "n" + 1 RETURNING "n" INTO counter;
  IF counter IS NULL THEN
    RAISE EXCEPTION 'api_key_change_counter has no row: restore it above the log''s rows with INSERT INTO api_key_change_counter (n) SELECT coalesce(max(n), 0) FROM api_key_change_log';
  END IF;
  IF length(prefix) > 64 THEN
    prefix := NULL;
  END IF;
  INSERT INTO "api_key_change_log" ("n", "kind", "prefix") VALUES (counter, kind, prefix);
  PERFORM pg_notify(channel, counter::TEXT);
END;
$$;

DO $$
DECLARE
  target TEXT := current_schema();
BEGIN
  EXECUTE format(
    'ALTER FUNCTION %I.api_key_change_emit(TEXT, TEXT, TEXT) SET search_path = pg_catalog, %I, pg_temp',
    target, target);
END
$$;
