#!/usr/bin/env bash
# permessage-deflate at zlib level 1 (kiln's default) against 6: server CPU and bytes
# on Autobahn's largest compressed-echo cases (bench/ws_deflate_level.py has the
# details). Needs `make build` (build/tests/kiln_test_server); installs kosoku on first
# use. Env: ROUNDS (3), CASES ("12.2.15 12.3.15 12.5.15"), KILN_BUILD (build),
# OUT (bench/results/ws-deflate-level.md). Shares /tmp/kiln-bench.lock with the other
# benchmarks and holds /tmp/kiln-build.lock while measuring; do not wrap it in flock.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "ws_deflate_level.sh: another benchmark is running" >&2; exit 1; }
exec 8>/tmp/kiln-build.lock
flock -w 3600 8 || { echo "ws_deflate_level.sh: a build holds the lock" >&2; exit 1; }
exec python3 "$root/bench/ws_deflate_level.py"
