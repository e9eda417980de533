-- A balance kept across a refill rule change settled and anchored on one reading of the clock
-- (docs/rate-limits.md, "Changing a refill rule"). credit_change_before of 0025 applied the refill
-- due at one reading of the clock (in credit_change) and anchored the balance at a second, later
-- one: a refill boundary falling between the two readings was never applied, neither under the
-- old rule nor the new. Now the balance is settled, changed and anchored at now_ms, the reading
-- it compares with p_deadline and answers. Apply like the others, with the same search_path as
-- they were (this migration reads the schema from it):
-- `psql "$DATABASE_URL" -f prisma/migrations/0026_credit_change_anchor_clock/migration.sql`.
--
-- * credit_change_before of 0025 is replaced, in one transaction, by the same function (the same
--   arguments and answers). Its comment is this migration's name (the version `ready()` looks
--   for: without it `ready()` logs one line naming this file).
-- * It runs with 0023's search_path (`pg_catalog`, the schema, `pg_temp`) and 0024's
--   `enable_seqscan` off, set as those migrations set them. Fails first, changing nothing, when
--   the current schema does not hold credit_change_before of 0025.
-- * Nothing restarts; instances of every release keep working. Open sessions take it at their
--   next call (a function replaced is compiled anew by each session).

BEGIN;

-- The schema of the earlier migrations, or nothing changes.
DO $$
BEGIN
  IF to_regprocedure(format('%I.credit_change_before(BIGINT, TEXT, TEXT, BIGINT, BIGINT, BIGINT, '
      'BIGINT, INT, BIGINT, BIGINT, BOOLEAN)', current_schema())) IS NULL THEN
    RAISE EXCEPTION 'schema % does not hold credit_change_before of 0025_credit_change_anchor: apply it first, with the search_path of the earlier migrations',
      current_schema();
  END IF;
END
$$;

-- credit_change of 0009 at now_ms unless now_ms (the database's clock once the balance is
-- locked) is at or past p_deadline (then applied is false and nothing changes). With p_anchor the
-- balance, its refill due at now_ms applied, is kept as of now_ms.
CREATE OR REPLACE FUNCTION credit_change_before(
  p_deadline BIGINT, p_subject TEXT, p_name TEXT, p_initial BIGINT, p_initial_at BIGINT,
  p_amount BIGINT, p_every BIGINT, p_day INT, p_set BIGINT, p_add BIGINT,
  p_anchor BOOLEAN DEFAULT false,
  OUT applied BOOLEAN, OUT remaining BIGINT, OUT reset_ms BIGINT, OUT now_ms BIGINT
) LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM set_config('lock_timeout', least(600000,
    greatest(1, p_deadline - floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)) || 'ms', true);
  PERFORM credit_lock(ARRAY[p_subject], ARRAY[p_name], ARRAY[p_initial], ARRAY[p_initial_at]);
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
  applied := now_ms < p_deadline;
  IF applied THEN
    SELECT r.balance, r.reset_ms INTO remaining, reset_ms FROM credit_refill(p_subject, p_name,
      p_amount, p_every, p_day, now_ms) r;
    remaining := coalesce(p_set, greatest(0, least(1000000000000000, remaining + p_add)));
    UPDATE credit_balances SET balance = remaining, updated_at = now(),
        as_of = CASE WHEN p_anchor THEN greatest(as_of, now_ms) ELSE as_of END
      WHERE subject = p_subject AND name = p_name;
  END IF;
END
$$;

COMMENT ON FUNCTION credit_change_before(BIGINT, TEXT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, INT,
  BIGINT, BIGINT, BOOLEAN) IS '0026_credit_change_anchor_clock';

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
