#!/usr/bin/env bash
# A/B: two builds of kiln side by side in one run, on the engine's plaintext test and
# the session study's read and write scenarios, rounds alternating A, B, A, B, ...
#   A=/path/to/old/build B=build bash bench/ab.sh
# A and B are build directories holding bin/hello and bin/generic (e.g. a worktree of
# an earlier commit built with `ninja hello generic`). Env: ROUNDS (5), DURATION (8)
# seconds per run, CONNS (256) for wrk, BATCHES (100) and REQUESTS (10000) for the
# study's client (B's bin/kiln), WORKERS (2), NAME (a label for the results file).
# Reports per scenario the median req/s and the servers' own CPU per 1,000 requests
# (utime+stime of every process of the server, from /proc), and B/A ratios; writes
# bench/results/ab-$NAME.md with the raw numbers. Servers run in their own process
# groups, on 127.0.0.1, stopped by PID.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
A=${A:?A=old build dir}
B=${B:-$root/build}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-8}
CONNS=${CONNS:-256}
BATCHES=${BATCHES:-100}
REQUESTS=${REQUESTS:-10000}
WORKERS=${WORKERS:-2}
NAME=${NAME:-$(date -u +%Y%m%d)}
STARTUP_TIMEOUT=20
CLIENT=$B/bin/kiln
for b in "$A" "$B"; do
  for p in hello generic; do [[ -x $b/bin/$p ]] || { echo "ab.sh: no $b/bin/$p" >&2; exit 1; }; done
done
[[ -x $CLIENT ]] || { echo "ab.sh: no load client $CLIENT" >&2; exit 1; }
command -v wrk >/dev/null || bash "$root/scripts/deps.sh" bench

exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "ab.sh: another benchmark is running" >&2; exit 1; }

declare -A pid_of port_of not_run
# shellcheck source=lib/procs.sh
source "$root/bench/lib/procs.sh"
trap stop_all_servers EXIT
clk_tck=$(getconf CLK_TCK)
tmp=$(mktemp -d /tmp/kiln-ab.XXXXXX)
port=$((20000 + RANDOM % 20000))

# run_one SIDE SCENARIO: starts the server, loads it, prints "REQS_PER_S CPU_MS_PER_1K"
run_one() {
  local side=$1 scenario=$2 dir bin path log out reqs ticks
  dir=$([[ $side == A ]] && echo "$A" || echo "$B")
  port=$((port + 1))
  case $scenario in
    plaintext) bin=$dir/bin/hello; path=/plaintext ;;
    *) bin=$dir/bin/generic; path=/ ;;
  esac
  log=$tmp/$side-$scenario.log
  setsid "$bin" --port "$port" --workers "$WORKERS" >"$log" 2>&1 &
  await_server "$side" $! "$port" "$path" "$log" || { echo "0 0"; return; }
  tree_stats "${pid_of[$side]}"; ticks=$TREE_TICKS
  case $scenario in
    plaintext)
      out=$(wrk -t2 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$port/plaintext")
      reqs=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
      local total; total=$(awk '/requests in/ {print $1}' <<<"$out") ;;
    read|write)
      local flags="-f -g -c 2"; [[ $scenario == write ]] && flags="-g -c 2 -u"
      # shellcheck disable=SC2086
      out=$("$CLIENT" bench $flags -b "$BATCHES" -r "$REQUESTS" -d "$DURATION" --json "http://127.0.0.1:$port/")
      reqs=$(python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["requests_per_second"])' <<<"$out")
      local total; total=$(python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["ok"])' <<<"$out") ;;
  esac
  tree_stats "${pid_of[$side]}"
  local ms; ms=$(awk -v t=$((TREE_TICKS - ticks)) -v hz="$clk_tck" -v n="$total" 'BEGIN { printf "%.2f", n ? t * 1000 / hz / n * 1000 : 0 }')
  stop_server "$side"
  echo "$reqs $ms"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

report=$root/bench/results/ab-$NAME.md
{
  echo "# A/B: $(basename "$(cd "$A/.." && pwd)") (A) vs $(basename "$(cd "$B/.." && pwd)") (B)"
  echo
  echo "\`A=$A B=$B ROUNDS=$ROUNDS DURATION=$DURATION CONNS=$CONNS BATCHES=$BATCHES REQUESTS=$REQUESTS WORKERS=$WORKERS bash bench/ab.sh\`"
  echo "on $(nproc) cores ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), $(date -u +%Y-%m-%dT%H:%MZ);"
  echo "medians of $ROUNDS alternating rounds; CPU = the server's own utime+stime per 1,000 requests."
  echo
  echo "| scenario | A req/s | B req/s | B/A | A CPU ms/1k | B CPU ms/1k | B/A |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
} >"$report.tmp"
raw=""
for scenario in plaintext read write; do
  ra=() rb=() ca=() cb=()
  for ((r = 1; r <= ROUNDS; r++)); do
    for side in A B; do
      read -r q c < <(run_one "$side" "$scenario")
      raw+="$scenario round $r $side: $q req/s, $c ms/1k"$'\n'
      echo "$scenario round $r $side: $q req/s, $c ms CPU/1k" >&2
      if [[ $side == A ]]; then ra+=("$q"); ca+=("$c"); else rb+=("$q"); cb+=("$c"); fi
    done
  done
  qa=$(printf '%s\n' "${ra[@]}" | median); qb=$(printf '%s\n' "${rb[@]}" | median)
  ma=$(printf '%s\n' "${ca[@]}" | median); mb=$(printf '%s\n' "${cb[@]}" | median)
  awk -v s="$scenario" -v qa="$qa" -v qb="$qb" -v ma="$ma" -v mb="$mb" 'BEGIN {
    printf "| %s | %.0f | %.0f | %.3f | %.2f | %.2f | %.3f |\n", s, qa, qb, qa ? qb / qa : 0, ma, mb, ma ? mb / ma : 0 }' >>"$report.tmp"
done
{ echo; echo "Raw:"; echo; echo '```'; printf '%s' "$raw"; echo '```'; } >>"$report.tmp"
mv "$report.tmp" "$report"
cat "$report"
rm -rf "$tmp"
