#!/usr/bin/env bash
# Concurrency models side by side on GET /plaintext (hello example), one wrk run
# each, alternating, ROUNDS rounds, medians: the engine alone (--workers 0), the
# event model under the supervisor, and prefork. Reports requests/s and the
# server's CPU per 1,000 requests (utime+stime of the supervisor and its workers,
# from /proc). Only 127.0.0.1; stops only the servers it started.
#   DURATION=10 ROUNDS=3 CONNS=64 bash bench/mpm.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh" bench
DURATION=${DURATION:-10} ROUNDS=${ROUNDS:-3} CONNS=${CONNS:-64} PORT=${PORT:-18990}
bin=$root/build/bin/hello
[[ -x $bin ]] || { echo "build first: make build" >&2; exit 1; }
n=$(nproc)
declare -A args=(
  [engine-alone]="--workers 0 --threads $n"
  [event-supervised]="--workers $n --threads 1"
  [prefork]="--mpm prefork --workers $((4 * n))"
)
order=(engine-alone event-supervised prefork)
exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "another benchmark is running" >&2; exit 1; }
pid=""
trap '[[ -n $pid ]] && kill -TERM $pid 2>/dev/null; wait 2>/dev/null || true' EXIT

ticks() {  # utime+stime of pid and its live children, plus its reaped children's
           # (cutime+cstime: prefork workers are recycled during a run), in clock ticks
  local t p
  t=$(sed 's/.*) //' /proc/$1/stat | awk '{print $14 + $15}')
  for p in $1 $(pgrep -P "$1" || true); do
    t=$((t + $(sed 's/.*) //' /proc/$p/stat 2>/dev/null | awk '{print $12 + $13}' || echo 0)))
  done
  echo $t
}

results=$(mktemp)
for round in $(seq "$ROUNDS"); do
  for name in "${order[@]}"; do
    "$bin" --port "$PORT" ${args[$name]} --quiet 2>/dev/null &
    pid=$!
    for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/plaintext" && break; sleep 0.05; done
    wrk -t1 -c"$CONNS" -d2s "http://127.0.0.1:$PORT/plaintext" >/dev/null  # warm-up
    before=$(ticks $pid)
    out=$(wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$PORT/plaintext")
    after=$(ticks $pid)
    reqs=$(awk '/requests in/ {print $1}' <<<"$out")
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    cpu_ms=$(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v r="$reqs" 'BEGIN {printf "%.3f", t * 1000 / hz / r * 1000}')
    echo "round $round $name: $rps req/s, $cpu_ms CPU ms/1k req" >&2
    echo "$name $rps $cpu_ms" >>"$results"
    kill -TERM $pid; wait $pid 2>/dev/null || true; pid=""
  done
  order=("${order[@]:1}" "${order[0]}")  # a different model goes first each round
done

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
base=$(awk '$1=="engine-alone" {print $2}' "$results" | median)
{
  echo "# Concurrency models on /plaintext"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); $n CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
  echo "- command: \`DURATION=$DURATION ROUNDS=$ROUNDS CONNS=$CONNS bash bench/mpm.sh\` (wrk -t1 -c$CONNS, medians of $ROUNDS runs)"
  echo
  echo "| model | kiln flags | req/s | vs engine alone | server CPU ms/1k req |"
  echo "| --- | --- | --- | --- | --- |"
  for name in engine-alone event-supervised prefork; do
    rps=$(awk -v n=$name '$1==n {print $2}' "$results" | median)
    cpu=$(awk -v n=$name '$1==n {print $3}' "$results" | median)
    ratio=$(awk -v a="$rps" -v b="$base" 'BEGIN {printf "%.3f", a / b}')
    echo "| $name | \`${args[$name]}\` | $(printf "%.0f" "$rps") | $ratio | $cpu |"
  done
} | tee "$root/bench/results/mpm.md"
rm -f "$results"
