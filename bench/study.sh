#!/usr/bin/env bash
# The session study (Muszynski 2022, seeds/003) on this machine: kiln's generic example
# against the same app on Express, Flask, Spring Boot, Go net/http and actix-web
# (bench/peers/), all on 127.0.0.1, loaded by `kiln bench` (or, with CLIENT=go, by the
# independent Go client bench/clients/study-go, same scenarios and JSON fields).
#   bash bench/study.sh
# Env: DURATION (10) seconds per measured run, REQUESTS (10000) per batch (-r; a run
#      ends at whichever bound comes first), BATCHES (100) parallel sessions, ROUNDS (3),
#      WARMUP (5) seconds of the write scenario per server before round 1,
#      CLIENT_THREADS (kiln bench's default), ONLY (e.g. go,kiln), KILN_ARGS (kiln's
#      defaults), SKIP_SETUP=1 (use what the peers' setup.sh built last time),
#      STARTUP_TIMEOUT (120) seconds for a server to answer GET /, CLIENT (kiln or go),
#      OUT (the report, bench/results/study.md; its chart beside it, .svg for .md).
# Writes bench/results/study.md and bench/results/study.svg; raw client outputs, logs
# and summary.json go to bench/results/raw/study-<timestamp>/. Starts every server in
# its own process group and stops exactly those groups, also on Ctrl-C.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
DURATION=${DURATION:-10}
REQUESTS=${REQUESTS:-10000}
BATCHES=${BATCHES:-100}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-5}
CLIENT_THREADS=${CLIENT_THREADS:-}
ONLY=${ONLY:-}
KILN_ARGS=${KILN_ARGS:-}
SKIP_SETUP=${SKIP_SETUP:-0}
STARTUP_TIMEOUT=${STARTUP_TIMEOUT:-120}
KILN_CLIENT=${KILN_CLIENT:-$root/build/bin/kiln}
KILN_SERVER=${KILN_SERVER:-$root/build/bin/generic}
CLIENT=${CLIENT:-kiln}
GO_CLIENT=$root/bench/clients/study-go/bin/study-go
ALL_SERVERS=(kiln actix go spring express flask)

command_line="DURATION=$DURATION REQUESTS=$REQUESTS BATCHES=$BATCHES ROUNDS=$ROUNDS WARMUP=$WARMUP"
[[ -n $CLIENT_THREADS ]] && command_line+=" CLIENT_THREADS=$CLIENT_THREADS"
[[ -n $ONLY ]] && command_line+=" ONLY=$ONLY"
[[ -n $KILN_ARGS ]] && command_line+=" KILN_ARGS=\"$KILN_ARGS\""
[[ $CLIENT != kiln ]] && command_line+=" CLIENT=$CLIENT"
command_line+=" bash bench/study.sh"

case $CLIENT in
  kiln) [[ -x $KILN_CLIENT ]] || { echo "study.sh: the load client $KILN_CLIENT is not built (make build)" >&2; exit 1; }
        client_cmd=("$KILN_CLIENT" bench) client_name="build/bin/kiln bench" ;;
  go) [[ $SKIP_SETUP == 1 ]] || bash "$root/bench/clients/study-go/setup.sh" || exit 1
      [[ -x $GO_CLIENT ]] || { echo "study.sh: $GO_CLIENT is not built (bash bench/clients/study-go/setup.sh)" >&2; exit 1; }
      client_cmd=("$GO_CLIENT") client_name="bench/clients/study-go/bin/study-go" ;;
  *) echo "study.sh: CLIENT=$CLIENT: expected kiln or go" >&2; exit 1 ;;
esac
command -v curl >/dev/null || { echo "study.sh: curl is needed" >&2; exit 1; }

# Only one benchmark at a time on this machine (shared with plaintext.sh).
exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "study.sh: another benchmark is running" >&2; exit 1; }

stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw_rel="bench/results/raw/study-$stamp"
raw="$root/$raw_rel"
mkdir -p "$raw"
clk_tck=$(getconf CLK_TCK)
nproc=$(nproc)
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)

servers=()
for s in "${ALL_SERVERS[@]}"; do
  if [[ -z $ONLY || ,$ONLY, == *,$s,* ]]; then servers+=("$s"); fi
done
[[ ${#servers[@]} -gt 0 ]] || { echo "study.sh: ONLY=$ONLY names none of: ${ALL_SERVERS[*]}" >&2; exit 1; }

declare -A pid_of port_of not_run check_of version_of rss_of note_of

source "$root/bench/lib/procs.sh"  # stop_server, tree_stats, self_child_ticks, free_port
cleanup() { stop_all_servers; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- setup, versions and start ---------------------------------------------------------
setup_server() {  # name: 0 if it can be started; else sets not_run[name]
  local name=$1 log="$raw/setup-$1.log"
  if [[ $name == kiln ]]; then
    [[ -x $KILN_SERVER ]] || { not_run[$name]="$KILN_SERVER is not built (make build)"; return 1; }
    return 0
  fi
  local dir="$root/bench/peers/$name"
  [[ -x $dir/run.sh ]] || { not_run[$name]="bench/peers/$name/run.sh is missing"; return 1; }
  if [[ $SKIP_SETUP == 1 ]]; then return 0; fi
  echo "setup $name ..." >&2
  if ! bash "$dir/setup.sh" >"$log" 2>&1; then
    not_run[$name]="setup failed: $(grep -v '^[[:space:]]*$' "$log" | tail -1 | cut -c1-160)"
    return 1
  fi
}

version_line() {  # name: what exactly runs
  local d="$root/bench/peers"
  case $1 in
    kiln) echo "kiln $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?'), \`build/bin/generic ${KILN_ARGS:-(defaults: one worker process per core)}\`" ;;
    express) echo "Express $(node -p "require('$d/express/node_modules/express/package.json').version" 2>/dev/null), express-session $(node -p "require('$d/express/node_modules/express-session/package.json').version" 2>/dev/null) + memorystore, Node $(node --version), one process, NODE_ENV=production" ;;
    flask) echo "Flask $("$d/flask/.venv/bin/python" -c 'import importlib.metadata as m; print(m.version("flask"), "on Waitress", m.version("waitress"))' 2>/dev/null), $("$d/flask/.venv/bin/python" --version 2>&1), one process, 4 threads, signed-cookie sessions" ;;
    spring) echo "Spring Boot $(sed -n 's|.*<version>\(3[^<]*\)</version>.*|\1|p' "$d/spring/pom.xml" | head -1) (Tomcat, HttpSession), $(java -version 2>&1 | head -1 | tr -d '"'), default JVM and Tomcat settings" ;;
    go) echo "$(go version 2>/dev/null | cut -d' ' -f3) net/http, GOMAXPROCS=$nproc, mutex-guarded session map" ;;
    actix) echo "actix-web $(awk '/^name = "actix-web"$/ {getline; gsub(/[^0-9.]/, ""); print}' "$d/actix/Cargo.lock"), actix-files $(awk '/^name = "actix-files"$/ {getline; gsub(/[^0-9.]/, ""); print}' "$d/actix/Cargo.lock"), $(rustc --version 2>/dev/null | cut -d' ' -f1-2), $nproc workers, shared in-memory session map" ;;
  esac
}

start_server() {  # name: starts it in a new process group, waits until GET / answers 200
  local name=$1 port log="$raw/server-$1.log" pid
  port=$(free_port)
  if [[ $name == kiln ]]; then
    # shellcheck disable=SC2086
    setsid "$KILN_SERVER" --port "$port" $KILN_ARGS >"$log" 2>&1 </dev/null &
  else
    setsid bash "$root/bench/peers/$name/run.sh" "$port" >"$log" 2>&1 </dev/null &
  fi
  await_server "$name" $! "$port" / "$log"
}

# ---- one client run --------------------------------------------------------------------
# run_client NAME SCENARIO SECONDS OUT: writes OUT (the client's JSON) and OUT.line:
# "rps ok failed requests new_cookies server_cpu_ms_per_1k client_cpu_ms_per_1k
# server_kernel_cpu_ms_per_1k" (the kernel's part: stime)
run_client() {
  local name=$1 scen=$2 secs=$3 out=$4 pid=${pid_of[$1]} port=${port_of[$1]}
  local args=(-b "$BATCHES" -r "$REQUESTS" -c 2 -g -d "$secs" --json)
  [[ $scen == write ]] && args+=(-u)
  [[ -n $CLIENT_THREADS ]] && args+=(-t "$CLIENT_THREADS")
  local srv_before srv_after cli_before cli_after sys_before
  tree_stats "$pid"; srv_before=$TREE_TICKS sys_before=$TREE_SYS_TICKS
  self_child_ticks; cli_before=$CHILD_TICKS
  (exec timeout $((secs + 60)) "${client_cmd[@]}" "${args[@]}" "http://127.0.0.1:$port/") >"$out" 2>"$out.err" || true
  self_child_ticks; cli_after=$CHILD_TICKS
  tree_stats "$pid"; srv_after=$TREE_TICKS
  rss_of[$name]=$((TREE_RSS_KB / 1024))
  python3 - "$out" $((srv_after - srv_before)) $((cli_after - cli_before)) "$clk_tck" \
    $((TREE_SYS_TICKS - sys_before)) >"$out.line" <<'PY'
import json, sys
path, srv, cli, hz, sys_ticks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
try:
    j = json.loads(open(path).read().strip().splitlines()[-1])
except Exception:
    print("NaN 0 NaN NaN NaN NaN NaN NaN"); sys.exit()
ok = j.get("ok", 0)
per1k = lambda t: "%.4f" % (t * 1000.0 / hz / (ok / 1000.0)) if ok else "NaN"
print("%.1f %d %d %d %d %s %s %s" % (j.get("requests_per_second", 0), ok, j.get("failed", 0),
                                     j.get("requests", 0), j.get("new_cookies", 0), per1k(srv), per1k(cli),
                                     per1k(sys_ticks)))
PY
}

# ---- go ----------------------------------------------------------------------------------
echo "kiln session study: $(date -u '+%F %T UTC'), $nproc CPUs ($cpu_model), raw output in $raw_rel" >&2
running=()
for s in "${servers[@]}"; do
  setup_server "$s" || { echo "$s: not run: ${not_run[$s]}" >&2; continue; }
  version_of[$s]=$(version_line "$s")
done
for s in "${servers[@]}"; do
  [[ -z ${not_run[$s]:-} ]] || continue
  echo "start $s ..." >&2
  if start_server "$s"; then
    running+=("$s")
    if bash "$root/bench/peers/check.sh" "${port_of[$s]}" "$s" >"$raw/check-$s.txt" 2>&1; then
      check_of[$s]="all checks passed"
    else
      check_of[$s]="FAILED: $(grep -c '^FAIL' "$raw/check-$s.txt") check(s), see $raw_rel/check-$s.txt"
    fi
    echo "$s on port ${port_of[$s]} (pid ${pid_of[$s]}): ${check_of[$s]}" >&2
  else
    echo "$s: not run: ${not_run[$s]}" >&2
  fi
done

results="$raw/results.tsv"  # server scenario round rps ok failed requests new_cookies srv_ms cli_ms srv_sys_ms
: >"$results"
if ((WARMUP > 0)); then
  for s in "${running[@]}"; do
    run_client "$s" write "$WARMUP" "$raw/warmup-$s.json"
  done
fi
for round in $(seq "$ROUNDS"); do
  # Alternate: each round starts one server later, so no server always runs first.
  n=${#running[@]} order=()
  for ((i = 0; i < n; i++)); do order+=("${running[$(((i + round - 1) % n))]}"); done
  for scen in read write; do
    for s in "${order[@]}"; do
      [[ -n ${pid_of[$s]:-} ]] || continue
      out="$raw/$s-$scen-r$round.json"
      run_client "$s" "$scen" "$DURATION" "$out"
      read -r rps ok failed requests cookies srv cli srv_sys <"$out.line"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$scen" "$round" "$rps" "$ok" "$failed" \
        "$requests" "$cookies" "$srv" "$cli" "$srv_sys" >>"$results"
      echo "round $round $scen $s: $rps req/s, $ok ok, $failed failed, $cookies new cookies, server $srv / client $cli CPU ms per 1k" >&2
      if ! kill -0 "${pid_of[$s]}" 2>/dev/null; then
        note_of[$s]="the server exited during round $round ($scen): $(tail -1 "$raw/server-$s.log" | cut -c1-120)"
        echo "$s: ${note_of[$s]}" >&2
        stop_server "$s"
      fi
    done
  done
done
for s in "${running[@]}"; do stop_server "$s"; done

# ---- report ------------------------------------------------------------------------------
meta="$raw/servers.tsv"  # server status text check rss_mib
: >"$meta"
for s in "${servers[@]}"; do
  if [[ -n ${not_run[$s]:-} ]]; then
    printf '%s\tnot_run\t%s\t\t\n' "$s" "${not_run[$s]}" >>"$meta"
  else
    printf '%s\tran\t%s\t%s\t%s\n' "$s" "${version_of[$s]}${note_of[$s]:+; ${note_of[$s]}}" \
      "${check_of[$s]:-}" "${rss_of[$s]:-}" >>"$meta"
  fi
done
report=${OUT:-$root/bench/results/study.md}
svg=${report%.md}.svg
{
  echo "# Session study: kiln and its peers"
  echo
  echo "The generic web application of the Node++ comparative study (Muszynski 2022): a page"
  echo "with the visitor's session id, a 200 KiB stylesheet and a 100 KiB picture fetched once"
  echo "per session, random disconnects after 40-167 requests; the write scenario adds a 15 KiB"
  echo "upload after each page. Same app in every framework: bench/peers/ and examples/generic/."
  echo
  echo "- date: $(date -u '+%F %T UTC')"
  echo "- machine: $nproc CPUs, $cpu_model, $(uname -sr); servers and client share it, all on 127.0.0.1"
  echo "- command: \`$command_line\`"
  echo "- client: \`$client_name -b $BATCHES -r $REQUESTS -c 2 -g [-u] -d $DURATION${CLIENT_THREADS:+ -t $CLIENT_THREADS} --json\`: read = \`-g -c 2\`, write = \`-g -c 2 -u\`"
  echo "- each cell: median of $ROUNDS run(s) (servers alternate; each round starts with the next one), after a ${WARMUP}s warm-up run of the write scenario per server"
  echo
  python3 - "$results" "$meta" "$raw/summary.json" <<'PY'
import json, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
meta = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.strip()]
def num(v):
    try:
        f = float(v)
        return None if f != f else f
    except ValueError:
        return None
def med(srv, scen, col):
    vals = [num(r[col]) for r in rows if r[0] == srv and r[1] == scen]
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None
def total(srv, scen, col):
    return sum(int(float(r[col])) for r in rows if r[0] == srv and r[1] == scen and num(r[col]) is not None)
def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)
summary = {"servers": []}
kiln = {sc: med("kiln", sc, 3) for sc in ("read", "write")}
print("| server | read req/s | write req/s | server CPU ms/1k req (read / write) | of which kernel (read / write) | client CPU ms/1k req (read / write) | failed requests (read / write) | new session cookies per run (read / write) | ratio vs kiln req/s (read / write) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for name, status, text, check, rss in meta:
    if status == "not_run":
        print(f"| {name} | not run: {text} | | | | | | | |")
        summary["servers"].append({"name": name, "not_run": text})
        continue
    rd, wr = med(name, "read", 3), med(name, "write", 3)
    def ratio(v, sc):
        return "n/a" if v is None or not kiln[sc] else f"{v / kiln[sc]:.2f}"
    print(f"| {name} | {fmt(rd, ',.0f')} | {fmt(wr, ',.0f')} | "
          f"{fmt(med(name, 'read', 8), '.3f')} / {fmt(med(name, 'write', 8), '.3f')} | "
          f"{fmt(med(name, 'read', 10), '.3f')} / {fmt(med(name, 'write', 10), '.3f')} | "
          f"{fmt(med(name, 'read', 9), '.3f')} / {fmt(med(name, 'write', 9), '.3f')} | "
          f"{total(name, 'read', 5)} / {total(name, 'write', 5)} | "
          f"{fmt(med(name, 'read', 7), '.0f')} / {fmt(med(name, 'write', 7), '.0f')} | "
          f"{ratio(rd, 'read')} / {ratio(wr, 'write')} |")
    summary["servers"].append({
        "name": name, "version": text, "check": check, "rss_mib_after": num(rss),
        "read_rps": rd, "write_rps": wr,
        "read_cpu_ms_per_1k": med(name, "read", 8), "write_cpu_ms_per_1k": med(name, "write", 8),
        "read_kernel_cpu_ms_per_1k": med(name, "read", 10), "write_kernel_cpu_ms_per_1k": med(name, "write", 10),
        "read_failed": total(name, "read", 5), "write_failed": total(name, "write", 5)})
print()
print("What runs:")
print()
for name, status, text, check, rss in meta:
    if status == "not_run":
        print(f"- {name}: not run: {text}")
    else:
        print(f"- {name}: {text}; curl checks (bench/peers/check.sh): {check}; RSS after the last run: {rss or '?'} MiB")
json.dump(summary, open(sys.argv[3], "w"), indent=1)
PY
  echo
  echo "Columns: req/s is the client's successful requests (status 200) over its elapsed time,"
  echo "pages, assets and uploads together; server CPU is utime+stime of the server's whole"
  echo "process tree (/proc) during the run per 1,000 successful requests (of which kernel: its"
  echo "stime, the system calls and the loopback's delivery of what it sends), the client's likewise;"
  echo "failed counts are summed over the rounds. The client keeps each session's cookie across"
  echo "reconnects, so a server that keeps its sessions sets about one new cookie per batch"
  echo "($BATCHES) and run; many more means sessions were lost."
  echo
  echo "Raw client outputs, server logs and curl checks: $raw_rel/ (not committed)."
} | tee "$report"
python3 "$root/bench/study_chart.py" "$raw/summary.json" "$svg" \
  --title "Session study, $nproc CPUs: requests per second and server CPU per 1,000 requests" &&
  echo >&2 "chart: $svg" && echo -e "\n![chart]($(basename "$svg"))" >>"$report"
