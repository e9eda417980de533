#!/usr/bin/env bash
# README's first command (`npm start`: the demo, its own light install on a clean clone) started,
# asked for its OpenAPI document over HTTP, then stopped with SIGINT as a terminal's Ctrl+C: it must
# answer within START_SECONDS and exit 0.
set -uo pipefail
port=${DEMO_PORT:-3199}
limit=${START_SECONDS:-300}
log=$(mktemp)
npm start -- --port "$port" >"$log" 2>&1 &
pid=$!
status=1
for ((i = 0; i < limit; i++)); do
  if ! kill -0 "$pid" 2>/dev/null; then echo "npm start exited before answering"; break; fi
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/openapi.json")" = 200 ]; then
    echo "npm start answered GET /openapi.json after about $i s"
    status=0
    break
  fi
  sleep 1
done
kill -INT "$pid" 2>/dev/null
for ((i = 0; i < 30 && status == 0; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
if kill -0 "$pid" 2>/dev/null; then echo "npm start did not stop on SIGINT"; kill -KILL "$pid"; status=1; fi
wait "$pid"; rc=$?
[ "$status" -eq 0 ] && [ "$rc" -ne 0 ] && { echo "npm start exited $rc on SIGINT"; status=1; }
[ "$status" -ne 0 ] && cat "$log"
rm -f "$log"
exit "$status"
