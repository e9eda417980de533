-- Each function of the library runs with search_path exactly
-- `pg_catalog, <the schema of its tables>, pg_temp`. 0012 and 0022 set it
-- FROM CURRENT, which keeps the text of the search_path current when they
-- ran: by default `"$user", public`, and "$user" is read at each call as the
-- calling role. So a schema named after the caller came first (its tables and
-- functions shadowed the library's), a temporary table of the session shadowed
-- a table (pg_temp not named is searched first for tables), and a role calling
-- the functions of tables kept in a schema named after the role that applied
-- the migrations found no table at all. Apply like the others, with the same
-- search_path as they were (this migration reads the schema from it):
-- `psql "$DATABASE_URL" -f prisma/migrations/0023_function_search_path_schema/migration.sql`.
--
-- * pg_catalog first (where PostgreSQL searches it when not named): no object
--   of the schema, whoever may create there, replaces a built-in function or
--   operator; pg_temp last: a temporary table never replaces a table.
-- * Changes no function's body, arguments or result; nothing restarts. Fails
--   (and changes nothing) when the current schema holds none of the functions.
-- * A later migration replacing one of them sets its search_path the same way
--   (tests/postgres/search_path_test.ts checks every function of the schema).

DO $$
DECLARE
  target TEXT := current_schema();
  f REGPROCEDURE;
  altered INT := 0;
BEGIN
  IF target IS NULL THEN
    RAISE EXCEPTION 'no current schema: apply with the search_path of the earlier migrations';
  END IF;
  FOR f IN
    SELECT p.oid FROM pg_proc p
    WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = target)
      AND p.proname IN ('api_key_change_emit', 'api_key_change_notify', 'api_key_audit_append',
        'credit_boundary', 'credit_period', 'credit_lock', 'credit_refill', 'credit_change',
        'credit_change_before', 'credit_read', 'rate_limit_bucket_batch', 'rate_limit_bucket_check',
        'rate_limit_credit_check')
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f, target);
    altered := altered + 1;
  END LOOP;
  IF altered = 0 THEN
    RAISE EXCEPTION 'schema % holds none of the library''s functions: apply with the search_path of the earlier migrations',
      target;
  END IF;
END
$$;
