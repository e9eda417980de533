-- A fixed search_path for the functions of the change feed (0002, 0005) and
-- the audit log (0017), as 0012 gave the rate-limit and credit functions:
-- each then resolves its tables and functions in the schema current when
-- this migration was applied (the tables' schema), whatever the caller's
-- search_path. Apply like the others, with the same search_path as they were:
-- `psql "$DATABASE_URL" -f prisma/migrations/0022_function_search_path/migration.sql`.
--
-- * Changes no function's body, arguments or result; nothing restarts.
-- * CREATE OR REPLACE drops the setting: a later migration replacing one of
--   them says SET search_path itself (tests/postgres/search_path_test.ts
--   checks every function of the migrations).

ALTER FUNCTION "api_key_change_emit"(TEXT, TEXT, TEXT) SET search_path FROM CURRENT;
ALTER FUNCTION "api_key_change_notify"() SET search_path FROM CURRENT;
ALTER FUNCTION api_key_audit_append(TEXT, TEXT) SET search_path FROM CURRENT;
