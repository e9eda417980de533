-- Credit balances of the PostgreSQL store (`@saferoute/api-kit/rate-limits/postgres`):
-- the table behind the model `CreditBalance` of prisma/schema.prisma, and
-- `rate_limit_check` with credit counters (a new overload: window and credit
-- counters in one statement, all or nothing). The 5-argument overload of
-- migration 0007 becomes a call of the new one, so one body holds the window
-- algorithm. Apply like the others:
-- `psql "$DATABASE_URL" -f prisma/migrations/0009_credit_balances/migration.sql`.
--
-- * One row per (subject, name): "balance", and "as_of" (ms since the epoch):
--   when the balance was set, or the refill boundary it last took. A refill is
--   due when the boundary at or before now is later than "as_of"; it sets the
--   balance to the refill amount and "as_of" to that boundary, so each
--   boundary refills once however many instances spend.
-- * Refill boundaries (credit_period): multiples of "every" ms since the
--   epoch, or monthly on "day" (clamped to the month's last day) at 00:00 UTC.
-- * Rows never expire: the table is the balance's home.

-- CreateTable
CREATE TABLE "credit_balances" (
    "subject" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "balance" BIGINT NOT NULL,
    "as_of" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "credit_balances_pkey" PRIMARY KEY ("subject", "name")
);

-- ms since the epoch of day p_day (clamped to the month's length) of the month starting at p_month.
CREATE FUNCTION credit_boundary(p_month TIMESTAMP, p_day INT) RETURNS BIGINT
LANGUAGE sql IMMUTABLE AS $$
  SELECT round(extract(epoch FROM p_month + (least(p_day,
    extract(day FROM p_month + interval '1 month' - interval '1 day')::INT) - 1) * interval '1 day')
    * 1000)::BIGINT
$$;

-- The refill boundaries around p_at: the last at or before it and the first after (0, -1 without a refill).
CREATE FUNCTION credit_period(p_at BIGINT, p_every BIGINT, p_day INT, OUT start_ms BIGINT, OUT next_ms BIGINT)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  m TIMESTAMP := date_trunc('month', 'epoch'::TIMESTAMP + p_at * interval '1 millisecond');
BEGIN
  IF p_every > 0 THEN
    start_ms := p_at - p_at % p_every;
    next_ms := start_ms + p_every;
  ELSIF p_day = 0 THEN
    start_ms := 0;
    next_ms := -1;
  ELSE
    start_ms := credit_boundary(m, p_day);
    next_ms := credit_boundary(m + interval '1 month', p_day);
    IF p_at < start_ms THEN
      next_ms := start_ms;
      start_ms := credit_boundary(m - interval '1 month', p_day);
    END IF;
  END IF;
END
$$;

-- Creates the missing balances (from their initial) and locks them all, in (subject, name) order.
CREATE FUNCTION credit_lock(p_subjects TEXT[], p_names TEXT[], p_initials BIGINT[], p_initial_ats BIGINT[])
RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO credit_balances (subject, name, balance, as_of)
    SELECT s, nm, b, coalesce(a, floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)
    FROM unnest(p_subjects, p_names, p_initials, p_initial_ats) AS u(s, nm, b, a) ORDER BY s, nm
    ON CONFLICT (subject, name) DO NOTHING;
  PERFORM 1 FROM credit_balances c JOIN unnest(p_subjects, p_names) AS u(s, nm)
    ON c.subject = u.s AND c.name = u.nm ORDER BY c.subject, c.name FOR UPDATE OF c;
END
$$;

-- A locked balance at p_now with the refill due applied (and written), and ms to the next refill (-1: none).
CREATE FUNCTION credit_refill(
  p_subject TEXT, p_name TEXT, p_amount BIGINT, p_every BIGINT, p_day INT, p_now BIGINT,
  OUT balance BIGINT, OUT reset_ms BIGINT
) LANGUAGE plpgsql AS $$
DECLARE
  seen BIGINT;
  p RECORD;
BEGIN
  SELECT c.balance, c.as_of INTO balance, seen FROM credit_balances c
    WHERE c.subject = p_subject AND c.name = p_name;
  p := credit_period(p_now, p_every, p_day);
  IF p_amount > 0 AND p.start_ms > seen THEN
    balance := p_amount;
    UPDATE credit_balances SET balance = p_amount, as_of = p.start_ms, updated_at = now()
      WHERE subject = p_subject AND name = p_name;
  END IF;
  reset_ms := CASE WHEN p.next_ms < 0 THEN -1 ELSE p.next_ms - p_now END;
END
$$;

CREATE FUNCTION rate_limit_check(
  p_subjects TEXT[], p_names TEXT[], p_limits BIGINT[], p_windows BIGINT[], p_costs BIGINT[],
  c_subjects TEXT[], c_names TEXT[], c_costs BIGINT[], c_initials BIGINT[], c_initial_ats BIGINT[],
  c_amounts BIGINT[], c_everys BIGINT[], c_days INT[],
  OUT allowed BOOLEAN, OUT remaining BIGINT, OUT reset_ms BIGINT
) RETURNS SETOF RECORD LANGUAGE plpgsql AS $$
DECLARE
  n INT := cardinality(p_names);
  now_ms BIGINT;
  ats BIGINT[] := '{}';
  starts INT[] := '{}';
  totals BIGINT[] := '{}';
  all_fit BOOLEAN := true;
  ts BIGINT[];
  us BIGINT[];
  k INT;
  total BIGINT;
  freed BIGINT;
  balances BIGINT[] := '{}';
  resets BIGINT[] := '{}';
  bal BIGINT;
  rst BIGINT;
BEGIN
  INSERT INTO rate_limit_counters (subject, name, expires_at)
    SELECT s, nm, now() FROM unnest(p_subjects, p_names) AS u(s, nm) ORDER BY s, nm
    ON CONFLICT (subject, name) DO NOTHING;
  PERFORM 1 FROM rate_limit_counters c JOIN unnest(p_subjects, p_names) AS u(s, nm)
    ON c.subject = u.s AND c.name = u.nm ORDER BY c.subject, c.name FOR UPDATE OF c;
  PERFORM credit_lock(c_subjects, c_names, c_initials, c_initial_ats);
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
  FOR i IN 1..n LOOP
    SELECT c.times, c.units INTO ts, us FROM rate_limit_counters c
      WHERE c.subject = p_subjects[i] AND c.name = p_names[i];
    -- A clock that stepped back counts from the newest entry, keeping the log ordered.
    ats[i] := greatest(now_ms, ts[cardinality(ts)]);
    k := 1;
    WHILE k <= cardinality(ts) AND ts[k] <= ats[i] - p_windows[i] LOOP k := k + 1; END LOOP;
    total := 0;
    FOR j IN k..cardinality(ts) LOOP total := total + us[j]; END LOOP;
    starts[i] := k;
    totals[i] := total;
    all_fit := all_fit AND total + p_costs[i] <= p_limits[i];
  END LOOP;
  FOR j IN 1..cardinality(c_names) LOOP
    SELECT r.balance, r.reset_ms INTO bal, rst
      FROM credit_refill(c_subjects[j], c_names[j], c_amounts[j], c_everys[j], c_days[j], now_ms) r;
    balances[j] := bal;
    resets[j] := rst;
    all_fit := all_fit AND balances[j] >= c_costs[j];
  END LOOP;
  FOR i IN 1..n LOOP
    SELECT c.times[starts[i]:], c.units[starts[i]:] INTO ts, us FROM rate_limit_counters c
      WHERE c.subject = p_subjects[i] AND c.name = p_names[i];
    total := totals[i];
    remaining := p_limits[i] - total;
    IF total + p_costs[i] <= p_limits[i] THEN
      allowed := true;
      reset_ms := CASE WHEN cardinality(ts) > 0 THEN ts[1] + p_windows[i] - ats[i] ELSE 0 END;
      IF all_fit AND p_costs[i] > 0 THEN
        remaining := remaining - p_costs[i];
        IF cardinality(ts) = 0 THEN reset_ms := p_windows[i]; END IF;
        IF cardinality(ts) > 0 AND ts[cardinality(ts)] = ats[i] THEN
          us[cardinality(us)] := us[cardinality(us)] + p_costs[i];
        ELSE
          ts := ts || ats[i];
          us := us || p_costs[i];
        END IF;
        UPDATE rate_limit_counters SET times = ts, units = us,
            expires_at = to_timestamp((ats[i] + p_windows[i]) / 1000.0)
          WHERE subject = p_subjects[i] AND name = p_names[i];
      END IF;
    ELSE
      allowed := false;
      reset_ms := p_windows[i];
      freed := 0;
      IF p_costs[i] <= p_limits[i] THEN
        FOR j IN 1..cardinality(ts) LOOP
          freed := freed + us[j];
          IF freed >= total + p_costs[i] - p_limits[i] THEN
            reset_ms := ts[j] + p_windows[i] - ats[i];
            EXIT;
          END IF;
        END LOOP;
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
  FOR j IN 1..cardinality(c_names) LOOP
    allowed := balances[j] >= c_costs[j];
    remaining := balances[j];
    reset_ms := CASE WHEN NOT allowed AND c_costs[j] > c_amounts[j] THEN -1 ELSE resets[j] END;
    IF all_fit AND c_costs[j] > 0 THEN
      remaining := remaining - c_costs[j];
      UPDATE credit_balances SET balance = remaining, updated_at = now()
        WHERE subject = c_subjects[j] AND name = c_names[j];
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION rate_limit_check(
  p_subjects TEXT[], p_names TEXT[], p_limits BIGINT[], p_windows BIGINT[], p_costs BIGINT[],
  OUT allowed BOOLEAN, OUT remaining BIGINT, OUT reset_ms BIGINT
) RETURNS SETOF RECORD LANGUAGE sql AS $$
  SELECT * FROM rate_limit_check(p_subjects, p_names, p_limits, p_windows, p_costs,
    '{}'::TEXT[], '{}'::TEXT[], '{}'::BIGINT[], '{}'::BIGINT[], '{}'::BIGINT[], '{}'::BIGINT[],
    '{}'::BIGINT[], '{}'::INT[])
$$;

-- Sets (p_set) or adds to (p_add, clamped to 0-1e15) a balance after its refill due, in one step.
CREATE FUNCTION credit_change(
  p_subject TEXT, p_name TEXT, p_initial BIGINT, p_initial_at BIGINT, p_amount BIGINT,
  p_every BIGINT, p_day INT, p_set BIGINT, p_add BIGINT,
  OUT remaining BIGINT, OUT reset_ms BIGINT
) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM credit_lock(ARRAY[p_subject], ARRAY[p_name], ARRAY[p_initial], ARRAY[p_initial_at]);
  SELECT r.balance, r.reset_ms INTO remaining, reset_ms FROM credit_refill(p_subject, p_name,
    p_amount, p_every, p_day, floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT) r;
  remaining := coalesce(p_set, greatest(0, least(1000000000000000, remaining + p_add)));
  UPDATE credit_balances SET balance = remaining, updated_at = now()
    WHERE subject = p_subject AND name = p_name;
END
$$;
