-- Batches of checks for the PostgreSQL store (`@saferoute/api-kit/rate-limits/postgres`):
-- one statement applies many checks in order, each before its deadline or not
-- at all, and answers the database's clock (the store's clock offset). Apply
-- like the others:
-- `psql "$DATABASE_URL" -f prisma/migrations/0012_rate_limit_batches/migration.sql`.
--
-- * rate_limit_batch creates the missing rows of the whole batch and locks
--   each (subject, name) row once, in (subject, name) order (window rows, then
--   balances when a check has credits): a hot key costs one lock wait per
--   batch, not per request. Then, per check in order, it reads the clock: past
--   the check's deadline, the check is skipped (nothing read or written, one
--   row with allowed NULL); else it is applied all or nothing by
--   rate_limit_check of 0009 (one body holds the window algorithm). A lock
--   held elsewhere is waited for until the batch's last deadline at most
--   (`lock_timeout`, local to the statement's transaction; then it fails).
-- * credit_change_before is credit_change of 0009 with a deadline, compared
--   once the balance is locked (waited for until the deadline at most).
-- * credit_read reads balances with the refill due counted, without locking
--   or writing (the refill rule of credit_refill, 0009).
-- * Every function of 0007, 0009 and this migration runs with the
--   search_path current when the migration was applied (the tables' schema).

-- Per check: its window counters w_*[...] and credit counters c_*[...] follow
-- those of the checks before it (p_windows_of and p_credits_of say how many).
CREATE FUNCTION rate_limit_batch(
  p_deadlines BIGINT[], p_windows_of INT[], p_credits_of INT[],
  w_subjects TEXT[], w_names TEXT[], w_limits BIGINT[], w_windows BIGINT[], w_costs BIGINT[],
  c_subjects TEXT[], c_names TEXT[], c_costs BIGINT[], c_initials BIGINT[], c_initial_ats BIGINT[],
  c_amounts BIGINT[], c_everys BIGINT[], c_days INT[],
  OUT check_no INT, OUT allowed BOOLEAN, OUT remaining BIGINT, OUT reset_ms BIGINT, OUT now_ms BIGINT
) RETURNS SETOF RECORD LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  w_at INT := 0;
  c_at INT := 0;
  w_to INT;
  c_to INT;
  r RECORD;
BEGIN
  -- A lock held elsewhere (a stuck transaction) is waited for until the batch's last deadline at most.
  PERFORM set_config('lock_timeout', greatest(1, (SELECT max(d) FROM unnest(p_deadlines) AS d)
    - floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT) || 'ms', true);
  INSERT INTO rate_limit_counters (subject, name, expires_at)
    SELECT DISTINCT s, nm, now() FROM unnest(w_subjects, w_names) AS u(s, nm) ORDER BY s, nm
    ON CONFLICT (subject, name) DO NOTHING;
  PERFORM 1 FROM rate_limit_counters c
    WHERE (c.subject, c.name) IN (SELECT s, nm FROM unnest(w_subjects, w_names) AS u(s, nm))
    ORDER BY c.subject, c.name FOR UPDATE OF c;
  IF cardinality(c_names) > 0 THEN
    PERFORM credit_lock(c_subjects, c_names, c_initials, c_initial_ats);
  END IF;
  FOR q IN 1..cardinality(p_deadlines) LOOP
    check_no := q;
    w_to := w_at + p_windows_of[q];
    c_to := c_at + p_credits_of[q];
    now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
    IF now_ms > p_deadlines[q] THEN
      allowed := NULL;
      remaining := NULL;
      reset_ms := NULL;
      RETURN NEXT;
    ELSE
      FOR r IN SELECT * FROM rate_limit_check(
        w_subjects[w_at + 1:w_to], w_names[w_at + 1:w_to], w_limits[w_at + 1:w_to],
        w_windows[w_at + 1:w_to], w_costs[w_at + 1:w_to],
        c_subjects[c_at + 1:c_to], c_names[c_at + 1:c_to], c_costs[c_at + 1:c_to],
        c_initials[c_at + 1:c_to], c_initial_ats[c_at + 1:c_to], c_amounts[c_at + 1:c_to],
        c_everys[c_at + 1:c_to], c_days[c_at + 1:c_to]
      ) LOOP
        allowed := r.allowed;
        remaining := r.remaining;
        reset_ms := r.reset_ms;
        RETURN NEXT;
      END LOOP;
    END IF;
    w_at := w_to;
    c_at := c_to;
  END LOOP;
END
$$;

-- credit_change of 0009 unless the database's clock is past p_deadline once the balance is locked
-- (then applied is false and nothing changes); now_ms is the clock it compared.
CREATE FUNCTION credit_change_before(
  p_deadline BIGINT, p_subject TEXT, p_name TEXT, p_initial BIGINT, p_initial_at BIGINT,
  p_amount BIGINT, p_every BIGINT, p_day INT, p_set BIGINT, p_add BIGINT,
  OUT applied BOOLEAN, OUT remaining BIGINT, OUT reset_ms BIGINT, OUT now_ms BIGINT
) LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM set_config('lock_timeout',
    greatest(1, p_deadline - floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT) || 'ms', true);
  PERFORM credit_lock(ARRAY[p_subject], ARRAY[p_name], ARRAY[p_initial], ARRAY[p_initial_at]);
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
  applied := now_ms <= p_deadline;
  IF applied THEN
    SELECT c.remaining, c.reset_ms INTO remaining, reset_ms FROM credit_change(p_subject, p_name,
      p_initial, p_initial_at, p_amount, p_every, p_day, p_set, p_add) c;
  END IF;
END
$$;

-- Balances as they are now, the refill due counted but not written; NULLs for a balance not held.
CREATE FUNCTION credit_read(
  c_subjects TEXT[], c_names TEXT[], c_amounts BIGINT[], c_everys BIGINT[], c_days INT[],
  OUT balance BIGINT, OUT reset_ms BIGINT, OUT now_ms BIGINT
) RETURNS SETOF RECORD LANGUAGE sql SET search_path FROM CURRENT AS $$
  SELECT
    CASE WHEN u.amount > 0 AND p.start_ms > b.as_of THEN u.amount ELSE b.balance END,
    CASE WHEN b.balance IS NULL THEN NULL WHEN p.next_ms < 0 THEN -1 ELSE p.next_ms - t.now_ms END,
    t.now_ms
  FROM (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT AS now_ms) t
  CROSS JOIN unnest(c_subjects, c_names, c_amounts, c_everys, c_days)
    WITH ORDINALITY AS u(s, nm, amount, every, day, i)
  LEFT JOIN credit_balances b ON b.subject = u.s AND b.name = u.nm
  CROSS JOIN LATERAL credit_period(t.now_ms, u.every, u.day) p
  ORDER BY u.i
$$;

ALTER FUNCTION rate_limit_check(TEXT[], TEXT[], BIGINT[], BIGINT[], BIGINT[])
  SET search_path FROM CURRENT;
ALTER FUNCTION rate_limit_check(TEXT[], TEXT[], BIGINT[], BIGINT[], BIGINT[], TEXT[], TEXT[],
  BIGINT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[], INT[]) SET search_path FROM CURRENT;
ALTER FUNCTION credit_boundary(TIMESTAMP, INT) SET search_path FROM CURRENT;
ALTER FUNCTION credit_period(BIGINT, BIGINT, INT) SET search_path FROM CURRENT;
ALTER FUNCTION credit_lock(TEXT[], TEXT[], BIGINT[], BIGINT[]) SET search_path FROM CURRENT;
ALTER FUNCTION credit_refill(TEXT, TEXT, BIGINT, BIGINT, INT, BIGINT) SET search_path FROM CURRENT;
ALTER FUNCTION credit_change(TEXT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, INT, BIGINT, BIGINT)
  SET search_path FROM CURRENT;
