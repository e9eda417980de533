-- A refused check of window counters decided from an unlocked read: rate_limit_bucket_check of
-- 0019 (the same parameters and answers) first reads its rows without locking them, and when
-- that read already refuses the check it answers from it: no row lock, no row created, no
-- transaction id, no WAL, so no commit that waits for a WAL flush. Otherwise it goes on exactly
-- as 0019 did: rows locked (created when missing), read again, the clock read, the check
-- decided and written. Apply like the others:
-- `psql "$DATABASE_URL" -f prisma/migrations/0020_rate_limit_refusal_read/migration.sql`.
--
-- Why the refusal stands (docs/rate-limits.md, "Exactness"): a window row only gains units
-- from other transactions. A writer adds its cost in its own newest sub-bucket and clears only
-- sub-buckets that left ITS window, at its clock. Each read here sees the rows as committed
-- before it (or no row: no units), and the clock is read after every read. A writer that
-- committed in between read its clock before its commit, so before this one (one clock: the
-- server's): it cleared nothing this window still counts and only added units. So at this
-- clock the row holds at least the units counted here, a counter that does not fit here does
-- not fit there either, and the locked path would refuse too. Refused is always a safe answer
-- (it fails closed); its remaining and reset_ms follow the same rule as the locked path's, from
-- the rows this read saw.
-- * A clock that stepped back: the row is counted at its newest sub-bucket, as in the locked
--   path (greatest(head, now)); a refusal there is one the locked path gives on the same row.
-- * Cost 0 refuses only a row already past its limit (a limit lowered): the locked path too.
-- * A cost above the limit is refused with no row read or created: the locked path created an
--   empty row and refused.
-- * Several counters: each row read by its own statement (its own snapshot, each before the
--   clock); one counter that does not fit refuses the check, as in the locked path.
-- * The deadline is checked after each read of the clock, as before.
-- * deleteExpired removes a row only once its every unit left (expires_at < now()): nothing this
--   window still counts.
-- * It still runs with the search_path current when the migration was applied.

CREATE OR REPLACE FUNCTION rate_limit_bucket_check(
  p_deadline BIGINT, r_subjects TEXT[], r_names TEXT[], r_windows BIGINT[],
  w_limits BIGINT[], w_costs BIGINT[],
  OUT allowed BOOLEAN, OUT remaining BIGINT, OUT reset_ms BIGINT, OUT now_ms BIGINT
) RETURNS SETOF RECORD LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  bk CONSTANT BIGINT := 10;  -- B: sub-buckets per window; a check counts B + 1 of them
  n_slots CONSTANT INT := 11;
  n CONSTANT INT := cardinality(r_names);
  t_now BIGINT;
  cnt BIGINT[] := '{}';      -- per counter i: its row's ring at (i - 1) * 11 + 1 .. i * 11
  hd BIGINT[] := '{}';       -- per counter: its row's newest sub-bucket
  tt BIGINT[] := '{}';       -- per counter: units in its row's ring
  cs BIGINT[];
  h BIGINT;
  q BIGINT;
  x BIGINT;
  w BIGINT;
  at_ms BIGINT;
  freed BIGINT;
  need BIGINT;
  base INT;
  fit BOOLEAN := true;
  consumed BOOLEAN;
  lock_wait TEXT;
  tot BIGINT;
  oldest BIGINT;
  old BIGINT[] := '{}';      -- per counter: its row's oldest sub-bucket with units (NULL: none)
  k INT;
  locked BOOLEAN;
BEGIN
  IF cardinality(r_subjects) IS DISTINCT FROM n OR cardinality(r_windows) IS DISTINCT FROM n
    OR cardinality(w_limits) IS DISTINCT FROM n OR cardinality(w_costs) IS DISTINCT FROM n THEN
    RAISE EXCEPTION 'rate_limit_bucket_check: arrays of different lengths';
  END IF;
  -- A lock held elsewhere (a stuck transaction) is waited for until the deadline at most.
  -- (An assignment, not PERFORM: a simple expression, evaluated without a query.)
  lock_wait := set_config('lock_timeout', least(600000, greatest(1, p_deadline
    - floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)) || 'ms', true);
  -- First an unlocked read; the rows locked and read again only when it did not refuse.
  FOR pass IN 1..2 LOOP
    locked := pass = 2;
    cnt := '{}';
    hd := '{}';
    fit := true;
    IF NOT locked THEN
      FOR i IN 1..n LOOP
        SELECT c.head, c.counts INTO h, cs FROM rate_limit_buckets c
          WHERE c.subject = r_subjects[i] AND c.name = r_names[i] AND c.window_ms = r_windows[i];
        IF NOT FOUND THEN -- no row yet: no units
          h := 0;
          cs := array_fill(0::BIGINT, ARRAY[n_slots]);
        END IF;
        hd[i] := h;
        cnt := cnt || cs;
      END LOOP;
    ELSE
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
    END IF;
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
    -- Refused by the unlocked read: answered from it, nothing locked or written (see above).
    EXIT WHEN locked OR NOT fit;
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
END
$$;

-- What ready() of the store looks for: this version of the function.
COMMENT ON FUNCTION rate_limit_bucket_check(BIGINT, TEXT[], TEXT[], BIGINT[], BIGINT[], BIGINT[])
  IS '0020_rate_limit_refusal_read';
