#!/usr/bin/env bash
# HTTPS against HTTP for static files: kiln and nginx, each over plain TCP and TLS
# (bench/tls.py has the details). Env: DURATION (10), WARMUP (3), ROUNDS (3), CONNS
# (32), KILN_BUILD (build), OUT (bench/results/tls.md). Shares /tmp/kiln-bench.lock
# with the other benchmarks and holds /tmp/kiln-build.lock while measuring; do not
# wrap it in flock.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh" bench || echo "tls.sh: scripts/deps.sh bench failed; going on" >&2
for tool in wrk nginx openssl; do
  command -v $tool >/dev/null || { echo "tls.sh: $tool is needed (scripts/deps.sh bench)" >&2; exit 1; }
done
exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "tls.sh: another benchmark is running" >&2; exit 1; }
exec 8>/tmp/kiln-build.lock
flock -w 3600 8 || { echo "tls.sh: a build holds the lock" >&2; exit 1; }
exec python3 "$root/bench/tls.py"
