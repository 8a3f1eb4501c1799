#!/usr/bin/env bash
# Cerflet's published benchmark (seeds/004, Maya Posch, 2016) on this machine: its
# "Hello World" page served by a handler class, `ab -n 100000 -c 5` (HTTP/1.0, no -k: a
# new connection per request), against Tomcat. Here: kiln's examples/cerflet_hello
# beside Spring Boot with embedded Tomcat (bench/peers/cerflet/spring) and Go's net/http
# (bench/peers/cerflet/go), all serving the same 99 bytes as text/html on 127.0.0.1.
#   bash bench/cerflet.sh
# Env: REQUESTS (100000) and CONC (5) for ab, WARMUP (10) seconds of the same ab load
#      per server before its measured run (at most REQUESTS requests), ONLY (e.g.
#      go,kiln), KILN_BUILD (build: the build tree to build cerflet_hello in; configured
#      as the Makefile does if it has none), KILN_ARGS (kiln's defaults), SKIP_SETUP=1
#      (use what was built last time), STARTUP_TIMEOUT (120) seconds for a server to
#      answer, AB_TIMEOUT (600) seconds per ab run, LOCK_WAIT (3600) seconds to wait for
#      the build lock, KEEPALIVE (1: after the measured run, the same ab with -k as a
#      supplement, to show what the connections cost; 0: not), OUT
#      (bench/results/cerflet.md).
# Builds take /tmp/kiln-build.lock one by one; then the script holds that lock for the
# whole measurement, so no build runs beside it (do not wrap the script in
# `flock /tmp/kiln-build.lock`: it would wait for itself). It shares /tmp/kiln-bench.lock
# with the other benchmarks. Servers run one at a time, each in its own process group:
# start, check the page, warm up, measure, stop by PID (also on Ctrl-C). Raw ab outputs
# and server logs go to bench/results/raw/cerflet-<timestamp>/.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
REQUESTS=${REQUESTS:-100000}
CONC=${CONC:-5}
WARMUP=${WARMUP:-10}
ONLY=${ONLY:-}
KILN_BUILD=${KILN_BUILD:-$root/build}
KILN_ARGS=${KILN_ARGS:-}
SKIP_SETUP=${SKIP_SETUP:-0}
STARTUP_TIMEOUT=${STARTUP_TIMEOUT:-120}
AB_TIMEOUT=${AB_TIMEOUT:-600}
LOCK_WAIT=${LOCK_WAIT:-3600}
KEEPALIVE=${KEEPALIVE:-1}
OUT=${OUT:-$root/bench/results/cerflet.md}
KILN_BUILD=$(realpath -m "$KILN_BUILD")
KILN_SERVER=$KILN_BUILD/bin/cerflet_hello
ALL_SERVERS=(kiln spring go)
PAGE='<!DOCTYPE html><html><head><title>Hello World</title></head><body><p>Hello World!</p></body></html>'

command_line="REQUESTS=$REQUESTS CONC=$CONC WARMUP=$WARMUP KEEPALIVE=$KEEPALIVE"
[[ -n $ONLY ]] && command_line+=" ONLY=$ONLY"
[[ $KILN_BUILD != "$root/build" ]] && command_line+=" KILN_BUILD=$(realpath -m --relative-to="$root" "$KILN_BUILD")"
[[ -n $KILN_ARGS ]] && command_line+=" KILN_ARGS=\"$KILN_ARGS\""
command_line+=" bash bench/cerflet.sh"

servers=()
for s in "${ALL_SERVERS[@]}"; do
  if [[ -z $ONLY || ,$ONLY, == *,$s,* ]]; then servers+=("$s"); fi
done
[[ ${#servers[@]} -gt 0 ]] || { echo "cerflet.sh: ONLY=$ONLY names none of: ${ALL_SERVERS[*]}" >&2; exit 1; }

command -v curl >/dev/null || { echo "cerflet.sh: curl is needed" >&2; exit 1; }
bash "$root/scripts/deps.sh" bench || echo "cerflet.sh: scripts/deps.sh bench failed; going on with what is installed" >&2
command -v ab >/dev/null || { echo "cerflet.sh: ab (apache2-utils) is not installed" >&2; exit 1; }

# Only one benchmark at a time on this machine (shared with the other bench scripts).
exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "cerflet.sh: another benchmark is running" >&2; exit 1; }

stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw_rel="bench/results/raw/cerflet-$stamp"
raw="$root/$raw_rel"
mkdir -p "$raw"
clk_tck=$(getconf CLK_TCK)
nproc=$(nproc)
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)

declare -A pid_of port_of not_run version_of check_of shape_of
source "$root/bench/lib/procs.sh"  # stop_server, await_server, free_port
trap stop_all_servers EXIT
trap 'exit 130' INT TERM

# ---- build: each step under the build lock ------------------------------------------------
setup_server() {  # name: 0 if it can be started; else sets not_run[name]
  local name=$1 log="$raw/setup-$1.log"
  if [[ $SKIP_SETUP == 1 ]]; then :
  elif [[ $name == kiln ]]; then
    echo "build kiln's cerflet_hello in $KILN_BUILD ..." >&2
    if [[ ! -f $KILN_BUILD/build.ninja ]]; then  # as the Makefile configures build/
      timeout 600 flock /tmp/kiln-build.lock cmake -S "$root" -B "$KILN_BUILD" -G Ninja \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$log" 2>&1 || true
    fi
    timeout 1800 flock /tmp/kiln-build.lock ninja -C "$KILN_BUILD" -j2 cerflet_hello >>"$log" 2>&1 || true
  else
    echo "setup $name ..." >&2
    if ! bash "$root/bench/peers/cerflet/$name/setup.sh" >"$log" 2>&1; then
      not_run[$name]="setup failed: $(grep -v '^[[:space:]]*$' "$log" | tail -1 | cut -c1-160)"
      return 1
    fi
  fi
  if [[ $name == kiln && ! -x $KILN_SERVER ]]; then
    not_run[$name]="$KILN_SERVER was not built (see $raw_rel/setup-kiln.log)"; return 1
  fi
}

version_line() {  # name: what exactly runs
  local d="$root/bench/peers/cerflet" type args_note
  case $1 in
    kiln) args_note=" (kiln's defaults)"; [[ -n $KILN_ARGS ]] && args_note=""
          type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$KILN_BUILD/CMakeCache.txt" 2>/dev/null)
          echo "kiln $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?'), \`$(realpath -m --relative-to="$root" "$KILN_SERVER")${KILN_ARGS:+ $KILN_ARGS}\`$args_note, CMAKE_BUILD_TYPE=${type:-?}, $(g++ --version | head -1)" ;;
    spring) echo "Spring Boot $(sed -n 's|.*<version>\(3[^<]*\)</version>.*|\1|p' "$d/spring/pom.xml" | head -1), embedded Tomcat $(python3 -c 'import re, sys, zipfile; print(*[m.group(1) for n in zipfile.ZipFile(sys.argv[1]).namelist() for m in [re.search(r"tomcat-embed-core-(.*)\.jar$", n)] if m])' "$d/spring/target/cerflet-hello-spring.jar" 2>/dev/null), $(java -version 2>&1 | head -1 | tr -d '"'), $(java -XX:+PrintCommandLineFlags -version 2>&1 | grep -o -- '-XX:+Use[A-Za-z0-9]*GC' | head -1 | sed 's/.*+Use\(.*\)GC/\1 GC/'), JVM and Tomcat defaults (200 request threads), one process" ;;
    go) echo "$(go version 2>/dev/null | cut -d' ' -f3) net/http, standard library only, one process, GOMAXPROCS=$nproc (default)" ;;
  esac
}

start_server() {  # name: starts it in a new process group (without the lock fds), waits for 200 on /
  local name=$1 port log="$raw/server-$1.log"
  port=$(free_port)
  if [[ $name == kiln ]]; then
    # shellcheck disable=SC2086
    env -u KILN_BUILD -u KILN_ARGS setsid "$KILN_SERVER" --port "$port" $KILN_ARGS >"$log" 2>&1 </dev/null 8>&- 9>&- &
  else
    setsid bash "$root/bench/peers/cerflet/$name/run.sh" "$port" >"$log" 2>&1 </dev/null 8>&- 9>&- &
  fi
  await_server "$name" $! "$port" / "$log"
}

check_page() {  # name: the body is Cerflet's page byte for byte, as text/html
  local name=$1 body="$raw/page-$1.html" ctype
  ctype=$(curl -s --max-time 5 -o "$body" -w '%{content_type}' "http://127.0.0.1:${port_of[$name]}/" || true)
  if [[ $(cat "$body" 2>/dev/null) != "$PAGE" || $(wc -c <"$body") != "${#PAGE}" ]]; then
    echo "FAILED: the body is not Cerflet's page ($(wc -c <"$body" 2>/dev/null || echo 0) bytes)"
  elif [[ $ctype != text/html* ]]; then echo "FAILED: Content-Type is $ctype"
  else echo "page identical (${#PAGE} bytes), Content-Type: $ctype"; fi
}

process_shape() {  # name: "P processes, T threads" of the server's process group
  ps -o nlwp= -g "${pid_of[$1]}" 2>/dev/null | awk '{p++; t += $1} END {printf "%d process%s, %d threads", p, p == 1 ? "" : "es", t}'
}

# group_ticks PGID: sets USER_TICKS and SYS_TICKS, utime and stime (plus cutime and
# cstime of reaped children) summed over every process of the group, all threads
# included. Bash builtins only.
group_ticks() {
  local pgid=$1 f line
  USER_TICKS=0 SYS_TICKS=0
  for f in /proc/[0-9]*/stat; do
    read -r line 2>/dev/null <"$f" || continue
    [[ $line == *") "* ]] || continue  # (a process that ended while it was read)
    # shellcheck disable=SC2086
    set -- ${line##*) }  # state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
    [[ $# -ge 15 && $3 == "$pgid" ]] || continue
    USER_TICKS=$((USER_TICKS + ${12} + ${14})) SYS_TICKS=$((SYS_TICKS + ${13} + ${15}))
  done
}
child_ticks() {  # sets CHILD_USER and CHILD_SYS: this shell's cutime and cstime (reaped children)
  local line
  read -r line <"/proc/$BASHPID/stat"
  # shellcheck disable=SC2086
  set -- ${line##*) }
  CHILD_USER=${14} CHILD_SYS=${15}
}

# run_ab NAME KIND OUT: KIND is warmup (-t WARMUP), measure (Cerflet's command) or
# keepalive (the same with -k). Prints "rps complete failed server_user server_sys
# ab_user ab_sys bytes_per_response time_taken_s p50_ms p99_ms max_ms" (CPU in ticks).
run_ab() {
  local name=$1 kind=$2 out=$3 pid=${pid_of[$1]} url="http://127.0.0.1:${port_of[$1]}/" cmd
  case $kind in
    warmup) cmd=(ab -q -t "$WARMUP" -n "$REQUESTS" -c "$CONC" "$url") ;;
    measure) cmd=(ab -n "$REQUESTS" -c "$CONC" "$url") ;;
    keepalive) cmd=(ab -k -n "$REQUESTS" -c "$CONC" "$url") ;;
  esac
  local su0 ss0 cu0 cs0
  group_ticks "$pid"; su0=$USER_TICKS ss0=$SYS_TICKS
  child_ticks; cu0=$CHILD_USER cs0=$CHILD_SYS
  (exec timeout "$AB_TIMEOUT" "${cmd[@]}") >"$out" 2>"$out.err" 8>&- 9>&- || true
  child_ticks
  group_ticks "$pid"
  python3 - "$out" $((USER_TICKS - su0)) $((SYS_TICKS - ss0)) $((CHILD_USER - cu0)) $((CHILD_SYS - cs0)) <<'PY'
import re, sys
path, ticks = sys.argv[1], sys.argv[2:6]
text = open(path, errors="replace").read()
def grab(pattern, default=float("nan")):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else default
done = int(grab(r"Complete requests:\s+(\d+)", 0))
bad = int(grab(r"Failed requests:\s+(\d+)", 0)) + int(grab(r"Non-2xx responses:\s+(\d+)", 0))
total = grab(r"Total transferred:\s+(\d+) bytes")
print("%.1f %d %d %s %s %s %s %s %s" % (
    grab(r"Requests per second:\s+([\d.]+)"), done, bad, " ".join(ticks),
    "%.0f" % (total / done) if done else "NaN", grab(r"Time taken for tests:\s+([\d.]+)"),
    grab(r"\n\s+50%\s+(\d+)"), grab(r"\n\s+99%\s+(\d+)"), grab(r"\n\s+100%\s+(\d+)")))
PY
}

# ---- go ----------------------------------------------------------------------------------
echo "cerflet benchmark: $(date -u '+%F %T UTC'), $nproc CPUs ($cpu_model), raw output in $raw_rel" >&2
ready=()
for s in "${servers[@]}"; do
  if setup_server "$s"; then ready+=("$s"); version_of[$s]=$(version_line "$s")
  else echo "$s: not run: ${not_run[$s]}" >&2; fi
done

# From here on no build may run beside the measurement: hold the build lock to the end.
exec 8>/tmp/kiln-build.lock
if ! flock -n 8; then
  echo "cerflet.sh: waiting up to ${LOCK_WAIT}s for /tmp/kiln-build.lock (a build is running) ..." >&2
  flock -w "$LOCK_WAIT" 8 || { echo "cerflet.sh: the build lock stayed taken" >&2; exit 1; }
fi

results="$raw/results.tsv"  # name warmup-line measure-line keepalive-line (run_ab's)
: >"$results"
for s in "${ready[@]}"; do
  echo "start $s ..." >&2
  start_server "$s" || { echo "$s: not run: ${not_run[$s]}" >&2; continue; }
  check_of[$s]=$(check_page "$s")
  echo "$s on port ${port_of[$s]} (pid ${pid_of[$s]}): ${check_of[$s]}" >&2
  none="NaN 0 0 0 0 0 0 NaN NaN NaN NaN NaN"
  warm=$none keep=$none
  if ((WARMUP > 0)); then
    warm=$(run_ab "$s" warmup "$raw/warmup-$s.txt")
    echo "$s warm-up (${WARMUP}s): $warm" >&2
  fi
  line=$(run_ab "$s" measure "$raw/ab-$s.txt")
  shape_of[$s]=$(process_shape "$s")
  echo "$s: $line (${shape_of[$s]})" >&2
  if [[ $KEEPALIVE == 1 ]]; then
    keep=$(run_ab "$s" keepalive "$raw/ab-k-$s.txt")
    echo "$s with -k: $keep" >&2
  fi
  [[ $s == kiln ]] && shape_of[$s]+="; $(grep -o 'with [0-9]* workers\? of [0-9]* threads\? ([a-z]*)' "$raw/server-kiln.log" | head -1)"
  printf '%s\t%s\t%s\t%s\n' "$s" "$warm" "$line" "$keep" >>"$results"
  if ! kill -0 "${pid_of[$s]}" 2>/dev/null; then
    check_of[$s]+="; the server exited during the run: $(tail -1 "$raw/server-$s.log" | cut -c1-120)"
  fi
  stop_server "$s"
done

# ---- report ------------------------------------------------------------------------------
meta="$raw/servers.tsv"  # name status text
: >"$meta"
for s in "${servers[@]}"; do
  if [[ -n ${not_run[$s]:-} ]]; then printf '%s\tnot_run\t%s\n' "$s" "${not_run[$s]}" >>"$meta"
  else printf '%s\tran\t%s | %s | %s\n' "$s" "${check_of[$s]:-}" "${shape_of[$s]:-}" "${version_of[$s]:-}" >>"$meta"; fi
done
mkdir -p "$(dirname "$OUT")"
{
  echo "# Cerflet's benchmark: kiln, Spring Boot (Tomcat) and Go"
  echo
  echo "Cerflet's published test (seeds/004): its \"Hello World\" page from a handler class,"
  echo "\`ab -n 100000 -c 5\` on the loopback, a new connection per request (ab speaks HTTP/1.0"
  echo "and was run without -k), against Tomcat. Repeated here with kiln's"
  echo "\`examples/cerflet_hello\` (a handler class, \`app.get<Hello>(\"/\")\`), a Spring Boot app"
  echo "on embedded Tomcat and Go's net/http (bench/peers/cerflet/), all answering the same"
  echo "99-byte page as text/html."
  echo
  echo "- date: $(date -u '+%F %T UTC')"
  echo "- machine: $nproc CPUs, $cpu_model, $(awk '/^MemTotal:/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo) RAM, $(uname -sr); shared with other work (builds and benchmarks were kept off it by the locks during the run); servers and ab on the same cores, all on 127.0.0.1"
  echo "- command: \`$command_line\`"
  echo "- each server in turn, alone: start, check the page, ${WARMUP}s of the same ab load as a warm-up (at most $REQUESTS requests), then once \`ab -n $REQUESTS -c $CONC http://127.0.0.1:PORT/\`, stop"
  echo
  python3 - "$results" "$meta" "$REQUESTS" "$clk_tck" "$WARMUP" "$KEEPALIVE" <<'PY'
import sys
rows = {l.split("\t")[0]: l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()}
meta = [l.rstrip("\n").split("\t", 2) for l in open(sys.argv[2]) if l.strip()]
requests, hz, warmup, keepalive = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6] == "1"
class Run:  # one line of run_ab
    def __init__(self, line):
        f = line.split()
        self.rps = float(f[0]); self.done, self.bad = int(f[1]), int(f[2])
        self.su, self.ss, self.cu, self.cs = (int(x) for x in f[3:7])
        self.bytes, self.taken, self.p50, self.p99, self.pmax = f[7:12]
        self.ok = self.done - self.bad
    def per1k(self, ticks):  # CPU ms per 1,000 successful requests
        return ticks * 1000.0 / hz / (self.ok / 1000.0) if self.ok > 0 else None
    def cores(self, ticks):  # cores kept busy: CPU time over ab's elapsed time
        t = float(self.taken)
        return ticks / hz / t if t == t and t > 0 else None
def fmt(v, spec):
    return "n/a" if v is None or v != v else format(v, spec)
def pct(part, whole):
    return f"{100.0 * part / whole:.0f}%" if whole else "n/a"
ran = [name for name, status, _ in meta if name in rows]
print("| server | req/s | failed | server CPU ms/1k req (kernel share) | ab CPU ms/1k req (kernel share) | server + ab CPU ms/1k req | cores busy: server / ab | bytes per response | time taken s | p50 / p99 / max ms |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for name in ran:
    m = Run(rows[name][2])
    srv, cli = m.su + m.ss, m.cu + m.cs
    failed = m.bad + requests - m.done  # failed plus never completed
    print(f"| {name} | {fmt(m.rps, ',.0f')} | {failed} | {fmt(m.per1k(srv), '.1f')} ({pct(m.ss, srv)}) | "
          f"{fmt(m.per1k(cli), '.1f')} ({pct(m.cs, cli)}) | {fmt(m.per1k(srv + cli), '.1f')} | "
          f"{fmt(m.cores(srv), '.2f')} / {fmt(m.cores(cli), '.2f')} | {m.bytes} | {m.taken} | "
          f"{m.p50.split('.')[0]} / {m.p99.split('.')[0]} / {m.pmax.split('.')[0]} |")
print("| Cerflet, published (seeds/004) | 13,850 | 0 | | | | | 199 | 7.220 | 0 / 1 / 10 |")
print("| Tomcat 8.0.30 servlet example, published (seeds/004) | 12,992 | 0 | | | | | 562 | 7.697 | 0 / 1 / 14 |")
print()
print("The published rows: Windows 7 x64, Intel i7-6700K (4 cores, 8 threads), 32 GB; Cerflet on")
print("POCO 1.6, 32-bit GCC 5.3 -Og, logging every request to its console; Tomcat's own")
print("HelloWorldExample servlet (a 400-byte page). For scale only: other hardware, other OS.")
print()
for name, status, text in meta:
    if status == "not_run":
        print(f"- {name}: not run: {text}")
    else:
        check, shape, version = text.split(" | ", 2)
        print(f"- {name}: {version}; {shape}; check: {check}")
print(f"\n### Warm-up: the same load right after start, {warmup}s or {requests} requests, whichever came first\n")
print("| server | req/s | requests | server CPU ms/1k req |")
print("| --- | --- | --- | --- |")
for name in ran:
    w = Run(rows[name][1])
    print(f"| {name} | {fmt(w.rps, ',.0f')} | {w.done} | {fmt(w.per1k(w.su + w.ss), '.1f')} |")
if keepalive:
    print(f"\n### Supplement, not Cerflet's test: the same with keep-alive, `ab -k -n {requests} -c 5`\n")
    print("Five connections for the whole run: what is left when the connections cost nothing.\n")
    print("| server | req/s | failed | server CPU ms/1k req (kernel share) | ab CPU ms/1k req (kernel share) | cores busy: server / ab |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in ran:
        k = Run(rows[name][3])
        srv, cli = k.su + k.ss, k.cu + k.cs
        print(f"| {name} | {fmt(k.rps, ',.0f')} | {k.bad + requests - k.done} | {fmt(k.per1k(srv), '.1f')} ({pct(k.ss, srv)}) | "
              f"{fmt(k.per1k(cli), '.1f')} ({pct(k.cs, cli)}) | {fmt(k.cores(srv), '.2f')} / {fmt(k.cores(cli), '.2f')} |")
PY
  echo
  echo "Columns: req/s, failed (ab's Failed requests plus non-2xx plus requests never"
  echo "completed), bytes per response (ab's Total transferred / Complete requests: head and"
  echo "body), time taken and the percentiles are ab's own lines. Server CPU is utime+stime of"
  echo "every process of the server's process group (all threads; /proc/PID/stat) before and"
  echo "after the ab run, per 1,000 successful requests; the kernel share is stime's part. ab"
  echo "CPU likewise for ab (the script's reaped-children time). Cores busy: that CPU time over"
  echo "ab's time taken. ab and the servers share the $nproc cores, and on the loopback the kernel"
  echo "does much of the receiving side's TCP work in the sender's system call, so the split"
  echo "between server and ab CPU is approximate; their sum is not."
  echo
  echo "Raw ab outputs, pages and server logs: $raw_rel/ (not committed)."
} | tee "$OUT"
