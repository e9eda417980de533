#!/usr/bin/env bash
# Starts a local Redis for the rate-limit suite (tests/limits/) and prints the
# REDIS_URL to use, as the last line of its output:
#
#   eval "export $(bash scripts/start_redis.sh | tail -n 1)"   # exports REDIS_URL
#
# Installs Debian's `redis-server` when it is missing (needs root) and starts
# it on 127.0.0.1:$REDIS_PORT (default 6379) without persistence, unless one
# already answers there. Safe to run again.
#
#   bash scripts/start_redis.sh --cluster | tail -n 1   # REDIS_CLUSTER_URLS=redis://...,...
#
# --cluster starts a Redis Cluster of 3 masters + 3 replicas on loopback ports
# $REDIS_CLUSTER_PORT (default 7000) to +5, each with `--cluster-enabled yes`,
# joined by `redis-cli --cluster create --cluster-replicas 1`, and prints the
# six node URLs once every replica is in sync with its master (a replica that never synced refuses
# to fail over: the failover tests need them synced; `--repl-diskless-sync-delay 0`, else a master
# waits 5 s for more replicas before the first sync).
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

if [ "${1:-}" = "--cluster" ]; then
  base=${REDIS_CLUSTER_PORT:-7000}
  # A cluster left by an earlier run is kept only when whole (6 nodes, each ok and knowing 6); one
  # whose node was killed (a failover test) and would come back empty is stopped and made anew.
  whole=true
  for i in 0 1 2 3 4 5; do
    info=$(redis-cli -p $((base + i)) cluster info 2>/dev/null || true)
    if ! grep -q "cluster_state:ok" <<<"$info" || ! grep -q "cluster_known_nodes:6" <<<"$info"; then
      whole=false
    fi
  done
  if ! $whole; then
    for i in 0 1 2 3 4 5; do
      port=$((base + i))
      redis-cli -p "$port" ping >/dev/null 2>&1 || continue
      log "stopping 127.0.0.1:$port (the cluster there is not whole)"
      redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
      for _ in $(seq 1 50); do
        redis-cli -p "$port" ping >/dev/null 2>&1 || break
        sleep 0.1
      done
    done
  fi
  nodes=()
  for i in 0 1 2 3 4 5; do
    port=$((base + i))
    nodes+=("127.0.0.1:$port")
    if ! redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1; then
      dir="/tmp/redis-cluster-$port"
      rm -rf "$dir" && mkdir -p "$dir"
      redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
        --cluster-enabled yes --cluster-config-file "$dir/nodes.conf" --cluster-node-timeout 1000 \
        --repl-diskless-sync-delay 0 --dir "$dir" --daemonize yes --logfile "$dir/log" \
        --pidfile "$dir/pid" >&2
    fi
  done
  for node in "${nodes[@]}"; do
    for _ in $(seq 1 50); do
      redis-cli -h 127.0.0.1 -p "${node#*:}" ping >/dev/null 2>&1 && break
      sleep 0.1
    done
  done
  if ! redis-cli -p "$base" cluster info | grep -q "cluster_state:ok"; then
    log "creating the cluster on ${nodes[*]}"
    redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >&2
    for _ in $(seq 1 100); do
      redis-cli -p "$base" cluster info | grep -q "cluster_state:ok" && break
      sleep 0.1
    done
  fi
  # Every node must agree before a client maps the slots: all 6 known, state ok, 3 replicas
  # attached and in sync (`master_link_status:up`), and `--cluster check` clean (a client that
  # connects earlier can map a slot to a node it has no connection for).
  settled=false
  for _ in $(seq 1 300); do
    agreed=true
    for node in "${nodes[@]}"; do
      info=$(redis-cli -p "${node#*:}" cluster info 2>/dev/null || true)
      if ! grep -q "cluster_state:ok" <<<"$info" || ! grep -q "cluster_known_nodes:6" <<<"$info"; then
        agreed=false
        break
      fi
      replication=$(redis-cli -p "${node#*:}" info replication 2>/dev/null || true)
      if grep -q "role:slave" <<<"$replication" && ! grep -q "master_link_status:up" <<<"$replication"; then
        agreed=false
        break
      fi
    done
    if $agreed && [ "$(redis-cli -p "$base" cluster nodes | grep -c ' slave ')" = 3 ] &&
      redis-cli --cluster check "127.0.0.1:$base" >/dev/null 2>&1; then
      settled=true
      break
    fi
    sleep 0.1
  done
  if ! $settled; then
    log "FAILED: the cluster on ${nodes[*]} did not settle within 30 s; no REDIS_CLUSTER_URLS printed"
    exit 1
  fi
  redis-cli -p "$base" cluster info | grep cluster_state >&2
  urls=$(printf 'redis://%s,' "${nodes[@]}")
  echo "REDIS_CLUSTER_URLS=${urls%,}"
  exit 0
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
