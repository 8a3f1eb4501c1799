#!/usr/bin/env bash
# The TechEmpower Framework Benchmarks' tests on this machine: kiln's
# examples/techempower beside the peers in bench/peers/tfb-* (actix-web and bare
# actix-http with tokio-postgres, TFB's "Realistic" and "Platform" actix entries; Go's
# net/http with pgx), all on one private PostgreSQL, loaded by wrk.
#   bash bench/techempower.sh
# Env: DURATION (15) seconds per measured run, WARMUP (5) seconds of the same load
#      before it, ROUNDS (3; the table shows medians), CONNS (256), THREADS (2) for
#      wrk, TESTS (plaintext,json,db,queries,fortunes,updates,cached-queries), QUERIES
#      (20: N for queries, updates and cached-queries), ONLY (e.g. kiln,actix-http),
#      KILN_BUILD (build), KILN_ARGS (kiln's defaults), SKIP_SETUP=1, STARTUP_TIMEOUT
#      (120), LOCK_WAIT (3600), OUT (bench/results/techempower.md). KILN_ALT_ENV
#      (VAR=VALUE ...) and/or KILN_ALT_ARGS add the server kiln-alt: the same binary
#      with that environment and those arguments, measured in the same rounds as kiln
#      (e.g. KILN_ALT_ENV=KILN_DATABASE_REPLY_TIMEOUT_MS=0: what the reply timeout costs).
# PostgreSQL: tests/pg/pg_server.py starts Debian's postgres in a temp dir on
# 127.0.0.1 (a free port), this script runs inside it, and it is stopped by PID at the
# end. Its schema and data are examples/techempower's migration, loaded by psql before
# any server starts. /plaintext is pipelined 16 deep (as TFB does); the others are not.
# Each server is verified (bench/lib/tfb_verify.py) before it is measured; one that
# fails is reported as not run. CPU per 1,000 requests: the server's process group
# (utime+stime, all threads) and PostgreSQL's (postmaster and backends) separately,
# over the measured run, divided by wrk's completed requests.
# Holds /tmp/kiln-build.lock while measuring (no build beside it) and shares
# /tmp/kiln-bench.lock with the other benchmarks; do not wrap it in flock.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z ${KILN_TEST_PG_URL:-} ]]; then  # first, a PostgreSQL of our own; then this script again inside it
  # pg_stat_statements: the rules check counts the queries each server sends.
  export KILN_PG_SETTINGS="max_connections=200 shared_buffers=256MB shared_preload_libraries=pg_stat_statements ${KILN_PG_SETTINGS:-}"
  exec python3 "$root/tests/pg/pg_server.py" run -- bash "$0" "$@"
fi

DURATION=${DURATION:-15}
WARMUP=${WARMUP:-5}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-256}
THREADS=${THREADS:-2}
TESTS=${TESTS:-plaintext,json,db,queries,fortunes,updates,cached-queries}
QUERIES=${QUERIES:-20}
ONLY=${ONLY:-}
KILN_BUILD=$(realpath -m "${KILN_BUILD:-$root/build}")
KILN_ARGS=${KILN_ARGS:-}
SKIP_SETUP=${SKIP_SETUP:-0}
STARTUP_TIMEOUT=${STARTUP_TIMEOUT:-120}
LOCK_WAIT=${LOCK_WAIT:-3600}
OUT=${OUT:-$root/bench/results/techempower.md}
KILN_SERVER=$KILN_BUILD/bin/techempower
KILN_ALT_ENV=${KILN_ALT_ENV:-}
KILN_ALT_ARGS=${KILN_ALT_ARGS:-}
ALL_SERVERS=(kiln actix-web actix-http go)
[[ -n $KILN_ALT_ENV$KILN_ALT_ARGS ]] && ALL_SERVERS=(kiln kiln-alt actix-web actix-http go)
DB_URL=$KILN_TEST_PG_URL

command_line="DURATION=$DURATION WARMUP=$WARMUP ROUNDS=$ROUNDS CONNS=$CONNS THREADS=$THREADS QUERIES=$QUERIES"
[[ $TESTS != plaintext,json,db,queries,fortunes,updates,cached-queries ]] && command_line+=" TESTS=$TESTS"
[[ -n $ONLY ]] && command_line+=" ONLY=$ONLY"
[[ -n $KILN_ARGS ]] && command_line+=" KILN_ARGS=\"$KILN_ARGS\""
[[ -n $KILN_ALT_ENV ]] && command_line+=" KILN_ALT_ENV=\"$KILN_ALT_ENV\""
[[ -n $KILN_ALT_ARGS ]] && command_line+=" KILN_ALT_ARGS=\"$KILN_ALT_ARGS\""
command_line+=" bash bench/techempower.sh"

servers=()
for s in "${ALL_SERVERS[@]}"; do
  if [[ -z $ONLY || ,$ONLY, == *,$s,* ]]; then servers+=("$s"); fi
done
[[ ${#servers[@]} -gt 0 ]] || { echo "techempower.sh: ONLY=$ONLY names none of: ${ALL_SERVERS[*]}" >&2; exit 1; }
IFS=, read -r -a tests <<<"$TESTS"

bash "$root/scripts/deps.sh" bench || echo "techempower.sh: scripts/deps.sh bench failed; going on with what is installed" >&2
for tool in wrk curl psql; do
  command -v $tool >/dev/null || { echo "techempower.sh: $tool is needed" >&2; exit 1; }
done

exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "techempower.sh: another benchmark is running" >&2; exit 1; }

stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw_rel="bench/results/raw/techempower-$stamp"
raw="$root/$raw_rel"
mkdir -p "$raw"
clk_tck=$(getconf CLK_TCK)
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)

declare -A pid_of port_of not_run
source "$root/bench/lib/procs.sh"  # stop_server, await_server, free_port
trap stop_all_servers EXIT
trap 'exit 130' INT TERM

# PostgreSQL's processes: the postmaster (pg_server.py started it) and its children;
# not its process group, since every backend calls setsid().
pg_datadir=${KILN_TEST_PG_CTL##* ctl }
pg_pid=$(head -1 "$pg_datadir/postmaster.pid")
pg_version=$(psql "$DB_URL" -XAtc "SHOW server_version" | cut -d' ' -f1)

echo "load the schema and data ..." >&2
psql "$DB_URL" -X -q -v ON_ERROR_STOP=1 -f "$root/examples/techempower/db/migrations/001_world_and_fortune.sql" \
  >"$raw/schema.log" 2>&1 || { echo "techempower.sh: loading the schema failed: $(tail -1 "$raw/schema.log")" >&2; exit 1; }
psql "$DB_URL" -X -q -c "VACUUM ANALYZE world" -c "VACUUM ANALYZE fortune" >>"$raw/schema.log" 2>&1 || true

# ---- build ---------------------------------------------------------------------------------
setup_server() {  # name: 0 if it can be started; else sets not_run[name]
  local name=$1 log="$raw/setup-$1.log"
  if [[ $SKIP_SETUP != 1 ]]; then
    case $name in
      kiln|kiln-alt)
        if [[ ! -f $KILN_BUILD/build.ninja ]]; then
          timeout 600 flock /tmp/kiln-build.lock cmake -S "$root" -B "$KILN_BUILD" -G Ninja \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$log" 2>&1 || true
        fi
        timeout 1800 flock /tmp/kiln-build.lock ninja -C "$KILN_BUILD" -j2 techempower >>"$log" 2>&1 || true ;;
      actix-web|actix-http)
        bash "$root/bench/peers/tfb-actix/setup.sh" >"$log" 2>&1 ||
          { not_run[$name]="setup failed: $(tail -1 "$log" | cut -c1-160)"; return 1; } ;;
      go)
        bash "$root/bench/peers/tfb-go/setup.sh" >"$log" 2>&1 ||
          { not_run[$name]="setup failed: $(tail -1 "$log" | cut -c1-160)"; return 1; } ;;
    esac
  fi
  if [[ $name == kiln* && ! -x $KILN_SERVER ]]; then not_run[$name]="$KILN_SERVER was not built"; return 1; fi
  return 0
}

start_server() {  # name: in a process group of its own, waits for 200 on /plaintext
  local name=$1 port log="$raw/server-$1.log"
  port=$(free_port)
  case $name in
    # shellcheck disable=SC2086
    kiln) env -u KILN_TEST_PG_URL -u KILN_TEST_PG_CTL -u KILN_PG_SETTINGS setsid "$KILN_SERVER" --port "$port" \
            --database-url "$DB_URL" $KILN_ARGS >>"$log" 2>&1 </dev/null 8>&- 9>&- & ;;
    # shellcheck disable=SC2086
    kiln-alt) env -u KILN_TEST_PG_URL -u KILN_TEST_PG_CTL -u KILN_PG_SETTINGS $KILN_ALT_ENV setsid "$KILN_SERVER" \
            --port "$port" --database-url "$DB_URL" $KILN_ALT_ARGS >>"$log" 2>&1 </dev/null 8>&- 9>&- & ;;
    actix-web) DATABASE_URL=$DB_URL setsid bash "$root/bench/peers/tfb-actix/run.sh" "$port" web >>"$log" 2>&1 </dev/null 8>&- 9>&- & ;;
    actix-http) DATABASE_URL=$DB_URL setsid bash "$root/bench/peers/tfb-actix/run.sh" "$port" http >>"$log" 2>&1 </dev/null 8>&- 9>&- & ;;
    go) DATABASE_URL=$DB_URL setsid bash "$root/bench/peers/tfb-go/run.sh" "$port" >>"$log" 2>&1 </dev/null 8>&- 9>&- & ;;
  esac
  await_server "$name" $! "$port" /plaintext "$log"
}

path_of() {
  case $1 in
    plaintext) echo /plaintext ;; json) echo /json ;; db) echo /db ;; fortunes) echo /fortunes ;;
    queries) echo "/queries?queries=$QUERIES" ;; updates) echo "/updates?queries=$QUERIES" ;;
    cached-queries) echo "/cached-queries?count=$QUERIES" ;;
  esac
}

# group_ticks PGID -> TICKS: utime+stime (with reaped children's) over the group.
group_ticks() {
  local pgid=$1 f line
  TICKS=0
  for f in /proc/[0-9]*/stat; do
    read -r line 2>/dev/null <"$f" || continue
    [[ $line == *") "* ]] || continue  # (a process that ended while it was read)
    # shellcheck disable=SC2086
    set -- ${line##*) }
    [[ $# -ge 15 && $3 == "$pgid" ]] || continue
    TICKS=$((TICKS + ${12} + ${13} + ${14} + ${15}))
  done
}

run_wrk() {  # name test seconds outfile
  local name=$1 test=$2 secs=$3 out=$4 url
  url="http://127.0.0.1:${port_of[$name]}$(path_of "$test")"
  if [[ $test == plaintext ]]; then
    timeout $((secs + 30)) wrk -t"$THREADS" -c"$CONNS" -d"${secs}s" --latency -s "$root/bench/pipeline.lua" "$url" >"$out" 2>&1 || true
  else
    timeout $((secs + 30)) wrk -t"$THREADS" -c"$CONNS" -d"${secs}s" --latency "$url" >"$out" 2>&1 || true
  fi
}

# results: key "server|test|round" -> "rps p99_ms server_ms_per_1k pg_ms_per_1k errors"
declare -A result
measure() {  # name test round
  local name=$1 test=$2 round=$3 out="$raw/wrk-$1-$2-r$3.txt" s0 s1 p0 p1 reqs rps p99 errors
  run_wrk "$name" "$test" "$WARMUP" "$raw/warmup-$name-$test-r$round.txt"
  group_ticks "${pid_of[$name]}"; s0=$TICKS
  tree_stats "$pg_pid"; p0=$TREE_TICKS
  run_wrk "$name" "$test" "$DURATION" "$out"
  group_ticks "${pid_of[$name]}"; s1=$TICKS
  tree_stats "$pg_pid"; p1=$TREE_TICKS
  reqs=$(awk '/requests in/ {print $1}' "$out")
  rps=$(awk '/^Requests\/sec/ {print $2}' "$out")
  p99=$(awk '$1 == "99%" {v = $2; if (v ~ /us$/) {sub(/us/, "", v); v /= 1000} else if (v ~ /ms$/) sub(/ms/, "", v); else if (v ~ /s$/) {sub(/s/, "", v); v *= 1000}; print v}' "$out")
  errors=$(awk '/Socket errors/ {gsub(/,/, ""); n = $4 + $6 + $8 + $10} /Non-2xx/ {n += $NF} END {print n + 0}' "$out")
  if [[ -z $reqs || $reqs == 0 ]]; then
    result[$name|$test|$round]="0 0 0 0 $errors"
    return
  fi
  result[$name|$test|$round]="$rps ${p99:-0} $(awk -v t=$((s1 - s0)) -v n="$reqs" -v hz="$clk_tck" 'BEGIN {printf "%.2f", t * 1000000 / hz / n}') $(awk -v t=$((p1 - p0)) -v n="$reqs" -v hz="$clk_tck" 'BEGIN {printf "%.2f", t * 1000000 / hz / n}') $errors"
  echo "  $name $test: $rps req/s, p99 ${p99:-?} ms, server $(echo "${result[$name|$test|$round]}" | cut -d' ' -f3) ms/1k, PostgreSQL $(echo "${result[$name|$test|$round]}" | cut -d' ' -f4) ms/1k, errors $errors" >&2
}

for s in "${servers[@]}"; do
  echo "setup $s ..." >&2
  setup_server "$s" || true
done

# Builds are done: hold the build lock while measuring.
exec 8>/tmp/kiln-build.lock
flock -w "$LOCK_WAIT" 8 || { echo "techempower.sh: the build lock stayed busy" >&2; exit 1; }

declare -A verified
for ((round = 1; round <= ROUNDS; round++)); do
  order=("${servers[@]}")
  if ((round % 2 == 0)); then  # alternate the order per round
    order=(); for ((i = ${#servers[@]} - 1; i >= 0; i--)); do order+=("${servers[$i]}"); done
  fi
  for s in "${order[@]}"; do
    [[ -n ${not_run[$s]:-} ]] && continue
    echo "round $round: $s" >&2
    start_server "$s" || continue
    if [[ -z ${verified[$s]:-} ]]; then
      if DATABASE_URL=$DB_URL python3 "$root/bench/lib/tfb_verify.py" "http://127.0.0.1:${port_of[$s]}" >"$raw/verify-$s.txt" 2>&1; then
        verified[$s]=1
      else
        not_run[$s]="failed the rules check: $(grep -i 'fail' "$raw/verify-$s.txt" | head -1 | cut -c1-160)"
        stop_server "$s"; continue
      fi
    fi
    for t in "${tests[@]}"; do measure "$s" "$t" "$round"; done
    stop_server "$s"
  done
done

# ---- report --------------------------------------------------------------------------------
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
field_median() {  # server test field(1..5)
  local r
  for ((r = 1; r <= ROUNDS; r++)); do
    [[ -n ${result[$1|$2|$r]:-} ]] && echo "${result[$1|$2|$r]}" | cut -d' ' -f"$3"
  done | median
}
field_sum() {
  local r n=0
  for ((r = 1; r <= ROUNDS; r++)); do
    [[ -n ${result[$1|$2|$r]:-} ]] && n=$((n + $(echo "${result[$1|$2|$r]}" | cut -d' ' -f"$3")))
  done
  echo $n
}
ran() { [[ -z ${not_run[$1]:-} && -n ${result[$1|${tests[0]}|1]:-}${result[$1|${tests[0]}|2]:-} ]]; }

crate_version() {  # name: its exact pin in the actix peer's Cargo.toml
  sed -n "s/^$1 = .*\"=\([^\"]*\)\".*/\1/p" "$root/bench/peers/tfb-actix/Cargo.toml" | head -1
}

version_of() {
  case $1 in
    kiln) echo "kiln $(git -C "$root" describe --always --dirty 2>/dev/null), \`build/bin/techempower${KILN_ARGS:+ $KILN_ARGS}\` (kiln's defaults$([[ -n $KILN_ARGS ]] && echo " but $KILN_ARGS")), $(g++ --version | head -1)" ;;
    kiln-alt) echo "the same binary as kiln, with${KILN_ALT_ENV:+ environment $KILN_ALT_ENV}${KILN_ALT_ARGS:+ arguments $KILN_ALT_ARGS}" ;;
    actix-web|actix-http) echo "$1 $(crate_version "$1"), tokio-postgres $(crate_version tokio-postgres), $(rustc --version 2>/dev/null | cut -d' ' -f1-2), one worker thread and one connection per core" ;;
    go) echo "$(go version 2>/dev/null | cut -d' ' -f3) net/http, pgx $(sed -n 's|.*github.com/jackc/pgx/v5 \(v[^ ]*\).*|\1|p' "$root/bench/peers/tfb-go/go.mod" | head -1)" ;;
  esac
}

{
  echo "# TechEmpower tests: kiln and its peers"
  echo
  echo "\`$command_line\` on $(date -u +%Y-%m-%d), $cpu_model, $(nproc) cores, $(uname -r);"
  echo "PostgreSQL $pg_version (private instance on 127.0.0.1, fsync and synchronous_commit off,"
  echo "shared_buffers 256MB), wrk -t$THREADS -c$CONNS, ${DURATION}s per run after ${WARMUP}s of warm-up,"
  echo "medians of $ROUNDS rounds (server order alternating). Raw outputs: \`$raw_rel/\` (not committed)."
  echo
  for s in "${servers[@]}"; do
    if [[ -n ${not_run[$s]:-} ]]; then echo "- **$s**: not run: ${not_run[$s]}"; else echo "- **$s**: $(version_of "$s")"; fi
  done
  echo
  echo "CPU columns: the server's own CPU time (all its processes and threads) and PostgreSQL's"
  echo "(postmaster and backends), each per 1,000 completed requests. wrk shares the two cores."
  echo
  for t in "${tests[@]}"; do
    echo "## $t (\`$(path_of "$t")\`)"
    echo
    echo "| server | req/s | p99 ms | server CPU ms/1k | PostgreSQL CPU ms/1k | errors |"
    echo "|---|---:|---:|---:|---:|---:|"
    for s in "${servers[@]}"; do
      ran "$s" || continue
      printf '| %s | %.0f | %s | %s | %s | %s |\n' "$s" "$(field_median "$s" "$t" 1)" "$(field_median "$s" "$t" 2)" \
        "$(field_median "$s" "$t" 3)" "$(field_median "$s" "$t" 4)" "$(field_sum "$s" "$t" 5)"
    done
    echo
    if ran kiln; then
      for peer in actix-web actix-http go; do
        ran "$peer" || continue
        awk -v a="$(field_median kiln "$t" 1)" -v b="$(field_median "$peer" "$t" 1)" \
            -v c="$(field_median kiln "$t" 3)" -v d="$(field_median "$peer" "$t" 3)" -v p="$peer" \
            'BEGIN {printf "kiln / %s: %.2fx req/s, %.2fx server CPU per request\n\n", p, (b > 0 ? a / b : 0), (d > 0 ? c / d : 0)}'
      done
    fi
  done
} >"$OUT"
echo "wrote $OUT" >&2
