#!/usr/bin/env bash
# WebSocket: kiln against actix-ws, echo throughput and idle cost (bench/websocket.py
# has the details). Builds the Go client and the actix-ws peer on first use (Go and
# cargo needed). Env: DURATION (10), WARMUP (2), ROUNDS (3), CONNS (50), IDLE (10000),
# KILN_BUILD (build), OUT (bench/results/websocket.md). Shares /tmp/kiln-bench.lock with
# the other benchmarks and holds /tmp/kiln-build.lock while measuring; do not wrap it
# in flock.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh" bench || echo "websocket.sh: scripts/deps.sh bench failed; going on" >&2
command -v wrk >/dev/null || { echo "websocket.sh: wrk is needed (scripts/deps.sh bench)" >&2; exit 1; }
bash "$root/bench/clients/ws-echo-go/setup.sh"
bash "$root/bench/peers/actix-ws/setup.sh"
[[ -x ${KILN_BUILD:-$root/build}/bin/hello ]] || { echo "websocket.sh: build kiln first (make build)" >&2; exit 1; }
exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "websocket.sh: another benchmark is running" >&2; exit 1; }
exec 8>/tmp/kiln-build.lock
flock -w 3600 8 || { echo "websocket.sh: a build holds the lock" >&2; exit 1; }
exec python3 "$root/bench/websocket.py"
