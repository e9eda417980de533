-- rate_limit_bucket_batch (a batch: checks queued behind the calls in flight) creates its missing
-- window rows, then locks every row; `deleteExpired` (the sweep) could remove an expired row between
-- the two (the insert found it there, so created none), and the batch then read that row as none:
-- its check answered a refusal without `remaining`, or, when a row came after it, the batch failed
-- on the table's `rate_limit_buckets_counts` check (every check of the batch a TypeError). Now the
-- missing rows are created again until every row is locked. Answers, locks and the rows' units are
-- otherwise unchanged. Apply like the others, with the same search_path as they were (this
-- migration reads the schema from it):
-- `psql "$DATABASE_URL" -f prisma/migrations/0035_rate_limit_batch_rows_swept/migration.sql`.
--
-- * rate_limit_bucket_batch of 0034 is replaced with only that added; it keeps its comments;
--   `ready()` finds this migration's version by its name in the body.
-- * Then it gets 0023's search_path and 0024's `enable_seqscan` off again (CREATE OR REPLACE sets
--   FROM CURRENT first). Fails first, changing nothing, when the current schema does not hold it.
--   Applied again, it changes nothing.
-- * Nothing restarts; instances of every release keep working. Open sessions take it at their next
--   call (a function replaced or altered is compiled anew by each session).

-- The schema of the earlier migrations, or nothing changes.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_proc p
      WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
        AND p.proname = 'rate_limit_bucket_batch') THEN
    RAISE EXCEPTION 'schema % does not hold rate_limit_bucket_batch: apply with the search_path of the earlier migrations',
      current_schema();
  END IF;
END
$$;

-- rate_limit_bucket_batch of 0034, every row locked even when the sweep removed one (see above).
CREATE OR REPLACE FUNCTION rate_limit_bucket_batch(
  p_deadlines BIGINT[], p_windows_of INT[], p_credits_of INT[],
  r_subjects TEXT[], r_names TEXT[], r_windows BIGINT[],
  w_rows INT[], w_limits BIGINT[], w_costs BIGINT[],
  b_subjects TEXT[], b_names TEXT[], b_initials BIGINT[], b_initial_ats BIGINT[],
  b_amounts BIGINT[], b_everys BIGINT[], b_days INT[],
  c_rows INT[], c_costs BIGINT[],
  OUT check_no INT, OUT allowed BOOLEAN, OUT remaining BIGINT, OUT reset_ms BIGINT, OUT now_ms BIGINT
) RETURNS SETOF RECORD LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  bk CONSTANT BIGINT := 10;  -- B: sub-buckets per window; a check counts B + 1 of them
  n_slots CONSTANT INT := 11;
  max_ms CONSTANT BIGINT := 9007199254740991; -- 2^53 - 1: the last ms a JavaScript number holds
  t_now BIGINT;              -- the batch's time: every check counts at it (Redis reads TIME once too)
  cnt BIGINT[] := '{}';      -- per row r: its ring at (r - 1) * 11 + 1 .. r * 11 (slot q % 11)
  hd BIGINT[] := '{}';       -- per row: its newest sub-bucket
  tt BIGINT[] := '{}';       -- per row: units in its ring
  dirty BOOLEAN[] := '{}';   -- per row: consumed in this batch
  bal BIGINT[] := '{}';      -- per balance: credits now
  b_reset BIGINT[] := '{}';
  b_dirty BOOLEAN[] := '{}';
  cs BIGINT[];
  h BIGINT;
  q BIGINT;
  x BIGINT;
  w BIGINT;
  at_ms BIGINT;
  freed BIGINT;
  need BIGINT;
  base INT;
  w_at INT := 0;
  c_at INT := 0;
  fit BOOLEAN;
  consumed BOOLEAN;
  r INT;
  tot BIGINT;
  readable BOOLEAN;
  locked INT;                -- rows locked so far (each row once: the rows are distinct)
BEGIN
  -- A lock held elsewhere (a stuck transaction) is waited for until the batch's last deadline at most.
  PERFORM set_config('lock_timeout', least(600000, greatest(1, (SELECT max(d) FROM unnest(p_deadlines) AS d)
    - floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)) || 'ms', true);
  -- Rows created at now's sub-bucket and its expiry (0034_rate_limit_rows_created_at_now), so the
  -- update counting one leaves its indexed columns as they are (a HOT update); then locked, in
  -- order. An expired row the insert found can be swept (`deleteExpired`) before it is locked: the
  -- lock skips it, and a row read as none would fail the whole batch. Until every row is locked,
  -- the missing ones are created again (0035_rate_limit_batch_rows_swept): a row created now is
  -- not expired, so a second pass locks them all; a third failing is an outage (40001).
  FOR attempt IN 1..3 LOOP
    t_now := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
    INSERT INTO rate_limit_buckets (subject, name, window_ms, head, counts, expires_at)
      SELECT s, nm, wm, z.q, array_fill(0::BIGINT, ARRAY[n_slots]),
        to_timestamp(ceil(((z.q + n_slots) * wm)::NUMERIC / bk) / 1000.0)
      FROM unnest(r_subjects, r_names, r_windows) AS u(s, nm, wm)
      CROSS JOIN LATERAL (SELECT floor((t_now * bk)::NUMERIC / wm)::BIGINT AS q) z
      ORDER BY s, nm, wm
      ON CONFLICT (subject, name, window_ms) DO NOTHING;
    SELECT count(*) INTO locked FROM (SELECT s, nm, wm
        FROM unnest(r_subjects, r_names, r_windows) AS u(s, nm, wm) ORDER BY s, nm, wm) u
      CROSS JOIN LATERAL (SELECT 1 FROM rate_limit_buckets c
        WHERE c.subject = u.s AND c.name = u.nm AND c.window_ms = u.wm FOR UPDATE) l;
    EXIT WHEN locked = cardinality(r_names);
    IF attempt = 3 THEN
      RAISE EXCEPTION USING ERRCODE = '40001',
        MESSAGE = 'rate_limit_bucket_batch: its rows were swept as it locked them, three times';
    END IF;
  END LOOP;
  IF cardinality(b_names) > 0 THEN
    PERFORM credit_lock(b_subjects, b_names, b_initials, b_initial_ats);
  END IF;
  t_now := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
  -- Each row moved to now: the sub-buckets that left are cleared (at most 11).
  FOR i IN 1..cardinality(r_names) LOOP
    SELECT c.head, c.counts INTO h, cs FROM rate_limit_buckets c
      WHERE c.subject = r_subjects[i] AND c.name = r_names[i] AND c.window_ms = r_windows[i];
    -- A head below 0 or past 2^53 - 1 ms: unreadable (the store never writes one).
    IF h < 0 OR h > max_ms * bk / r_windows[i] - n_slots THEN
      RAISE EXCEPTION USING ERRCODE = 'RL001', MESSAGE = format(
        'rate_limit_buckets row (%L, %L, %s) is unreadable: its head %s is out of range',
        r_subjects[i], r_names[i], r_windows[i], h);
    END IF;
    q := floor((t_now * bk)::NUMERIC / r_windows[i])::BIGINT;
    IF q - h >= n_slots THEN
      cs := array_fill(0::BIGINT, ARRAY[n_slots]);
      h := q;
    ELSIF q > h THEN
      x := h + 1;
      WHILE x <= q LOOP
        cs[x % n_slots + 1] := 0;
        x := x + 1;
      END LOOP;
      h := q;
    END IF;
    -- (A clock that stepped back leaves the row at its newest sub-bucket.)
    hd[i] := h;
    -- Its units summed and read (the sub-buckets that left are 0): each one NULL or negative is
    -- unreadable.
    SELECT sum(v), bool_and(v IS NOT NULL AND v >= 0) INTO tot, readable FROM unnest(cs) AS v;
    IF NOT readable THEN
      RAISE EXCEPTION USING ERRCODE = 'RL001', MESSAGE = format(
        'rate_limit_buckets row (%L, %L, %s) is unreadable: a unit NULL or negative (%s)',
        r_subjects[i], r_names[i], r_windows[i], cs);
    END IF;
    tt[i] := tot;
    cnt := cnt || cs;
    dirty[i] := false;
  END LOOP;
  FOR j IN 1..cardinality(b_names) LOOP
    SELECT f.balance, f.reset_ms INTO freed, need
      FROM credit_refill(b_subjects[j], b_names[j], b_amounts[j], b_everys[j], b_days[j], t_now) f;
    bal[j] := freed;
    b_reset[j] := need;
    b_dirty[j] := false;
  END LOOP;

  FOR p IN 1..cardinality(p_deadlines) LOOP
    check_no := p;
    now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
    IF now_ms >= p_deadlines[p] THEN
      allowed := NULL;
      remaining := NULL;
      reset_ms := NULL;
      RETURN NEXT;
    ELSE
      -- Every counter's fit first (all or nothing), then the answers and the changes.
      fit := true;
      FOR i IN w_at + 1..w_at + p_windows_of[p] LOOP
        fit := fit AND tt[w_rows[i]] + w_costs[i] <= w_limits[i];
      END LOOP;
      FOR j IN c_at + 1..c_at + p_credits_of[p] LOOP
        fit := fit AND bal[c_rows[j]] >= c_costs[j];
      END LOOP;
      FOR i IN w_at + 1..w_at + p_windows_of[p] LOOP
        r := w_rows[i];
        w := r_windows[r];
        base := (r - 1) * n_slots + 1;
        consumed := fit AND w_costs[i] > 0;
        IF consumed THEN
          cnt[base + (hd[r] % n_slots)::INT] := cnt[base + (hd[r] % n_slots)::INT] + w_costs[i];
          tt[r] := tt[r] + w_costs[i];
          dirty[r] := true;
        END IF;
        -- A clock that stepped back counts at the start of the newest sub-bucket.
        at_ms := greatest(t_now, ceil((hd[r] * w)::NUMERIC / bk)::BIGINT);
        remaining := w_limits[i] - tt[r];
        IF consumed OR tt[r] + w_costs[i] <= w_limits[i] THEN
          -- Allowed: ms until the oldest counted sub-bucket with units leaves (0: none).
          allowed := true;
          reset_ms := 0;
          IF tt[r] > 0 THEN
            x := hd[r] - bk;
            WHILE x <= hd[r] LOOP
              IF cnt[base + (x % n_slots)::INT] > 0 THEN
                reset_ms := ceil(((x + n_slots) * w)::NUMERIC / bk)::BIGINT - at_ms;
                EXIT;
              END IF;
              x := x + 1;
            END LOOP;
          END IF;
        ELSE
          -- Refused: ms until enough sub-buckets left for this cost (windowMs past the limit).
          allowed := false;
          reset_ms := w;
          IF w_costs[i] <= w_limits[i] THEN
            need := tt[r] + w_costs[i] - w_limits[i];
            freed := 0;
            x := hd[r] - bk;
            WHILE x <= hd[r] LOOP
              freed := freed + cnt[base + (x % n_slots)::INT];
              IF freed >= need THEN
                reset_ms := ceil(((x + n_slots) * w)::NUMERIC / bk)::BIGINT - at_ms;
                EXIT;
              END IF;
              x := x + 1;
            END LOOP;
          END IF;
        END IF;
        RETURN NEXT;
      END LOOP;
      FOR j IN c_at + 1..c_at + p_credits_of[p] LOOP
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
    w_at := w_at + p_windows_of[p];
    c_at := c_at + p_credits_of[p];
  END LOOP;

  -- Each row that consumed written once, with when its newest sub-bucket leaves.
  FOR i IN 1..cardinality(r_names) LOOP
    CONTINUE WHEN NOT dirty[i];
    base := (i - 1) * n_slots + 1;
    UPDATE rate_limit_buckets SET head = hd[i], counts = cnt[base:base + n_slots - 1],
        expires_at = to_timestamp(ceil(((hd[i] + n_slots) * r_windows[i])::NUMERIC / bk) / 1000.0)
      WHERE subject = r_subjects[i] AND name = r_names[i] AND window_ms = r_windows[i];
  END LOOP;
  FOR j IN 1..cardinality(b_names) LOOP
    CONTINUE WHEN NOT b_dirty[j];
    UPDATE credit_balances SET balance = bal[j], updated_at = now()
      WHERE subject = b_subjects[j] AND name = b_names[j];
  END LOOP;
END
$$;

DO $$
DECLARE
  target TEXT := current_schema();
  f REGPROCEDURE;
BEGIN
  FOR f IN
    SELECT p.oid FROM pg_proc p
    WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = target)
      AND p.proname = 'rate_limit_bucket_batch'
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f, target);
    EXECUTE format('ALTER FUNCTION %s SET enable_seqscan = off', f);
  END LOOP;
END
$$;
