#!/usr/bin/env bash
# Starts a local PostgreSQL for the Prisma storage suite (tests/postgres/) and
# prints the DATABASE_URL to use, as the last line of its output:
#
#   eval "$(bash scripts/start_postgres.sh | tail -n 1)"   # exports DATABASE_URL
#
# Installs Debian's `postgresql` when it is missing (needs root), starts the
# distribution's cluster on 127.0.0.1, (re)creates a role and an empty database
# (and creates "<role>_outsider", password "outsider", which may only connect),
# applies prisma/migrations/*/migration.sql with psql (the Prisma schema engine
# cannot be downloaded here, so `prisma migrate` is not used) and generates the
# Prisma Client into generated/prisma. Safe to run again: the database is
# recreated empty each time.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_PORT=${PG_PORT:-5432}
PG_USER=${PG_USER:-api_kit}
PG_PASSWORD=${PG_PASSWORD:-api_kit}
PG_DB=${PG_DB:-api_kit_test}

log() { echo "start_postgres: $*" >&2; }
# Any failing step: say which and why on stderr, and exit non-zero (no DATABASE_URL is printed).
trap 'rc=$?; log "FAILED (exit $rc) at line $LINENO: $BASH_COMMAND; no DATABASE_URL printed"; exit $rc' ERR

if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  log "installing postgresql from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
fi

PG_VERSION=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$PG_VERSION main"; then
  log "creating cluster $PG_VERSION/main"
  pg_createcluster "$PG_VERSION" main --port "$PG_PORT" >&2
fi
CLUSTER_PORT=$(pg_lsclusters -h | awk -v v="$PG_VERSION" '$1==v && $2=="main" {print $3}')
if [ "$CLUSTER_PORT" != "$PG_PORT" ]; then
  log "cluster $PG_VERSION/main uses port $CLUSTER_PORT; using that"
  PG_PORT=$CLUSTER_PORT
fi

if ! pg_isready -q -h 127.0.0.1 -p "$PG_PORT"; then
  log "starting cluster $PG_VERSION/main on 127.0.0.1:$PG_PORT"
  pg_ctlcluster "$PG_VERSION" main start -- -o "-c listen_addresses=127.0.0.1" >&2 ||
    pg_ctlcluster "$PG_VERSION" main start >&2
  for _ in $(seq 1 30); do
    pg_isready -q -h 127.0.0.1 -p "$PG_PORT" && break
    sleep 1
  done
fi
pg_isready -h 127.0.0.1 -p "$PG_PORT" >&2

psql_admin() { (cd / && su postgres -c "psql -v ON_ERROR_STOP=1 -q -p $PG_PORT $*"); }

log "recreating role $PG_USER and database $PG_DB"
psql_admin "-d postgres" >&2 <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
    CREATE ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD';
  ELSE
    ALTER ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD';
  END IF;
  -- A role with no privilege but CONNECT (every role has it): the forged-notice tests.
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${PG_USER}_outsider') THEN
    CREATE ROLE ${PG_USER}_outsider LOGIN PASSWORD 'outsider';
  END IF;
END \$\$;
DROP DATABASE IF EXISTS $PG_DB WITH (FORCE);
CREATE DATABASE $PG_DB OWNER $PG_USER;
SQL

DATABASE_URL="postgresql://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/$PG_DB"
for migration in prisma/migrations/*/migration.sql; do
  log "applying $migration"
  psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -q -f "$migration" >&2
done

log "generating the Prisma Client into generated/prisma"
# Deno through scripts/deno.mjs (the pinned one in .tools/): a machine with only Node and npm works.
PRISMA_SCHEMA_ENGINE_BINARY=/bin/true node scripts/deno.mjs run -A npm:prisma@7.10.1 generate \
  --schema prisma/schema.prisma >&2

echo "DATABASE_URL=$DATABASE_URL"
