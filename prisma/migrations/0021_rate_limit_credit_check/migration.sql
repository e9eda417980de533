-- One check of window counters and credit balances in one call, cheaper than
-- rate_limit_bucket_batch of 0015 for the common request with credits
-- (`@saferoute/api-kit/rate-limits/postgres` sends a batch of one check whose window rows and
-- balances are each distinct here): 14 parameters instead of 18 (the store sends one window and
-- one balance as scalars), no index arrays, no batch loop, and each row and balance read once,
-- locked by the statement that reads it (one row: no sort, no join), its refill due applied in
-- memory and written with the spend by one UPDATE. Apply like the others:
-- `psql "$DATABASE_URL" -f prisma/migrations/0021_rate_limit_credit_check/migration.sql`.
--
-- * The same rows, the same rule and the same answers as rate_limit_bucket_batch (one check):
--   window rows locked in (subject, name, window_ms) order, then balances in (subject, name)
--   order (as every function of the store locks them: no deadlock between them), missing ones
--   created (a balance from its initial, as credit_lock), then the clock read; the check is
--   applied before its deadline or not at all (one row with allowed NULL), all or nothing; each
--   window row that consumed and each balance that was spent or refilled is written once. The
--   answers: the window counters in order, then the balances in order.
-- * Durability is the caller's: the store keeps the commit's WAL flush wait for every statement
--   with credits (a balance is money).
-- * The refill rule is credit_refill's of 0009 (credit_period's boundaries): due when the last
--   boundary at or before now is later than as_of; the balance set to the refill amount.
-- * It runs with the search_path current when the migration was applied.

CREATE FUNCTION rate_limit_credit_check(
  p_deadline BIGINT, r_subjects TEXT[], r_names TEXT[], r_windows BIGINT[],
  w_limits BIGINT[], w_costs BIGINT[],
  b_subjects TEXT[], b_names TEXT[], b_initials BIGINT[], b_initial_ats BIGINT[],
  b_amounts BIGINT[], b_everys BIGINT[], b_days INT[], c_costs BIGINT[],
  OUT allowed BOOLEAN, OUT remaining BIGINT, OUT reset_ms BIGINT, OUT now_ms BIGINT
) RETURNS SETOF RECORD LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  bk CONSTANT BIGINT := 10;  -- B: sub-buckets per window; a check counts B + 1 of them
  n_slots CONSTANT INT := 11;
  n CONSTANT INT := cardinality(r_names);
  m CONSTANT INT := cardinality(b_names);
  t_now BIGINT;
  cnt BIGINT[] := '{}';      -- per counter i: its row's ring at (i - 1) * 11 + 1 .. i * 11
  hd BIGINT[] := '{}';       -- per counter: its row's newest sub-bucket
  tt BIGINT[] := '{}';       -- per counter: units in its row's ring
  old BIGINT[] := '{}';      -- per counter: its row's oldest sub-bucket with units (NULL: none)
  bal BIGINT[] := '{}';      -- per balance: credits now (its refill due applied)
  seen BIGINT[] := '{}';     -- per balance: its as_of (moved to the boundary of a refill due)
  b_reset BIGINT[] := '{}';  -- per balance: ms to its next refill (-1: none)
  refilled BOOLEAN[] := '{}';
  cs BIGINT[];
  h BIGINT;
  q BIGINT;
  x BIGINT;
  w BIGINT;
  at_ms BIGINT;
  freed BIGINT;
  need BIGINT;
  start_ms BIGINT;
  next_ms BIGINT;
  base INT;
  fit BOOLEAN := true;
  consumed BOOLEAN;
  lock_wait TEXT;
  tot BIGINT;
  oldest BIGINT;
  k INT;
BEGIN
  IF cardinality(r_subjects) IS DISTINCT FROM n OR cardinality(r_windows) IS DISTINCT FROM n
    OR cardinality(w_limits) IS DISTINCT FROM n OR cardinality(w_costs) IS DISTINCT FROM n
    OR cardinality(b_subjects) IS DISTINCT FROM m OR cardinality(b_initials) IS DISTINCT FROM m
    OR cardinality(b_initial_ats) IS DISTINCT FROM m OR cardinality(b_amounts) IS DISTINCT FROM m
    OR cardinality(b_everys) IS DISTINCT FROM m OR cardinality(b_days) IS DISTINCT FROM m
    OR cardinality(c_costs) IS DISTINCT FROM m THEN
    RAISE EXCEPTION 'rate_limit_credit_check: arrays of different lengths';
  END IF;
  -- A lock held elsewhere (a stuck transaction) is waited for until the deadline at most.
  -- (An assignment, not PERFORM: a simple expression, evaluated without a query.)
  lock_wait := set_config('lock_timeout', least(600000, greatest(1, p_deadline
    - floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)) || 'ms', true);
  IF n > 1 THEN
    -- As rate_limit_bucket_batch: the missing rows created, then every row locked in order.
    INSERT INTO rate_limit_buckets (subject, name, window_ms, head, counts, expires_at)
      SELECT s, nm, wm, 0, array_fill(0::BIGINT, ARRAY[n_slots]), now()
      FROM unnest(r_subjects, r_names, r_windows) AS u(s, nm, wm) ORDER BY s, nm, wm
      ON CONFLICT (subject, name, window_ms) DO NOTHING;
    PERFORM 1 FROM rate_limit_buckets c JOIN unnest(r_subjects, r_names, r_windows) AS u(s, nm, wm)
      ON c.subject = u.s AND c.name = u.nm AND c.window_ms = u.wm
      ORDER BY c.subject, c.name, c.window_ms FOR UPDATE OF c;
  END IF;
  FOR i IN 1..n LOOP
    -- One row: locked here (created first when missing). Several: already locked above.
    SELECT c.head, c.counts INTO h, cs FROM rate_limit_buckets c
      WHERE c.subject = r_subjects[i] AND c.name = r_names[i] AND c.window_ms = r_windows[i]
      FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO rate_limit_buckets (subject, name, window_ms, head, counts, expires_at)
        VALUES (r_subjects[i], r_names[i], r_windows[i], 0, array_fill(0::BIGINT, ARRAY[n_slots]), now())
        ON CONFLICT (subject, name, window_ms) DO NOTHING;
      SELECT c.head, c.counts INTO STRICT h, cs FROM rate_limit_buckets c
        WHERE c.subject = r_subjects[i] AND c.name = r_names[i] AND c.window_ms = r_windows[i]
        FOR UPDATE;
    END IF;
    hd[i] := h;
    cnt := cnt || cs;
  END LOOP;
  IF m > 1 THEN
    PERFORM credit_lock(b_subjects, b_names, b_initials, b_initial_ats); -- created, locked in order
  END IF;
  FOR j IN 1..m LOOP
    -- One balance: locked here (created from its initial first when missing). Several: above.
    SELECT c.balance, c.as_of INTO freed, x FROM credit_balances c
      WHERE c.subject = b_subjects[j] AND c.name = b_names[j] FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO credit_balances (subject, name, balance, as_of)
        VALUES (b_subjects[j], b_names[j], b_initials[j],
          coalesce(b_initial_ats[j], floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT))
        ON CONFLICT (subject, name) DO NOTHING;
      SELECT c.balance, c.as_of INTO STRICT freed, x FROM credit_balances c
        WHERE c.subject = b_subjects[j] AND c.name = b_names[j] FOR UPDATE;
    END IF;
    bal[j] := freed;
    seen[j] := x;
  END LOOP;
  t_now := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
  now_ms := t_now;
  IF t_now >= p_deadline THEN
    RETURN NEXT; -- allowed NULL: skipped
    RETURN;
  END IF;
  -- Each row moved to now in one pass over its ring: the sub-buckets that left cleared, its
  -- units summed, its oldest sub-bucket with units found; then every counter's fit.
  FOR i IN 1..n LOOP
    h := hd[i];
    -- (A clock that stepped back leaves the row at its newest sub-bucket.)
    q := greatest(h, floor((t_now * bk)::NUMERIC / r_windows[i])::BIGINT);
    base := (i - 1) * n_slots + 1;
    tot := 0;
    oldest := NULL;
    x := q - bk;
    WHILE x <= q LOOP
      k := base + (x % n_slots)::INT;
      IF x > h THEN
        cnt[k] := 0; -- the slot still holds a sub-bucket that left
      ELSIF cnt[k] > 0 THEN
        tot := tot + cnt[k];
        oldest := coalesce(oldest, x);
      END IF;
      x := x + 1;
    END LOOP;
    hd[i] := q;
    tt[i] := tot;
    old[i] := oldest;
    fit := fit AND tot + w_costs[i] <= w_limits[i];
  END LOOP;
  -- Each balance at now: the refill due applied (credit_refill's rule), then its fit.
  FOR j IN 1..m LOOP
    refilled[j] := false;
    b_reset[j] := -1;
    IF b_everys[j] > 0 OR b_days[j] > 0 THEN -- (none: nothing ever due, no next refill)
      SELECT p.start_ms, p.next_ms INTO start_ms, next_ms
        FROM credit_period(t_now, b_everys[j], b_days[j]) p;
      IF b_amounts[j] > 0 AND start_ms > seen[j] THEN
        bal[j] := b_amounts[j];
        seen[j] := start_ms;
        refilled[j] := true;
      END IF;
      b_reset[j] := CASE WHEN next_ms < 0 THEN -1 ELSE next_ms - t_now END;
    END IF;
    fit := fit AND bal[j] >= c_costs[j];
  END LOOP;
  FOR i IN 1..n LOOP
    w := r_windows[i];
    base := (i - 1) * n_slots + 1;
    consumed := fit AND w_costs[i] > 0;
    IF consumed THEN
      k := base + (hd[i] % n_slots)::INT;
      cnt[k] := cnt[k] + w_costs[i];
      tt[i] := tt[i] + w_costs[i];
      old[i] := coalesce(old[i], hd[i]);
      UPDATE rate_limit_buckets SET head = hd[i], counts = cnt[base:base + n_slots - 1],
          expires_at = to_timestamp(ceil(((hd[i] + n_slots) * w)::NUMERIC / bk) / 1000.0)
        WHERE subject = r_subjects[i] AND name = r_names[i] AND window_ms = w;
    END IF;
    -- A clock that stepped back counts at the start of the newest sub-bucket.
    at_ms := greatest(t_now, ceil((hd[i] * w)::NUMERIC / bk)::BIGINT);
    remaining := w_limits[i] - tt[i];
    IF consumed OR tt[i] + w_costs[i] <= w_limits[i] THEN
      -- Allowed: ms until the oldest counted sub-bucket with units leaves (0: none).
      allowed := true;
      reset_ms := CASE WHEN old[i] IS NULL THEN 0
        ELSE ceil(((old[i] + n_slots) * w)::NUMERIC / bk)::BIGINT - at_ms END;
    ELSE
      -- Refused: ms until enough sub-buckets left for this cost (windowMs past the limit).
      allowed := false;
      reset_ms := w;
      IF w_costs[i] <= w_limits[i] THEN
        need := tt[i] + w_costs[i] - w_limits[i];
        freed := 0;
        x := hd[i] - bk;
        WHILE x <= hd[i] LOOP
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
  FOR j IN 1..m LOOP
    allowed := bal[j] >= c_costs[j];
    remaining := bal[j];
    reset_ms := CASE WHEN NOT allowed AND c_costs[j] > b_amounts[j] THEN -1 ELSE b_reset[j] END;
    IF fit AND c_costs[j] > 0 THEN
      remaining := remaining - c_costs[j];
      bal[j] := remaining;
    END IF;
    -- Written once: the spend and the refill due together (a refill alone too, as credit_refill).
    IF (fit AND c_costs[j] > 0) OR refilled[j] THEN
      UPDATE credit_balances SET balance = bal[j], as_of = seen[j], updated_at = now()
        WHERE subject = b_subjects[j] AND name = b_names[j];
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
