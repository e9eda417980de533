-- Window counters of the PostgreSQL store (`@saferoute/api-kit/rate-limits/postgres`) as a
-- sliding window of sub-buckets (docs/rate-limits.md, "The algorithm: a sliding window of
-- sub-buckets"), replacing the sliding log of 0007. Apply like the others:
-- `psql "$DATABASE_URL" -f prisma/migrations/0015_rate_limit_buckets/migration.sql`.
--
-- * One row per (subject, policy name, window_ms), fixed in size whatever the limit and the
--   traffic: "head", the newest sub-bucket counted, and "counts", the units of its B + 1 = 11
--   ring slots (slot q % 11 holds sub-bucket q; B = SUB_BUCKETS of rate_limits/_window.ts).
--   "expires_at": when nothing is counted any more (the store's `deleteExpired()`).
-- * rate_limit_bucket_batch is rate_limit_batch of 0012 on these rows: it creates the batch's
--   missing rows, locks each once in (subject, name, window_ms) order (then the balances),
--   reads the clock once, loads each row once, applies the checks in order in memory (each
--   before its deadline or not at all, all or nothing) and writes each row that consumed once.
--   Its work per check is constant: no loop runs over the limit or the units counted.
-- * The sliding log (rate_limit_counters, rate_limit_check, rate_limit_batch) is dropped:
--   windows restart once, empty, when this migration is applied (units counted before it are
--   forgotten: for one window a subject may be admitted up to twice its limit). Instances of the
--   previous release fail their checks (their failure policy answers) until they are replaced.
-- * Every function runs with the search_path current when the migration was applied.

DROP FUNCTION IF EXISTS rate_limit_batch(BIGINT[], INT[], INT[], TEXT[], TEXT[], INT[], BIGINT[],
  BIGINT[], BIGINT[], TEXT[], TEXT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[], INT[], INT[], BIGINT[]);
DROP FUNCTION IF EXISTS rate_limit_check(TEXT[], TEXT[], BIGINT[], BIGINT[], BIGINT[]);
DROP FUNCTION IF EXISTS rate_limit_check(TEXT[], TEXT[], BIGINT[], BIGINT[], BIGINT[], TEXT[],
  TEXT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[], BIGINT[], INT[]);
DROP TABLE IF EXISTS "rate_limit_counters";

-- CreateTable
CREATE TABLE "rate_limit_buckets" (
    "subject" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "window_ms" BIGINT NOT NULL,
    "head" BIGINT NOT NULL,
    "counts" BIGINT[] NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "rate_limit_buckets_pkey" PRIMARY KEY ("subject", "name", "window_ms"),
    CONSTRAINT "rate_limit_buckets_counts" CHECK (cardinality("counts") = 11)
);

-- CreateIndex
CREATE INDEX "rate_limit_buckets_expires_at_idx" ON "rate_limit_buckets"("expires_at");

-- The batch: per check its deadline and how many window and credit counters it has (they
-- follow those of the checks before it in w_* and c_*). Window counters name their row by
-- index into the distinct rows r_* (subject, name, window), credit counters their balance by
-- index into the distinct balances b_*.
CREATE FUNCTION rate_limit_bucket_batch(
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
BEGIN
  -- A lock held elsewhere (a stuck transaction) is waited for until the batch's last deadline at most.
  PERFORM set_config('lock_timeout', least(600000, greatest(1, (SELECT max(d) FROM unnest(p_deadlines) AS d)
    - floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)) || 'ms', true);
  INSERT INTO rate_limit_buckets (subject, name, window_ms, head, counts, expires_at)
    SELECT s, nm, wm, 0, array_fill(0::BIGINT, ARRAY[n_slots]), now()
    FROM unnest(r_subjects, r_names, r_windows) AS u(s, nm, wm) ORDER BY s, nm, wm
    ON CONFLICT (subject, name, window_ms) DO NOTHING;
  PERFORM 1 FROM rate_limit_buckets c JOIN unnest(r_subjects, r_names, r_windows) AS u(s, nm, wm)
    ON c.subject = u.s AND c.name = u.nm AND c.window_ms = u.wm
    ORDER BY c.subject, c.name, c.window_ms FOR UPDATE OF c;
  IF cardinality(b_names) > 0 THEN
    PERFORM credit_lock(b_subjects, b_names, b_initials, b_initial_ats);
  END IF;
  t_now := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
  -- Each row moved to now: the sub-buckets that left are cleared (at most 11).
  FOR i IN 1..cardinality(r_names) LOOP
    SELECT c.head, c.counts INTO h, cs FROM rate_limit_buckets c
      WHERE c.subject = r_subjects[i] AND c.name = r_names[i] AND c.window_ms = r_windows[i];
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
    tt[i] := (SELECT sum(v) FROM unnest(cs) AS v);
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
