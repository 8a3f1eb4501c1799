#!/usr/bin/env bash
# Plaintext benchmark: kiln's hello example against nginx, both on 127.0.0.1.
#   bash bench/plaintext.sh            (or `make bench`)
# Env: DURATION (10) seconds per measured run, WARMUP (2), ROUNDS (3), CONNS ("64 256"),
#      THREADS (auto: per scenario, whichever of wrk -t1/-t2 gives nginx more req/s),
#      CALIBRATE (3) seconds per -t1/-t2 trial, IDLE_CONNS (10000), KILN_BIN, KILN_PORT,
#      NGINX_PORT.
# Writes the table to stdout and bench/results/plaintext.md; raw wrk outputs go to
# bench/results/raw/<timestamp>/. Starts and stops its own servers, by PID only.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-"64 256"}
THREADS=${THREADS:-auto}
CALIBRATE=${CALIBRATE:-3}
IDLE_CONNS=${IDLE_CONNS:-10000}
KILN_BIN=${KILN_BIN:-$root/build/bin/hello}
KILN_PORT=${KILN_PORT:-18081}
NGINX_PORT=${NGINX_PORT:-18082}
command_line="DURATION=$DURATION WARMUP=$WARMUP ROUNDS=$ROUNDS CONNS=\"$CONNS\" THREADS=$THREADS IDLE_CONNS=$IDLE_CONNS bash bench/plaintext.sh"

bash "$root/scripts/deps.sh" bench

# Only one benchmark at a time on this machine.
exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "plaintext.sh: another benchmark is running" >&2; exit 1; }

stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw="$root/bench/results/raw/$stamp"
mkdir -p "$raw"
tmp=$(mktemp -d /tmp/kiln-bench.XXXXXX)
clk_tck=$(getconf CLK_TCK)
nproc=$(nproc)

# ---- process bookkeeping: every PID we start, and nginx's workers -------------------
started=()
cleanup() {
  local pid
  for pid in "${started[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${started[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  started=()
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

children_of() {  # direct children (nginx workers)
  pgrep -P "$1" || true
}

server_pids() {  # the server and its children (nginx: master + workers)
  echo "$1"
  children_of "$1"
}

cpu_ticks() {  # utime + stime (fields 14, 15) summed over the server's processes
  local total=0 pid t
  for pid in $(server_pids "$1"); do
    t=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{print $12 + $13}') || continue
    total=$((total + ${t:-0}))
  done
  echo "$total"
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_ready() {  # port, pid
  for _ in $(seq 100); do
    kill -0 "$2" 2>/dev/null || return 1
    curl -sf -o /dev/null "http://127.0.0.1:$1/plaintext" && return 0
    sleep 0.1
  done
  return 1
}

stop_server() {  # pid: TERM, wait, KILL if it lingers; then drop it from `started`
  local pid=$1 kids kid
  kids=$(children_of "$pid")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  for kid in $kids; do kill -KILL "$kid" 2>/dev/null || true; done  # only if orphaned
  local keep=() p
  for p in "${started[@]}"; do [[ $p == "$pid" ]] || keep+=("$p"); done
  started=("${keep[@]}")
}

nofile_for_servers() {  # 65536, or the hard limit if we may not go that high
  local hard
  hard=$(ulimit -Hn)
  [[ $hard == unlimited || $hard -ge 65536 ]] && echo 65536 || echo "$hard"
}

start_nginx() {
  local nofile user_line="" temp_paths="" m
  nofile=$(nofile_for_servers)
  [[ $(id -u) -eq 0 ]] && user_line="user root;"
  temp_paths="    client_body_temp_path $tmp/nginx/body;\n    proxy_temp_path $tmp/nginx/proxy;"
  for m in fastcgi uwsgi scgi; do
    nginx -V 2>&1 | grep -q -- "--without-http_${m}_module" ||
      temp_paths+="\n    ${m}_temp_path $tmp/nginx/$m;"
  done
  mkdir -p "$tmp/nginx"
  sed -e "s|@USER_LINE@|$user_line|" -e "s|@TMP@|$tmp/nginx|g" -e "s|@PORT@|$NGINX_PORT|" \
      -e "s|@NOFILE@|$nofile|" -e "s|@WORKER_CONNECTIONS@|$((nofile / 2))|" \
      -e "s|@TEMP_PATHS@|$temp_paths|" "$root/bench/nginx.conf.in" >"$tmp/nginx/nginx.conf"
  (ulimit -n "$nofile" && exec nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log") \
    >"$tmp/nginx/stdout" 2>&1 &
  nginx_pid=$!
  started+=("$nginx_pid")
  wait_ready "$NGINX_PORT" "$nginx_pid" || { cat "$tmp/nginx/error.log" >&2; echo "nginx did not start" >&2; exit 1; }
}

start_kiln() {
  local nofile
  nofile=$(nofile_for_servers)
  (ulimit -n "$nofile" && exec "$KILN_BIN" --port "$KILN_PORT" ${KILN_ARGS:---workers 0 --threads $nproc}) >"$tmp/kiln.log" 2>&1 &
  kiln_pid=$!
  started+=("$kiln_pid")
  wait_ready "$KILN_PORT" "$kiln_pid" || { cat "$tmp/kiln.log" >&2; echo "kiln did not start" >&2; exit 1; }
}

# ---- one wrk run ----------------------------------------------------------------------
# run_wrk NAME PORT PID THREADS CONNS PIPE SECONDS OUTFILE: prints "rps p99_ms cpu_ms_per_1k errors"
run_wrk() {
  local name=$1 port=$2 pid=$3 t=$4 c=$5 pipe=$6 secs=$7 out=$8
  local script=() before after
  [[ $pipe -gt 1 ]] && script=(-s "$root/bench/pipeline.lua")
  before=$(cpu_ticks "$pid")
  PIPELINE_DEPTH=$pipe wrk -t"$t" -c"$c" -d"${secs}s" --timeout 5s --latency "${script[@]}" \
    "http://127.0.0.1:$port/plaintext" >"$out" 2>&1 || echo "wrk ($name) exited with $?" >>"$out"
  after=$(cpu_ticks "$pid")
  awk -v ticks=$((after - before)) -v hz="$clk_tck" '
    function ms(v) {  # wrk prints 812.00us, 1.23ms, 2.01s, 1.00m
      if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0
      if (v ~ /m$/) return v * 60000; if (v ~ /s$/) return v * 1000; return v
    }
    /^ +99%/ { p99 = ms($2) }
    /requests in/ { n = $1 }
    /^Requests\/sec:/ { rps = $2 }
    /Socket errors:/ { err += $4 + $6 + $8 + $10 }
    /Non-2xx or 3xx responses:/ { err += $5 }
    END {
      if (n == 0 || rps == "") { print "NaN NaN NaN NaN"; exit }
      # wrk 4.1 prints 0 for a percentile when its coordinated-omission correction put
      # samples below the recorded minimum (seen with pipelining): report it as missing.
      p99s = p99 > 0 ? sprintf("%.3f", p99) : "NaN"
      printf "%.0f %s %.4f %d\n", rps, p99s, ticks * 1000 / hz / (n / 1000), err + 0
    }' "$out"
}

# ---- machine facts -------------------------------------------------------------------
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
have_kiln=0
if [[ -x $KILN_BIN ]]; then have_kiln=1; else echo "note: $KILN_BIN not found; measuring nginx only" >&2; fi
for p in "$NGINX_PORT" $([[ $have_kiln == 1 ]] && echo "$KILN_PORT"); do
  port_busy "$p" && { echo "port $p is already in use" >&2; exit 1; }
done

echo "kiln plaintext bench: $(date -u '+%F %T UTC'), $nproc CPUs ($cpu_model), raw output in $raw" >&2
start_nginx
[[ $have_kiln == 1 ]] && start_kiln

# ---- scenarios -----------------------------------------------------------------------
results="$tmp/results.tsv"  # scenario threads server round rps p99 cpu errors
: >"$results"
scenarios=()
for c in $CONNS; do scenarios+=("$c:1" "$c:16"); done

declare -A threads_for
for s in "${scenarios[@]}"; do
  c=${s%%:*} pipe=${s##*:}
  if [[ $THREADS != auto ]]; then threads_for[$s]=$THREADS; continue; fi
  best_t=1 best_rps=0
  for t in 1 2; do
    read -r rps _ <<<"$(run_wrk nginx "$NGINX_PORT" "$nginx_pid" "$t" "$c" "$pipe" "$CALIBRATE" "$raw/calibrate-c$c-p$pipe-t$t.txt")"
    echo "calibrate c=$c pipeline=$pipe: nginx wrk -t$t -> $rps req/s" >&2
    if [[ $rps != NaN ]] && ((rps > best_rps)); then best_t=$t best_rps=$rps; fi
  done
  threads_for[$s]=$best_t
done

for round in $(seq "$ROUNDS"); do
  for s in "${scenarios[@]}"; do
    c=${s%%:*} pipe=${s##*:} t=${threads_for[$s]}
    servers=(nginx)
    if [[ $have_kiln == 1 ]]; then
      # Alternate who goes first, so neither always runs on a warmer machine.
      ((round % 2)) && servers=(kiln nginx) || servers=(nginx kiln)
    fi
    for srv in "${servers[@]}"; do
      if [[ $srv == kiln ]]; then port=$KILN_PORT pid=$kiln_pid; else port=$NGINX_PORT pid=$nginx_pid; fi
      run_wrk "$srv" "$port" "$pid" "$t" "$c" "$pipe" "$WARMUP" "$raw/warmup-$srv-c$c-p$pipe-r$round.txt" >/dev/null
      read -r rps p99 cpu err <<<"$(run_wrk "$srv" "$port" "$pid" "$t" "$c" "$pipe" "$DURATION" "$raw/$srv-c$c-p$pipe-r$round.txt")"
      kill -0 "$pid" 2>/dev/null || { echo "$srv died during the run; see $raw" >&2; exit 1; }
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$t" "$srv" "$round" "$rps" "$p99" "$cpu" "$err" >>"$results"
      echo "round $round c=$c pipeline=$pipe $srv: $rps req/s, p99 $p99 ms, $cpu CPU ms/1k req, $err errors" >&2
    done
  done
done

# ---- idle connections: fresh servers, so load-time pools do not hide the cost ---------
idle_line() {  # name port pid
  local out="$raw/idle-$1.txt"
  if python3 "$root/bench/idle_conns.py" --port "$2" --pid "$3" -n "$IDLE_CONNS" >"$out" 2>&1; then
    sed -n 's/^result kib_per_conn=\([^ ]*\) open=\([^ ]*\) .*/\1 KiB per connection (\2 open)/p' "$out"
  else
    echo "failed ($(sed -n 's/^connections: //p' "$out" | head -1); see raw/$stamp/idle-$1.txt)"
  fi
}
stop_server "$nginx_pid"
[[ $have_kiln == 1 ]] && stop_server "$kiln_pid"
start_nginx
idle_nginx=$(idle_line nginx "$NGINX_PORT" "$nginx_pid")
stop_server "$nginx_pid"
idle_kiln="n/a (no kiln binary)"
if [[ $have_kiln == 1 ]]; then
  start_kiln
  idle_kiln=$(idle_line kiln "$KILN_PORT" "$kiln_pid")
  stop_server "$kiln_pid"
fi

# ---- report: medians over rounds ------------------------------------------------------
report="$root/bench/results/plaintext.md"
{
  echo "# Plaintext benchmark: kiln vs nginx"
  echo
  echo "- date: $(date -u '+%F %T UTC')"
  echo "- machine: $nproc CPUs, $cpu_model, $(uname -sr)"
  echo "- servers: kiln \`$(realpath --relative-to="$root" "$KILN_BIN" 2>/dev/null || echo "$KILN_BIN") ${KILN_ARGS:---workers 0 --threads $nproc}\`$([[ $have_kiln == 1 ]] || echo " (not built: not measured)"); $(nginx -v 2>&1 | sed 's/.*: //') with \`worker_processes auto\` (bench/nginx.conf.in); both on 127.0.0.1, same machine as wrk"
  echo "- command: \`$command_line\`"
  echo "- each cell: median of $ROUNDS run(s) of ${DURATION}s after a ${WARMUP}s warm-up; wrk -t chosen per scenario as the faster of -t1/-t2 for nginx ($THREADS); ratios are kiln / nginx"
  echo
  python3 - "$results" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
def med(scen, srv, col):
    vals = [float(r[col]) for r in rows if r[0] == scen and r[2] == srv and r[col] != "NaN"]
    return statistics.median(vals) if vals else None
def fmt(v, spec): return "n/a" if v is None else format(v, spec)
def ratio(a, b): return "n/a" if a is None or not b else f"{a / b:.2f}"
print("| scenario | wrk -t | kiln req/s | nginx req/s | ratio | kiln CPU ms/1k req | nginx CPU ms/1k req | ratio | kiln p99 ms | nginx p99 ms | errors |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
seen = []
for r in rows:
    if r[0] not in seen: seen.append(r[0])
for s in seen:
    c, p = s.split(":")
    name = f"{c} conns, " + ("no pipelining" if p == "1" else f"pipeline {p}")
    t = next(r[1] for r in rows if r[0] == s)
    kr, nr = med(s, "kiln", 4), med(s, "nginx", 4)
    kc, nc = med(s, "kiln", 6), med(s, "nginx", 6)
    kp, np_ = med(s, "kiln", 5), med(s, "nginx", 5)
    errs = sum(int(r[7]) for r in rows if r[0] == s and r[7] != "NaN")
    print(f"| {name} | {t} | {fmt(kr, ',.0f')} | {fmt(nr, ',.0f')} | {ratio(kr, nr)} | {fmt(kc, '.3f')} | "
          f"{fmt(nc, '.3f')} | {ratio(kc, nc)} | {fmt(kp, '.2f')} | {fmt(np_, '.2f')} | {errs} |")
PY
  echo
  echo "Idle keep-alive connections ($IDLE_CONNS, one request each, fresh server): kiln $idle_kiln; nginx $idle_nginx."
  echo
  echo "Raw wrk outputs: bench/results/raw/$stamp/ (not committed). With pipelining wrk counts every response as a request and measures latency per batch of 16."
} | tee "$report"
