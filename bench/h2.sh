#!/usr/bin/env bash
# HTTP/2: kiln against nginx under h2load, over TLS (h2 by ALPN) and h2c, on a small
# response and a 100 KiB static file (bench/h2.py has the details). Env: DURATION
# (10), WARMUP (2), ROUNDS (3), KILN_BUILD (build), OUT (bench/results/h2.md). Shares
# /tmp/kiln-bench.lock with the other benchmarks and holds /tmp/kiln-build.lock while
# measuring; do not wrap it in flock.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh" bench || echo "h2.sh: scripts/deps.sh bench failed; going on" >&2
for tool in h2load nginx openssl; do
  command -v $tool >/dev/null || { echo "h2.sh: $tool is needed (scripts/deps.sh bench)" >&2; exit 1; }
done
exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "h2.sh: another benchmark is running" >&2; exit 1; }
exec 8>/tmp/kiln-build.lock
flock -w 3600 8 || { echo "h2.sh: a build holds the lock" >&2; exit 1; }
exec python3 "$root/bench/h2.py"
