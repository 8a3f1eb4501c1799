#!/usr/bin/env bash
# The CPU cost per KiB and the size of gzip, br and zstd at every level, on kiln's own
# coding code (bench/compress/levels.cpp). Env: KILN_BUILD (build), OUT
# (bench/results/compression.md). Shares /tmp/kiln-bench.lock with the other
# benchmarks; builds its tool under /tmp/kiln-build.lock first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KILN_BUILD:-$root/build}
out=${OUT:-$root/bench/results/compression.md}
flock -w 3600 /tmp/kiln-build.lock ninja -C "$build" -j2 kiln_compress_levels
exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "compression.sh: another benchmark is running" >&2; exit 1; }
"$build/bench/kiln_compress_levels" "$out"
