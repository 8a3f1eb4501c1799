#!/usr/bin/env bash
# Concurrency models side by side: GET /plaintext (hello example) for the engine
# alone (--workers 0), the event model under the supervisor, hybrid and prefork;
# and a handler that blocks 1 ms (the test server's /sleep?ms=1) for event,
# hybrid and prefork. One wrk run per case, the order rotated each round, ROUNDS
# rounds, medians. Reports requests/s and the server's CPU per 1,000 requests
# (utime+stime of the supervisor, its live workers, and its reaped workers'
# cutime+cstime, from /proc). Only 127.0.0.1; stops only the servers it started.
#   DURATION=10 ROUNDS=3 CONNS=64 bash bench/mpm.sh
#   ONLY="plaintext/engine-alone plaintext/event" ROUNDS=9 bash bench/mpm.sh   # some cases only
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh" bench
DURATION=${DURATION:-10} ROUNDS=${ROUNDS:-3} CONNS=${CONNS:-64} PORT=${PORT:-18990}
hello=$root/build/bin/hello
testsrv=$root/build/tests/kiln_test_server
[[ -x $hello && -x $testsrv ]] || { echo "build first: make build" >&2; exit 1; }
n=$(nproc)
# case name | binary | flags | path
cases=(
  "plaintext/engine-alone|$hello|--workers 0 --threads $n|/plaintext"
  "plaintext/event|$hello|--workers $n --threads 1|/plaintext"
  "plaintext/hybrid|$hello|--mpm hybrid --workers $n --threads 1|/plaintext"
  "plaintext/prefork|$hello|--mpm prefork --workers $((4 * n))|/plaintext"
  "blocking-1ms/event|$testsrv|--workers $n --threads 1|/sleep?ms=1"
  "blocking-1ms/hybrid|$testsrv|--mpm hybrid --workers $n --threads 1|/sleep?ms=1"
  "blocking-1ms/prefork|$testsrv|--mpm prefork --workers $((4 * n))|/sleep?ms=1"
)
if [[ -n ${ONLY:-} ]]; then
  kept=()
  for c in "${cases[@]}"; do [[ " $ONLY " == *" ${c%%|*} "* ]] && kept+=("$c"); done
  cases=("${kept[@]}")
fi
exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "another benchmark is running" >&2; exit 1; }
pid=""
trap '[[ -n $pid ]] && kill -TERM $pid 2>/dev/null; wait 2>/dev/null || true' EXIT

ticks() {  # clock ticks: pid's utime+stime+cutime+cstime (reaped workers), plus live children's
  local t p
  t=$(sed 's/.*) //' /proc/$1/stat | awk '{print $12 + $13 + $14 + $15}')
  for p in $(pgrep -P "$1" || true); do
    t=$((t + $(sed 's/.*) //' /proc/$p/stat 2>/dev/null | awk '{print $12 + $13}' || echo 0)))
  done
  echo $t
}

results=$(mktemp)
order=("${cases[@]}")
for round in $(seq "$ROUNDS"); do
  for c in "${order[@]}"; do
    IFS='|' read -r name bin flags path <<<"$c"
    "$bin" --port "$PORT" $flags --quiet 2>/dev/null &
    pid=$!
    for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PORT$path" && break; sleep 0.05; done
    wrk -t1 -c"$CONNS" -d2s "http://127.0.0.1:$PORT$path" >/dev/null  # warm-up
    before=$(ticks $pid)
    out=$(wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency "http://127.0.0.1:$PORT$path")
    after=$(ticks $pid)
    reqs=$(awk '/requests in/ {print $1}' <<<"$out")
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    errors=$(awk '/Non-2xx|Socket errors/ {for (i=1;i<=NF;i++) if ($i ~ /^[0-9]+,?$/) s+=$i} END {print s+0}' <<<"$out")
    cpu_ms=$(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v r="$reqs" 'BEGIN {printf "%.3f", t * 1000 / hz / r * 1000}')
    echo "round $round $name: $rps req/s, p99 $p99, $cpu_ms CPU ms/1k req, $errors errors" >&2
    echo "$name $rps $cpu_ms $errors $p99" >>"$results"
    kill -TERM $pid; wait $pid 2>/dev/null || true; pid=""
  done
  order=("${order[@]:1}" "${order[0]}")  # a different case goes first each round
done

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
base=$(awk '$1=="plaintext/engine-alone" {print $2}' "$results" | median)
{
  echo "# Concurrency models"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); $n CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
  echo "- command: \`${ONLY:+ONLY=\"$ONLY\" }DURATION=$DURATION ROUNDS=$ROUNDS CONNS=$CONNS bash bench/mpm.sh\` (wrk -t1 -c$CONNS on the same machine; medians of $ROUNDS runs)"
  echo "- plaintext: hello's /plaintext; blocking-1ms: the test server's /sleep?ms=1 (a handler that blocks its thread 1 ms)"
  echo
  echo "| case | kiln flags | req/s | vs engine alone | server CPU ms/1k req | p99 | errors |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for c in "${cases[@]}"; do
    IFS='|' read -r name bin flags path <<<"$c"
    rps=$(awk -v n=$name '$1==n {print $2}' "$results" | median)
    cpu=$(awk -v n=$name '$1==n {print $3}' "$results" | median)
    err=$(awk -v n=$name '$1==n {s+=$4} END {print s+0}' "$results")
    p99=$(awk -v n=$name '$1==n {print $5}' "$results" | head -1)
    ratio=$([[ $name == plaintext/* ]] && awk -v a="$rps" -v b="$base" 'BEGIN {printf "%.3f", a / b}' || echo "-")
    echo "| $name | \`$flags\` | $(printf "%.0f" "$rps") | $ratio | $cpu | $p99 (round 1) | $err |"
  done
} | tee "$root/bench/results/mpm${ONLY:+-subset}.md"
rm -f "$results"
