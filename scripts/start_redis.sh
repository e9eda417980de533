#!/usr/bin/env bash
# Starts a local Redis for the rate-limit suite (tests/limits/) and prints the
# REDIS_URL to use, as the last line of its output:
#
#   eval "export $(bash scripts/start_redis.sh | tail -n 1)"   # exports REDIS_URL
#
# Installs Debian's `redis-server` when it is missing (needs root) and starts
# it on 127.0.0.1:$REDIS_PORT (default 6379) without persistence, unless one
# already answers there. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

REDIS_PORT=${REDIS_PORT:-6379}

log() { echo "start_redis: $*" >&2; }
# Any failing step: say which and why on stderr, and exit non-zero (no REDIS_URL is printed).
trap 'rc=$?; log "FAILED (exit $rc) at line $LINENO: $BASH_COMMAND; no REDIS_URL printed"; exit $rc' ERR

if ! command -v redis-server >/dev/null 2>&1; then
  log "installing redis-server from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq redis-server >&2
fi

if ! redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
  log "starting redis-server on 127.0.0.1:$REDIS_PORT"
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
    --daemonize yes --logfile "/tmp/redis-$REDIS_PORT.log" --pidfile "/tmp/redis-$REDIS_PORT.pid" >&2
  for _ in $(seq 1 50); do
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
fi
redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >&2

echo "REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
