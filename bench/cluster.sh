#!/usr/bin/env bash
# What a load balancer and shared stores cost: the blog with PostgreSQL and Redis
# sessions through HAProxy to two nodes vs straight to one node (its index, and post
# creation logged in), and the session study's read and write scenarios with the Redis
# session store vs the shared-memory one. Requests/s and CPU per 1,000 requests of
# every part: HAProxy, each node, PostgreSQL, Redis, the load client. bench/cluster.py
# has the details.
#   bash bench/cluster.sh
# Env: DURATION (10) seconds per measured run, WARMUP (3), ROUNDS (3; medians), CONNS
#      (32, wrk's connections), KILN_BUILD (build), OUT (bench/results/cluster.md).
# PostgreSQL and Redis: tests/pg/pg_server.py and tests/redis/redis_server.py start
# private ones on 127.0.0.1 and stop them by PID. Shares /tmp/kiln-bench.lock with the
# other benchmarks and holds /tmp/kiln-build.lock while measuring (nothing builds
# beside it); do not wrap it in flock.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z ${KILN_TEST_PG_URL:-} ]]; then
  bash "$root/scripts/deps.sh" bench || echo "cluster.sh: scripts/deps.sh bench failed; going on" >&2
  exec 9>/tmp/kiln-bench.lock
  flock -n 9 || { echo "cluster.sh: another benchmark is running" >&2; exit 1; }
  exec 8>/tmp/kiln-build.lock
  flock -w 3600 8 || { echo "cluster.sh: a build holds the lock" >&2; exit 1; }
  export KILN_PG_SETTINGS="max_connections=200 ${KILN_PG_SETTINGS:-}"
  exec python3 "$root/tests/pg/pg_server.py" run -- python3 "$root/tests/redis/redis_server.py" run -- \
    bash "$0" "$@"
fi
exec python3 "$root/bench/cluster.py"
