-- A check of one window counter that consumes in its row's newest sub-bucket (every check of a
-- counter in steady use but the first of each sub-bucket) is counted in place after its unlocked
-- read: one UPDATE that matches the row only as that read read it, instead of a locked read and an
-- update (one statement, one index scan and one WAL record less, no lock record); a row changed in
-- between (another check counted) matches nothing, and the check goes on as before. A new row is
-- inserted at now's sub-bucket and its expiry (not at 0, expiring now), so the update counting it
-- leaves its indexed columns as they are: a HOT update, no index entry more per new counter.
-- Answers, locks and rows are unchanged; a refusal still locks and writes nothing. Apply like the
-- others, with the same search_path as they were (this migration reads the schema from it):
-- `psql "$DATABASE_URL" -f prisma/migrations/0033_rate_limit_check_in_place/migration.sql`.
--
-- * rate_limit_bucket_check of 0031 is replaced with only that added; it keeps its comment (the
--   version `ready()` looks for); `ready()` finds this migration's version by its name in the body.
-- * Then it gets 0023's search_path and 0024's `enable_seqscan` off again (CREATE OR REPLACE sets
--   FROM CURRENT first). Fails first, changing nothing, when the current schema does not hold the
--   function. Applied again, it changes nothing.
-- * Nothing restarts; instances of every release keep working. Open sessions take it at their next
--   call (a function replaced or altered is compiled anew by each session).

-- The schema of the earlier migrations, or nothing changes.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_proc p
      WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
        AND p.proname = 'rate_limit_bucket_check') THEN
    RAISE EXCEPTION 'schema % does not hold rate_limit_bucket_check: apply with the search_path of the earlier migrations',
      current_schema();
  END IF;
END
$$;

-- rate_limit_bucket_check of 0031, with one counter counted in place after the unlocked read (see
-- above) and a new row inserted at now's sub-bucket.
CREATE OR REPLACE FUNCTION rate_limit_bucket_check(
  p_deadline BIGINT, r_subjects TEXT[], r_names TEXT[], r_windows BIGINT[],
  w_limits BIGINT[], w_costs BIGINT[],
  OUT allowed BOOLEAN, OUT remaining BIGINT, OUT reset_ms BIGINT, OUT now_ms BIGINT
) RETURNS SETOF RECORD LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  bk CONSTANT BIGINT := 10;  -- B: sub-buckets per window; a check counts B + 1 of them
  n_slots CONSTANT INT := 11;
  max_ms CONSTANT BIGINT := 9007199254740991; -- 2^53 - 1: the last ms a JavaScript number holds
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
  held BOOLEAN;              -- whether the unlocked read found the row (of one counter)
  counted BOOLEAN := false;  -- one counter counted in place
BEGIN
  IF cardinality(r_subjects) IS DISTINCT FROM n OR cardinality(r_windows) IS DISTINCT FROM n
    OR cardinality(w_limits) IS DISTINCT FROM n OR cardinality(w_costs) IS DISTINCT FROM n THEN
    RAISE EXCEPTION 'rate_limit_bucket_check: arrays of different lengths';
  END IF;
  -- A lock held elsewhere (a stuck transaction) is waited for until the deadline at most.
  -- (An assignment, not PERFORM: a simple expression, evaluated without a query.)
  lock_wait := set_config('lock_timeout', least(600000, greatest(1, p_deadline
    - floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)) || 'ms', true);
  -- First an unlocked read; then, when it did not refuse, one counter counted in place, or the rows
  -- locked and read again.
  FOR pass IN 1..2 LOOP
    locked := pass = 2;
    cnt := '{}';
    hd := '{}';
    fit := true;
    IF NOT locked THEN
      FOR i IN 1..n LOOP
        SELECT c.head, c.counts INTO h, cs FROM rate_limit_buckets c
          WHERE c.subject = r_subjects[i] AND c.name = r_names[i] AND c.window_ms = r_windows[i];
        held := FOUND;
        IF NOT held THEN -- no row yet: no units
          h := 0;
          cs := array_fill(0::BIGINT, ARRAY[n_slots]);
        END IF;
        hd[i] := h;
        cnt := cnt || cs;
      END LOOP;
    ELSE
      IF n > 1 THEN
        -- As rate_limit_bucket_batch: the missing rows created, then every row locked in order.
        -- A row is created at now's sub-bucket and its expiry, so the update counting it leaves
        -- its indexed columns as they are (a HOT update).
        t_now := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
        INSERT INTO rate_limit_buckets (subject, name, window_ms, head, counts, expires_at)
          SELECT s, nm, wm, z.q, array_fill(0::BIGINT, ARRAY[n_slots]),
            to_timestamp(ceil(((z.q + n_slots) * wm)::NUMERIC / bk) / 1000.0)
          FROM unnest(r_subjects, r_names, r_windows) AS u(s, nm, wm)
          CROSS JOIN LATERAL (SELECT floor((t_now * bk)::NUMERIC / wm)::BIGINT AS q) z
          ORDER BY s, nm, wm
          ON CONFLICT (subject, name, window_ms) DO NOTHING;
        PERFORM 1 FROM (SELECT s, nm, wm FROM unnest(r_subjects, r_names, r_windows) AS u(s, nm, wm)
          ORDER BY s, nm, wm) u
          CROSS JOIN LATERAL (SELECT 1 FROM rate_limit_buckets c
            WHERE c.subject = u.s AND c.name = u.nm AND c.window_ms = u.wm FOR UPDATE) l;
      END IF;
      FOR i IN 1..n LOOP
        -- One row: locked here (created first when missing). Several: already locked above.
        SELECT c.head, c.counts INTO h, cs FROM rate_limit_buckets c
          WHERE c.subject = r_subjects[i] AND c.name = r_names[i] AND c.window_ms = r_windows[i]
          FOR UPDATE;
        IF NOT FOUND THEN
          t_now := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
          q := floor((t_now * bk)::NUMERIC / r_windows[i])::BIGINT;
          INSERT INTO rate_limit_buckets (subject, name, window_ms, head, counts, expires_at)
            VALUES (r_subjects[i], r_names[i], r_windows[i], q, array_fill(0::BIGINT, ARRAY[n_slots]),
              to_timestamp(ceil(((q + n_slots) * r_windows[i])::NUMERIC / bk) / 1000.0))
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
      -- A head below 0 or past 2^53 - 1 ms: unreadable (the store never writes one).
      IF h < 0 OR h > max_ms * bk / r_windows[i] - n_slots THEN
        RAISE EXCEPTION USING ERRCODE = 'RL001', MESSAGE = format(
          'rate_limit_buckets row (%L, %L, %s) is unreadable: its head %s is out of range',
          r_subjects[i], r_names[i], r_windows[i], h);
      END IF;
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
        ELSIF x >= 0 AND (cnt[k] IS NULL OR cnt[k] < 0) THEN -- a unit counted (none before 0)
          RAISE EXCEPTION USING ERRCODE = 'RL001', MESSAGE = format(
            'rate_limit_buckets row (%L, %L, %s) is unreadable: a unit NULL or negative (%s)',
            r_subjects[i], r_names[i], r_windows[i], cnt[base:base + n_slots - 1]);
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
    -- In place (0033_rate_limit_check_in_place): one counter consuming, its row read at now's
    -- sub-bucket (its head h is now's q: nothing to clear), counted by one UPDATE that matches the
    -- row only as this read read it (its head and units, compared under its lock): then the check
    -- decided from it stands at its moment (t_now, before the deadline; a lock waited for ends by
    -- it). A row changed since (another check counted) matches nothing: the rows locked and read
    -- again.
    IF n = 1 AND w_costs[1] > 0 AND held AND h = q THEN
      UPDATE rate_limit_buckets c
        SET counts[(q % n_slots)::INT + 1] = c.counts[(q % n_slots)::INT + 1] + w_costs[1]
        WHERE c.subject = r_subjects[1] AND c.name = r_names[1] AND c.window_ms = r_windows[1]
          AND c.head = h AND c.counts = cs;
      counted := FOUND;
    END IF;
    EXIT WHEN counted;
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
      IF NOT counted THEN
        UPDATE rate_limit_buckets SET head = hd[i], counts = cnt[base:base + n_slots - 1],
            expires_at = to_timestamp(ceil(((hd[i] + n_slots) * w)::NUMERIC / bk) / 1000.0)
          WHERE subject = r_subjects[i] AND name = r_names[i] AND window_ms = w;
      END IF;
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

DO $$
DECLARE
  target TEXT := current_schema();
  f REGPROCEDURE;
BEGIN
  SELECT p.oid INTO STRICT f FROM pg_proc p
    WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = target)
      AND p.proname = 'rate_limit_bucket_check';
  EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f, target);
  EXECUTE format('ALTER FUNCTION %s SET enable_seqscan = off', f);
END
$$;
