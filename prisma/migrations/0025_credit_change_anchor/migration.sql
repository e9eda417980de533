-- A balance kept across a refill rule change, in one step (docs/rate-limits.md, "Changing a
-- refill rule"): credit_change_before takes p_anchor. With it true (p_set NULL, p_add 0) the
-- balance gets the refill its old rule (the one passed) owes, then its as_of moves to the
-- database's clock: a check passing the new rule gets no refill before that rule's next boundary
-- after the change. Done as two calls instead (the balance read, then set under the new rule), a
-- spend checked between them would be overwritten. Apply like the others, with the same
-- search_path as they were (this migration reads the schema from it):
-- `psql "$DATABASE_URL" -f prisma/migrations/0025_credit_change_anchor/migration.sql`.
--
-- * credit_change_before of 0012 is replaced, in one transaction, by the same function with
--   p_anchor BOOLEAN DEFAULT false last: a call with the ten arguments of every earlier release
--   answers as before. Its comment is this migration's name (the version `ready()` looks for:
--   without it `ready()` logs one line naming this file, and `{ anchor: true }` is refused with
--   a TypeError naming it).
-- * It runs with 0023's search_path (`pg_catalog`, the schema, `pg_temp`) and 0024's
--   `enable_seqscan` off, set as those migrations set them. Fails first, changing nothing, when
--   the current schema does not hold credit_change_before.
-- * Nothing restarts; instances of every release keep working. Open sessions take it at their
--   next call (a function replaced is compiled anew by each session).

BEGIN;

-- The schema of the earlier migrations, or nothing changes.
DO $$
BEGIN
  IF to_regprocedure(format('%I.credit_change_before(BIGINT, TEXT, TEXT, BIGINT, BIGINT, BIGINT, '
      'BIGINT, INT, BIGINT, BIGINT)', current_schema())) IS NULL THEN
    RAISE EXCEPTION 'schema % does not hold credit_change_before: apply with the search_path of the earlier migrations',
      current_schema();
  END IF;
END
$$;

DROP FUNCTION credit_change_before(BIGINT, TEXT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, INT, BIGINT,
  BIGINT);

-- credit_change of 0009 unless the database's clock is at or past p_deadline once the balance is locked
-- (then applied is false and nothing changes); now_ms is the clock it compared. With p_anchor the
-- balance, its refill due applied, is kept as of the database's clock once changed.
CREATE FUNCTION credit_change_before(
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
    SELECT c.remaining, c.reset_ms INTO remaining, reset_ms FROM credit_change(p_subject, p_name,
      p_initial, p_initial_at, p_amount, p_every, p_day, p_set, p_add) c;
    IF p_anchor THEN
      UPDATE credit_balances
        SET as_of = greatest(as_of, floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)
        WHERE subject = p_subject AND name = p_name;
    END IF;
  END IF;
END
$$;

COMMENT ON FUNCTION credit_change_before(BIGINT, TEXT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, INT,
  BIGINT, BIGINT, BOOLEAN) IS '0025_credit_change_anchor';

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
