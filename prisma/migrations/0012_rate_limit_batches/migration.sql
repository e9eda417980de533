-- Batches of checks for the PostgreSQL store (`@saferoute/api-kit/rate-limits/postgres`):
-- one statement applies many checks in order, each before its deadline or not
-- at all, and answers the database's clock (the store's clock offset). Apply
-- like the others:
-- `psql "$DATABASE_URL" -f prisma/migrations/0012_rate_limit_batches/migration.sql`.
--
-- * rate_limit_batch creates the missing rows of the whole batch and locks
--   each (subject, name) row once, in (subject, name) order (window rows, then
--   balances when a check has credits; none without): a hot key costs one
--   lock wait per batch, not per request. It reads the clock once (every
--   check counts at that time, as on Redis), loads each row and balance once
--   (the refill due applied), then per check in order compares the clock with
--   the check's deadline: at or past it, the check is skipped (nothing applied, one
--   row with allowed NULL); else it is applied all or nothing, in memory, by
--   the algorithm of rate_limit_check (docs/rate-limits.md). Each changed row
--   and balance is written once at the end. A lock held elsewhere is waited
--   for until the batch's last deadline at most (`lock_timeout`, at most 10 min, local to the
--   statement's transaction; then it fails). The store no longer calls
--   rate_limit_check (kept for what already calls it).
-- * credit_change_before is credit_change of 0009 with a deadline, compared
--   once the balance is locked (waited for until the deadline at most).
-- * credit_read reads balances with the refill due counted, without locking
--   or writing (the refill rule of credit_refill, 0009).
-- * Every function of 0007, 0009 and this migration runs with the
--   search_path current when the migration was applied (the tables' schema).

-- The batch: per check its deadline and how many window and credit counters
-- it has (they follow those of the checks before it in w_* and c_*). Window
-- counters name their row by index into the distinct rows r_*, credit
-- counters their balance by index into the distinct balances b_*.
CREATE FUNCTION rate_limit_batch(
  p_deadlines BIGINT[], p_windows_of INT[], p_credits_of INT[],
  r_subjects TEXT[], r_names TEXT[],
  w_rows INT[], w_limits BIGINT[], w_windows BIGINT[], w_costs BIGINT[],
  b_subjects TEXT[], b_names TEXT[], b_initials BIGINT[], b_initial_ats BIGINT[],
  b_amounts BIGINT[], b_everys BIGINT[], b_days INT[],
  c_rows INT[], c_costs BIGINT[],
  OUT check_no INT, OUT allowed BOOLEAN, OUT remaining BIGINT, OUT reset_ms BIGINT, OUT now_ms BIGINT
) RETURNS SETOF RECORD LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  t_now BIGINT;          -- the batch's time: every check counts at it (Redis reads TIME once too)
  lt BIGINT[] := '{}';   -- the logs of every row as loaded, one after another: times
  lu BIGINT[] := '{}';   -- and units
  l_first INT[] := '{}'; -- per row: where its log starts in lt/lu
  l_last INT[] := '{}';  -- and ends
  at_r BIGINT[] := '{}'; -- per row: the time it counts at (never before its newest entry)
  added BIGINT[] := '{}';-- per row: units this batch added (all at at_r)
  w_max BIGINT[] := '{}';-- per row: the longest window counting it (its log is pruned by it)
  k_row INT[] := '{}';   -- per (row, window) seen: the row
  k_win BIGINT[] := '{}';-- the window
  k_tot BIGINT[] := '{}';-- the loaded units inside it
  k_from INT[] := '{}';  -- the first loaded entry inside it
  bal BIGINT[] := '{}';  -- per balance: credits now
  b_reset BIGINT[] := '{}';
  b_dirty BOOLEAN[] := '{}';
  tot BIGINT[];          -- per window counter of the current check: its total
  key INT[];             -- and its (row, window) slot
  ts BIGINT[];
  us BIGINT[];
  w_at INT := 0;
  c_at INT := 0;
  fit BOOLEAN;
  r INT;
  k INT;
  n INT;
  first_at BIGINT;
  freed BIGINT;
  need BIGINT;
BEGIN
  -- A lock held elsewhere (a stuck transaction) is waited for until the batch's last deadline at most.
  PERFORM set_config('lock_timeout', least(600000, greatest(1, (SELECT max(d) FROM unnest(p_deadlines) AS d)
    - floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)) || 'ms', true);
  INSERT INTO rate_limit_counters (subject, name, expires_at)
    SELECT s, nm, now() FROM unnest(r_subjects, r_names) AS u(s, nm) ORDER BY s, nm
    ON CONFLICT (subject, name) DO NOTHING;
  PERFORM 1 FROM rate_limit_counters c JOIN unnest(r_subjects, r_names) AS u(s, nm)
    ON c.subject = u.s AND c.name = u.nm ORDER BY c.subject, c.name FOR UPDATE OF c;
  IF cardinality(b_names) > 0 THEN
    PERFORM credit_lock(b_subjects, b_names, b_initials, b_initial_ats);
  END IF;
  t_now := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
  FOR i IN 1..cardinality(r_names) LOOP
    SELECT c.times, c.units INTO ts, us FROM rate_limit_counters c
      WHERE c.subject = r_subjects[i] AND c.name = r_names[i];
    l_first[i] := cardinality(lt) + 1;
    lt := lt || ts;
    lu := lu || us;
    l_last[i] := cardinality(lt);
    -- A clock that stepped back counts from the newest entry, keeping the log ordered.
    at_r[i] := greatest(t_now, ts[cardinality(ts)]);
    added[i] := 0;
    w_max[i] := 0;
  END LOOP;
  FOR i IN 1..cardinality(w_rows) LOOP
    w_max[w_rows[i]] := greatest(w_max[w_rows[i]], w_windows[i]);
  END LOOP;
  FOR j IN 1..cardinality(b_names) LOOP
    SELECT f.balance, f.reset_ms INTO freed, need
      FROM credit_refill(b_subjects[j], b_names[j], b_amounts[j], b_everys[j], b_days[j], t_now) f;
    bal[j] := freed;
    b_reset[j] := need;
    b_dirty[j] := false;
  END LOOP;

  FOR q IN 1..cardinality(p_deadlines) LOOP
    check_no := q;
    now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
    IF now_ms >= p_deadlines[q] THEN
      allowed := NULL;
      remaining := NULL;
      reset_ms := NULL;
      RETURN NEXT;
    ELSE
      -- Every counter's total first (all or nothing), then the answers and the changes.
      fit := true;
      tot := '{}';
      key := '{}';
      FOR i IN w_at + 1..w_at + p_windows_of[q] LOOP
        r := w_rows[i];
        k := NULL;
        FOR x IN 1..cardinality(k_row) LOOP
          IF k_row[x] = r AND k_win[x] = w_windows[i] THEN k := x; EXIT; END IF;
        END LOOP;
        IF k IS NULL THEN
          k := cardinality(k_row) + 1;
          k_row[k] := r;
          k_win[k] := w_windows[i];
          k_from[k] := l_first[r];
          WHILE k_from[k] <= l_last[r] AND lt[k_from[k]] <= at_r[r] - w_windows[i] LOOP
            k_from[k] := k_from[k] + 1;
          END LOOP;
          k_tot[k] := 0;
          FOR x IN k_from[k]..l_last[r] LOOP k_tot[k] := k_tot[k] + lu[x]; END LOOP;
        END IF;
        n := i - w_at;
        key[n] := k;
        tot[n] := k_tot[k] + added[r];
        fit := fit AND tot[n] + w_costs[i] <= w_limits[i];
      END LOOP;
      FOR j IN c_at + 1..c_at + p_credits_of[q] LOOP
        fit := fit AND bal[c_rows[j]] >= c_costs[j];
      END LOOP;
      FOR i IN w_at + 1..w_at + p_windows_of[q] LOOP
        r := w_rows[i];
        n := i - w_at;
        k := key[n];
        remaining := w_limits[i] - tot[n];
        first_at := CASE WHEN k_from[k] <= l_last[r] THEN lt[k_from[k]]
          WHEN added[r] > 0 THEN at_r[r] END;
        IF tot[n] + w_costs[i] <= w_limits[i] THEN
          allowed := true;
          reset_ms := CASE WHEN first_at IS NULL THEN 0 ELSE first_at + w_windows[i] - at_r[r] END;
          IF fit AND w_costs[i] > 0 THEN
            remaining := remaining - w_costs[i];
            IF first_at IS NULL THEN reset_ms := w_windows[i]; END IF;
            added[r] := added[r] + w_costs[i];
          END IF;
        ELSE
          allowed := false;
          reset_ms := w_windows[i];
          IF w_costs[i] <= w_limits[i] THEN
            need := tot[n] + w_costs[i] - w_limits[i];
            freed := 0;
            FOR x IN k_from[k]..l_last[r] LOOP
              freed := freed + lu[x];
              IF freed >= need THEN reset_ms := lt[x] + w_windows[i] - at_r[r]; EXIT; END IF;
            END LOOP;
          END IF;
        END IF;
        RETURN NEXT;
      END LOOP;
      FOR j IN c_at + 1..c_at + p_credits_of[q] LOOP
        r := c_rows[j];
        allowed := bal[r] >= c_costs[j];
        remaining := bal[r];
        reset_ms := CASE WHEN NOT allowed AND c_costs[j] > b_amounts[r] THEN -1 ELSE b_reset[r] END;
        IF fit AND c_costs[j] > 0 THEN
          remaining := remaining - c_costs[j];
          bal[r] := remaining;
          b_dirty[r] := true;
        END IF;
        RETURN NEXT;
      END LOOP;
    END IF;
    w_at := w_at + p_windows_of[q];
    c_at := c_at + p_credits_of[q];
  END LOOP;

  -- Each changed row written once: its log pruned by its longest window, this batch's units at the end.
  FOR i IN 1..cardinality(r_names) LOOP
    CONTINUE WHEN added[i] = 0;
    k := l_first[i];
    WHILE k <= l_last[i] AND lt[k] <= at_r[i] - w_max[i] LOOP k := k + 1; END LOOP;
    ts := lt[k:l_last[i]];
    us := lu[k:l_last[i]];
    IF cardinality(ts) > 0 AND ts[cardinality(ts)] = at_r[i] THEN
      us[cardinality(us)] := us[cardinality(us)] + added[i];
    ELSE
      ts := ts || at_r[i];
      us := us || added[i];
    END IF;
    UPDATE rate_limit_counters SET times = ts, units = us,
        expires_at = to_timestamp((at_r[i] + w_max[i]) / 1000.0)
      WHERE subject = r_subjects[i] AND name = r_names[i];
  END LOOP;
  FOR j IN 1..cardinality(b_names) LOOP
    CONTINUE WHEN NOT b_dirty[j];
    UPDATE credit_balances SET balance = bal[j], updated_at = now()
      WHERE subject = b_subjects[j] AND name = b_names[j];
  END LOOP;
END
$$;

-- credit_change of 0009 unless the database's clock is at or past p_deadline once the balance is locked
-- (then applied is false and nothing changes); now_ms is the clock it compared.
CREATE FUNCTION credit_change_before(
  p_deadline BIGINT, p_subject TEXT, p_name TEXT, p_initial BIGINT, p_initial_at BIGINT,
  p_amount BIGINT, p_every BIGINT, p_day INT, p_set BIGINT, p_add BIGINT,
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
