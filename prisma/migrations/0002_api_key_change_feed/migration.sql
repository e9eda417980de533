-- The change feed of `createPostgresFeed` (`@saferoute/api-kit/api-keys/postgres`):
-- every committed change to "api_keys" bumps one change counter and sends a
-- notice on the channel `api_key_changes`. See docs/operations.md, "Fleets: the
-- change feed". Apply after 0001_init, like it:
-- `psql "$DATABASE_URL" -f prisma/migrations/0002_api_key_change_feed/migration.sql`.
--
-- * One row, one counter: `n` counts committed changes. Bumping it takes the
--   row lock until the writer commits, so commits happen in counter order (a
--   sequence hands out numbers out of commit order) and a rolled-back write
--   leaves no number behind. Never write to this table yourself.
-- * The triggers are deferred constraint triggers: they run at COMMIT, after
--   the writer's last statement, so the counter lock is always the last lock a
--   writer takes and a rotate (insert, then update) cannot deadlock with a
--   concurrent revoke (update). `SET CONSTRAINTS ALL IMMEDIATE` would undo that.
-- * Updates that change only "last_used_at" (the verify path's best-effort
--   write) are filtered by the trigger's WHEN clause: no counter lock, no notice.
-- * The notice is JSON: {"n": counter, "kind": "created" | "updated" |
--   "revoked" | "rotated" | "deleted" | "truncated", "prefix": text or null}.
--   The prefix is null after a TRUNCATE and for a prefix over 64 characters
--   (never a key of this library; a notice stays far below PostgreSQL's
--   8,000-byte limit); the feed then drops everything.
-- * The channel is the trigger argument: to use another one, change the three
--   `'api_key_changes'` below and pass the same `channel` to `createPostgresFeed`.
-- * Triggers do not fire with `session_replication_role = replica` or when
--   disabled; the feed refuses to become healthy while they are disabled.

-- CreateTable
CREATE TABLE "api_key_change_counter" (
    "id" BOOLEAN NOT NULL DEFAULT true,
    "n" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "api_key_change_counter_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "api_key_change_counter_one_row" CHECK ("id")
);

INSERT INTO "api_key_change_counter" DEFAULT VALUES;

-- Bumps the counter and sends one notice; raises when the counter row is gone
-- (the write fails rather than go unseen).
CREATE FUNCTION "api_key_change_emit"(channel TEXT, kind TEXT, prefix TEXT) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  counter BIGINT;
BEGIN
  UPDATE "api_key_change_counter" SET "n" = "n" + 1 RETURNING "n" INTO counter;
  IF counter IS NULL THEN
    RAISE EXCEPTION 'api_key_change_counter has no row: restore it with INSERT INTO api_key_change_counter DEFAULT VALUES';
  END IF;
  IF length(prefix) > 64 THEN
    prefix := NULL;
  END IF;
  PERFORM pg_notify(channel, json_build_object('n', counter, 'kind', kind, 'prefix', prefix)::TEXT);
END;
$$;

-- The trigger function; TG_ARGV[0] is the channel.
CREATE FUNCTION "api_key_change_notify"() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM "api_key_change_emit"(TG_ARGV[0], 'truncated', NULL);
  ELSIF TG_OP = 'INSERT' THEN
    PERFORM "api_key_change_emit"(TG_ARGV[0], 'created', NEW."prefix");
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM "api_key_change_emit"(TG_ARGV[0], 'deleted', OLD."prefix");
  ELSIF OLD."prefix" IS DISTINCT FROM NEW."prefix" THEN
    PERFORM "api_key_change_emit"(TG_ARGV[0], 'deleted', OLD."prefix");
    PERFORM "api_key_change_emit"(TG_ARGV[0], 'created', NEW."prefix");
  ELSIF OLD."revoked_at" IS NULL AND NEW."revoked_at" IS NOT NULL THEN
    PERFORM "api_key_change_emit"(TG_ARGV[0], 'revoked', NEW."prefix");
  ELSIF OLD."rotated_at" IS DISTINCT FROM NEW."rotated_at" THEN
    PERFORM "api_key_change_emit"(TG_ARGV[0], 'rotated', NEW."prefix");
  ELSE
    PERFORM "api_key_change_emit"(TG_ARGV[0], 'updated', NEW."prefix");
  END IF;
  RETURN NULL;
END;
$$;

-- CreateTrigger
CREATE CONSTRAINT TRIGGER "api_keys_change_insert_delete"
  AFTER INSERT OR DELETE ON "api_keys"
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION "api_key_change_notify"('api_key_changes');

-- CreateTrigger
CREATE CONSTRAINT TRIGGER "api_keys_change_update"
  AFTER UPDATE ON "api_keys"
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
  EXECUTE FUNCTION "api_key_change_notify"('api_key_changes');

-- CreateTrigger
CREATE TRIGGER "api_keys_change_truncate"
  AFTER TRUNCATE ON "api_keys"
  FOR EACH STATEMENT EXECUTE FUNCTION "api_key_change_notify"('api_key_changes');
