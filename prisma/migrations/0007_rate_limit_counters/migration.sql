-- Rate-limit counters of the PostgreSQL store (`@saferoute/api-kit/rate-limits/postgres`):
-- the table behind the model `RateLimitCounter` of prisma/schema.prisma and the
-- function each check calls once (`SELECT ... FROM rate_limit_check(...)`).
-- Apply like the others:
-- `psql "$DATABASE_URL" -f prisma/migrations/0007_rate_limit_counters/migration.sql`.
--
-- * One row per (subject, policy name): the sliding log of accepted units,
--   "times" (ms since the epoch, ascending) and "units" side by side.
-- * "expires_at": when the whole log has left its window; rows past it are
--   idle and may be deleted (the store's `deleteExpired()`).
-- * rate_limit_check locks the rows of a check in (subject, name) order, reads
--   the database's clock once the locks are held, and consumes every counter
--   or none (docs/rate-limits.md).

-- CreateTable
CREATE TABLE "rate_limit_counters" (
    "subject" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "times" BIGINT[] NOT NULL DEFAULT '{}',
    "units" BIGINT[] NOT NULL DEFAULT '{}',
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "rate_limit_counters_pkey" PRIMARY KEY ("subject", "name")
);

-- CreateIndex
CREATE INDEX "rate_limit_counters_expires_at_idx" ON "rate_limit_counters"("expires_at");

CREATE FUNCTION rate_limit_check(
  p_subjects TEXT[], p_names TEXT[], p_limits BIGINT[], p_windows BIGINT[], p_costs BIGINT[],
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
BEGIN
  INSERT INTO rate_limit_counters (subject, name, expires_at)
    SELECT s, nm, now() FROM unnest(p_subjects, p_names) AS u(s, nm) ORDER BY s, nm
    ON CONFLICT (subject, name) DO NOTHING;
  PERFORM 1 FROM rate_limit_counters c JOIN unnest(p_subjects, p_names) AS u(s, nm)
    ON c.subject = u.s AND c.name = u.nm ORDER BY c.subject, c.name FOR UPDATE OF c;
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
END
$$;
