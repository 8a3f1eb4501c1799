#!/usr/bin/env bash
# A long soak (issue 13): examples/generic and examples/blog, each under a supervisor
# with 2 workers, loaded for DURATION seconds while chaos.py aborts requests, cuts
# uploads off, sends malformed requests, reloads generic's supervisor (SIGHUP) every
# RELOAD_EVERY seconds and kills one of its workers (SIGKILL) every KILL_EVERY seconds.
# After WARMUP seconds of the same load and a pause, sample.py records each server's
# RSS and descriptors every second; report.py writes bench/results/soak.md and
# soak.svg: RSS flat within 5% (the load's first fifth against its last), descriptors
# back to where they were at rest after the warm-up, requests served and failed.
#   bash bench/soak.sh                       # DURATION=420 WARMUP=90 CONNS=64 RELOAD_EVERY=60 KILL_EVERY=45
#   DURATION=30 WARMUP=5 RELOAD_EVERY=10 KILL_EVERY=8 OUT=/tmp/soak.md bash bench/soak.sh   # smoke
# The load (wrk, bench/soak/mix.lua on generic: session reads and writes, static files
# whole and by range, multipart uploads; bench/soak/blog.lua on the blog: pages, the
# form, the stylesheet, a 404) is bounded by DURATION; every server is started here and
# stopped by PID. Run it on a quiet machine (it takes /tmp/kiln-bench.lock), after
# `make build`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
DURATION=${DURATION:-420}
WARMUP=${WARMUP:-90}
CONNS=${CONNS:-64}
RELOAD_EVERY=${RELOAD_EVERY:-60}
KILL_EVERY=${KILL_EVERY:-45}
SETTLE=${SETTLE:-5}
OUT=${OUT:-$root/bench/results/soak.md}
STARTUP_TIMEOUT=${STARTUP_TIMEOUT:-30}
command_line="DURATION=$DURATION WARMUP=$WARMUP CONNS=$CONNS RELOAD_EVERY=$RELOAD_EVERY KILL_EVERY=$KILL_EVERY bash bench/soak.sh"

for b in generic blog; do
  [[ -x $root/build/bin/$b ]] || { echo "soak.sh: build/bin/$b is missing: run make build" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "soak.sh: wrk is needed (scripts/deps.sh bench)" >&2; exit 1; }
exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "soak.sh: another benchmark is running" >&2; exit 1; }

stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw="$root/bench/results/raw/soak-$stamp"
mkdir -p "$raw"
declare -A pid_of port_of not_run
source "$root/bench/lib/procs.sh"  # await_server, stop_server, free_port
trap stop_all_servers EXIT
trap 'exit 130' INT TERM

port=$(free_port)
# A small session store (4 MiB), so that it is full, and evicting, by the end of the
# warm-up: what grows after that is not the store filling up.
KILN_SESSION_MEMORY=4194304 setsid "$root/build/bin/generic" --port "$port" --workers 2 >"$raw/server-generic.log" 2>&1 </dev/null 9>&- &
await_server generic $! "$port" / "$raw/server-generic.log" || { echo "soak.sh: generic: ${not_run[generic]}" >&2; exit 1; }
port=$(free_port)
BLOG_DB="$raw/blog.sqlite" setsid "$root/build/bin/blog" --port "$port" --workers 2 >"$raw/server-blog.log" 2>&1 </dev/null 9>&- &
await_server blog $! "$port" /posts "$raw/server-blog.log" || { echo "soak.sh: blog: ${not_run[blog]}" >&2; exit 1; }

# One post in the blog, through its form (a session, a CSRF token).
jar="$raw/cookies"
token=$(curl -s -c "$jar" -b "$jar" "http://127.0.0.1:${port_of[blog]}/posts/new" | sed -n 's/.*name="_csrf" value="\([^"]*\)".*/\1/p' | head -1)
curl -s -o /dev/null -c "$jar" -b "$jar" --data-urlencode "_csrf=$token" --data-urlencode "title=Soak" \
  --data-urlencode "body=A post for the soak to read." "http://127.0.0.1:${port_of[blog]}/posts"

# Warm-up: the same load for WARMUP seconds, then a pause, so that what the servers
# open once (SQLite connections of the blocking threads, pools) is open before the
# first sample: the resting state the descriptors must come back to.
echo "soak: ${WARMUP}s of warm-up ..." >&2
timeout $((WARMUP + 60)) wrk -t1 -c"$CONNS" -d"${WARMUP}s" -s "$root/bench/soak/mix.lua" \
  "http://127.0.0.1:${port_of[generic]}" >"$raw/warmup-generic.txt" 2>&1 &
w0=$!
timeout $((WARMUP + 60)) wrk -t1 -c16 -d"${WARMUP}s" -s "$root/bench/soak/blog.lua" \
  "http://127.0.0.1:${port_of[blog]}" >"$raw/warmup-blog.txt" 2>&1
wait $w0 || true  # by PID: the servers are this shell's children too
sleep "$SETTLE"
python3 "$root/bench/soak/sample.py" "$raw/samples.csv" $((DURATION + SETTLE + 2)) \
  "generic=${pid_of[generic]}" "blog=${pid_of[blog]}" &
sampler=$!
sleep 1  # the first sample is the servers at rest after the warm-up
echo "soak: ${DURATION}s of load ..." >&2
timeout $((DURATION + 60)) wrk -t1 -c"$CONNS" -d"${DURATION}s" -s "$root/bench/soak/mix.lua" \
  "http://127.0.0.1:${port_of[generic]}" >"$raw/wrk-generic.txt" 2>&1 &
w1=$!
timeout $((DURATION + 60)) wrk -t1 -c16 -d"${DURATION}s" -s "$root/bench/soak/blog.lua" \
  "http://127.0.0.1:${port_of[blog]}" >"$raw/wrk-blog.txt" 2>&1 &
w2=$!
timeout $((DURATION + 60)) python3 "$root/bench/soak/chaos.py" "${port_of[generic]}" "${pid_of[generic]}" "$DURATION" \
  "$RELOAD_EVERY" "$KILL_EVERY" >"$raw/chaos.json" 2>"$raw/chaos.log"
wait $w1 $w2 || true
wait $sampler || true  # SETTLE seconds after the load: the descriptors at rest again
curl -s "http://127.0.0.1:${port_of[generic]}/" -o /dev/null  # still serving
python3 "$root/bench/soak/report.py" "$raw/samples.csv" "$raw" "$DURATION" "$OUT" \
  "$(dirname "$OUT")/soak.svg" "$command_line" "bench/results/raw/soak-$stamp"
