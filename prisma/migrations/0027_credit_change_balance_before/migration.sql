-- A credit change answers the balance it was applied to (docs/rate-limits.md, "Credits"): the
-- balance with its refill due at now_ms applied, next to the balance after, from the same locked
-- step (the audit log's credits.before of a set, or of an add held at 0 or at the maximum, which
-- the balance after does not tell). Apply like the others, with the same search_path as they
-- were (this migration reads the schema from it):
-- `psql "$DATABASE_URL" -f prisma/migrations/0027_credit_change_balance_before/migration.sql`.
--
-- * credit_change_before of 0026 is replaced, in one transaction, by the same function (the same
--   arguments and answers) answering one more column, remaining_before (NULL when nothing
--   changed). A function's answers cannot change in place: it is dropped and created again, its
--   EXECUTE grants copied over. Its comment is this migration's name (the version `ready()`
--   looks for: without it `ready()` logs one line naming this file, and a credit change is
--   answered without the balance before).
-- * It runs with 0023's search_path (`pg_catalog`, the schema, `pg_temp`) and 0024's
--   `enable_seqscan` off, set as those migrations set them. Fails first, changing nothing, when
--   the current schema does not hold credit_change_before of 0026 (or of this migration: applied
--   again, it changes nothing).
-- * Nothing restarts; instances of every release keep working (they read the columns they name).
--   A credit change in flight as it commits may fail once, as on any error of the database.

BEGIN;

-- The schema of the earlier migrations, or nothing changes.
DO $$
BEGIN
  IF coalesce(obj_description(to_regprocedure(format('%I.credit_change_before(BIGINT, TEXT, TEXT, '
      'BIGINT, BIGINT, BIGINT, BIGINT, INT, BIGINT, BIGINT, BOOLEAN)', current_schema())),
      'pg_proc'), '') NOT IN ('0026_credit_change_anchor_clock', '0027_credit_change_balance_before')
  THEN
    RAISE EXCEPTION 'schema % does not hold credit_change_before of 0026_credit_change_anchor_clock: apply it first, with the search_path of the earlier migrations',
      current_schema();
  END IF;
END
$$;

ALTER FUNCTION credit_change_before(BIGINT, TEXT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, INT,
  BIGINT, BIGINT, BOOLEAN) RENAME TO credit_change_before_replaced;

-- credit_change of 0009 at now_ms unless now_ms (the database's clock once the balance is
-- locked) is at or past p_deadline (then applied is false and nothing changes). With p_anchor the
-- balance, its refill due at now_ms applied, is kept as of now_ms. remaining_before: the balance
-- the change was applied to (its refill due at now_ms applied).
CREATE FUNCTION credit_change_before(
  p_deadline BIGINT, p_subject TEXT, p_name TEXT, p_initial BIGINT, p_initial_at BIGINT,
  p_amount BIGINT, p_every BIGINT, p_day INT, p_set BIGINT, p_add BIGINT,
  p_anchor BOOLEAN DEFAULT false,
  OUT applied BOOLEAN, OUT remaining BIGINT, OUT reset_ms BIGINT, OUT now_ms BIGINT,
  OUT remaining_before BIGINT
) LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM set_config('lock_timeout', least(600000,
    greatest(1, p_deadline - floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)) || 'ms', true);
  PERFORM credit_lock(ARRAY[p_subject], ARRAY[p_name], ARRAY[p_initial], ARRAY[p_initial_at]);
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
  applied := now_ms < p_deadline;
  IF applied THEN
    SELECT r.balance, r.reset_ms INTO remaining_before, reset_ms FROM credit_refill(p_subject,
      p_name, p_amount, p_every, p_day, now_ms) r;
    remaining := coalesce(p_set, greatest(0, least(1000000000000000, remaining_before + p_add)));
    UPDATE credit_balances SET balance = remaining, updated_at = now(),
        as_of = CASE WHEN p_anchor THEN greatest(as_of, now_ms) ELSE as_of END
      WHERE subject = p_subject AND name = p_name;
  END IF;
END
$$;

-- The EXECUTE grants of the function replaced (PUBLIC's only where it had it), then it goes.
DO $$
DECLARE
  replaced CONSTANT regprocedure := 'credit_change_before_replaced(BIGINT, TEXT, TEXT, BIGINT, '
    'BIGINT, BIGINT, BIGINT, INT, BIGINT, BIGINT, BOOLEAN)'::regprocedure;
  fresh CONSTANT regprocedure := 'credit_change_before(BIGINT, TEXT, TEXT, BIGINT, BIGINT, BIGINT, '
    'BIGINT, INT, BIGINT, BIGINT, BOOLEAN)'::regprocedure;
  acl aclitem[];
  role_oid OID;
BEGIN
  SELECT proacl INTO acl FROM pg_proc WHERE oid = replaced;
  IF acl IS NOT NULL THEN
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fresh);
    FOR role_oid IN SELECT DISTINCT a.grantee FROM aclexplode(acl) a
        WHERE a.privilege_type = 'EXECUTE' LOOP
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s', fresh,
        CASE WHEN role_oid = 0 THEN 'PUBLIC' ELSE role_oid::regrole::text END);
    END LOOP;
  END IF;
  EXECUTE format('DROP FUNCTION %s', replaced);
END
$$;

COMMENT ON FUNCTION credit_change_before(BIGINT, TEXT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, INT,
  BIGINT, BIGINT, BOOLEAN) IS '0027_credit_change_balance_before';

DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION credit_change_before(BIGINT, TEXT, TEXT, BIGINT, BIGINT, BIGINT, '
    'BIGINT, INT, BIGINT, BIGINT, BOOLEAN) SET search_path = pg_catalog, %I, pg_temp',
    current_schema());
  ALTER FUNCTION credit_change_before(BIGINT, TEXT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, INT,
    BIGINT, BIGINT, BOOLEAN) SET enable_seqscan = off;
END
$$;

COMMIT;
