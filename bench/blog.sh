#!/usr/bin/env bash
# TreeFrog's and Klone's published tests (seeds/000, seeds/002) on this machine, kiln
# beside the Go and Express peers (bench/peers/blog-go, bench/peers/blog-express):
#  treefrog  the blog index GET /posts (newest 10 posts from SQLite) with one request per
#            connection: `kiln bench -c 0` for DURATION seconds, and `httperf
#            --num-calls=1` (HTTPERF_CONNS connections, as TreeFrog ran it) if installed;
#            once on an empty table and once with 100 posts. kiln: build/bin/blog.
#  klone     `ab -n AB_REQUESTS -c 10 'http://127.0.0.1:PORT/hello?name=John'`.
#            kiln: build/bin/hello.
#   bash bench/blog.sh
# Env: ROUNDS (3), DURATION (10) seconds per kiln bench run, WARMUP (2) seconds per
#      server and scenario before round 1, CONNS (1) concurrent connections of kiln bench
#      (TreeFrog's httperf had at most 1), HTTPERF_CONNS (10000), AB_REQUESTS (100000),
#      AB_CONC (10), SIZES ("0 100") posts, SCENARIOS (treefrog,klone), ONLY (e.g.
#      go,kiln), KILN_ARGS (kiln's defaults: a worker per core), SKIP_SETUP=1 (use what
#      the peers' setup.sh built last time), STARTUP_TIMEOUT (120), OUT (the report,
#      bench/results/blog.md), BASE_BUILD (a build directory of an earlier kiln, e.g. a
#      worktree's build: adds the server kiln-base, its bin/blog and bin/hello, run from
#      that worktree's examples/blog, beside kiln in the same rounds: before and after).
# Every server reads the same rows: the script makes a fresh SQLite file per size in a
# temp dir (kiln's blog, if built, first applies its own migrations to it), fills it
# with python3's sqlite3, and removes it at the end. Raw outputs go to
# bench/results/raw/blog-<timestamp>/. Every server runs in its own process group; the
# script stops exactly those groups, also on Ctrl-C.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
CONNS=${CONNS:-1}
HTTPERF_CONNS=${HTTPERF_CONNS:-10000}
AB_REQUESTS=${AB_REQUESTS:-100000}
AB_CONC=${AB_CONC:-10}
SIZES=${SIZES:-"0 100"}
SCENARIOS=${SCENARIOS:-treefrog,klone}
ONLY=${ONLY:-}
KILN_ARGS=${KILN_ARGS:-}
SKIP_SETUP=${SKIP_SETUP:-0}
STARTUP_TIMEOUT=${STARTUP_TIMEOUT:-120}
OUT=${OUT:-$root/bench/results/blog.md}
KILN_CLIENT=${KILN_CLIENT:-$root/build/bin/kiln}
KILN_BLOG=${KILN_BLOG:-$root/build/bin/blog}
KILN_HELLO=${KILN_HELLO:-$root/build/bin/hello}
BASE_BUILD=${BASE_BUILD:-}
ALL_SERVERS=(kiln go express)
[[ -n $BASE_BUILD ]] && ALL_SERVERS=(kiln kiln-base go express)

command_line="ROUNDS=$ROUNDS DURATION=$DURATION WARMUP=$WARMUP CONNS=$CONNS HTTPERF_CONNS=$HTTPERF_CONNS"
command_line+=" AB_REQUESTS=$AB_REQUESTS AB_CONC=$AB_CONC SIZES=\"$SIZES\" SCENARIOS=$SCENARIOS"
[[ -n $ONLY ]] && command_line+=" ONLY=$ONLY"
[[ -n $KILN_ARGS ]] && command_line+=" KILN_ARGS=\"$KILN_ARGS\""
[[ -n $BASE_BUILD ]] && command_line+=" BASE_BUILD=$BASE_BUILD"
command_line+=" bash bench/blog.sh"

servers=()
for s in "${ALL_SERVERS[@]}"; do
  if [[ -z $ONLY || ,$ONLY, == *,$s,* ]]; then servers+=("$s"); fi
done
[[ ${#servers[@]} -gt 0 ]] || { echo "blog.sh: ONLY=$ONLY names none of: ${ALL_SERVERS[*]}" >&2; exit 1; }

[[ -x $KILN_CLIENT ]] || { echo "blog.sh: the load client $KILN_CLIENT is not built (make build)" >&2; exit 1; }
command -v curl >/dev/null || { echo "blog.sh: curl is needed" >&2; exit 1; }
bash "$root/scripts/deps.sh" bench || echo "blog.sh: scripts/deps.sh bench failed; going on with what is installed" >&2

# Only one benchmark at a time on this machine (shared with plaintext.sh and study.sh).
exec 9>/tmp/kiln-bench.lock
flock -n 9 || { echo "blog.sh: another benchmark is running" >&2; exit 1; }

stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw_rel="bench/results/raw/blog-$stamp"
raw="$root/$raw_rel"
mkdir -p "$raw"
tmp=$(mktemp -d /tmp/kiln-blogbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT  # replaced by cleanup() below, which also stops the servers
clk_tck=$(getconf CLK_TCK)
nproc=$(nproc)
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
has_httperf=0; command -v httperf >/dev/null && has_httperf=1
has_ab=0; command -v ab >/dev/null && has_ab=1

want() { [[ ,$SCENARIOS, == *,$1,* ]]; }

declare -A pid_of port_of not_run version_of note_of

source "$root/bench/lib/procs.sh"  # stop_server, tree_stats, self_child_ticks, free_port
cleanup() {
  stop_all_servers
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

peer_dir() { echo "$root/bench/peers/blog-$1"; }

# ---- setup and versions ------------------------------------------------------------------
setup_server() {  # name: 0 if it can be started; else sets not_run[name]
  local name=$1 log="$raw/setup-$1.log"
  if [[ $name == kiln || $name == kiln-base ]]; then
    return 0  # whether bin/blog and bin/hello exist is checked per scenario
  fi
  local dir
  dir=$(peer_dir "$name")
  [[ -x $dir/run.sh ]] || { not_run[$name]="bench/peers/blog-$name/run.sh is missing"; return 1; }
  if [[ $SKIP_SETUP == 1 ]]; then return 0; fi
  echo "setup $name ..." >&2
  if ! bash "$dir/setup.sh" >"$log" 2>&1; then
    not_run[$name]="setup failed: $(grep -v '^[[:space:]]*$' "$log" | tail -1 | cut -c1-160)"
    return 1
  fi
}

version_line() {  # name: what exactly runs
  local d
  case $1 in
    kiln) echo "kiln $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?'), \`build/bin/blog\` and \`build/bin/hello\` ${KILN_ARGS:-(defaults: one worker process per core)}, system SQLite $(python3 -c 'import sqlite3; print(sqlite3.sqlite_version)')" ;;
    kiln-base) echo "kiln $(git -C "$BASE_BUILD" describe --always --dirty 2>/dev/null || echo '?') (before), \`$BASE_BUILD/bin/blog\` and \`bin/hello\`, the same arguments" ;;
    go) d=$(peer_dir go)
        echo "$(go version 2>/dev/null | cut -d' ' -f3) net/http, mattn/go-sqlite3 $(awk '/mattn\/go-sqlite3/ {print $NF; exit}' "$d/go.mod") on the system SQLite $(python3 -c 'import sqlite3; print(sqlite3.sqlite_version)') (cgo, -tags libsqlite3), one process, GOMAXPROCS=$nproc, pool of $((2 * nproc)) connections" ;;
    express) d=$(peer_dir express)
        echo "Express $(node -p "require('$d/node_modules/express/package.json').version" 2>/dev/null), better-sqlite3 $(node -p "require('$d/node_modules/better-sqlite3/package.json').version" 2>/dev/null) (bundled SQLite $(cd "$d" && node -e "console.log(new (require('better-sqlite3'))(':memory:').prepare('select sqlite_version()').pluck().get())" 2>/dev/null)), Node $(node --version), NODE_ENV=production, ${WORKERS:-$nproc} processes (cluster)" ;;
  esac
}

# ---- the database --------------------------------------------------------------------------
# make_db SIZE: $tmp/blog-SIZE.sqlite with SIZE posts, and $tmp/expected-SIZE.txt holding
# the ids the index's first page must list, newest first.
make_db() {
  local size=$1 db="$tmp/blog-$1.sqlite"
  rm -f "$db" "$db-wal" "$db-shm"
  if [[ -x $KILN_BLOG ]]; then  # let kiln's blog create its schema (its migrations)
    start_server kiln-migrate "$db" >/dev/null 2>&1 || true
    stop_server kiln-migrate
  fi
  python3 - "$db" "$size" >"$tmp/expected-$size.txt" <<'PY'
import sqlite3, sys
path, n = sys.argv[1], int(sys.argv[2])
con = sqlite3.connect(path)
con.execute("PRAGMA journal_mode=WAL")
con.execute("CREATE TABLE IF NOT EXISTS posts(id INTEGER PRIMARY KEY, title TEXT NOT NULL,"
            " body TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)")
con.execute("CREATE INDEX IF NOT EXISTS posts_by_created ON posts (created_at DESC, id DESC)")
words = ("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
         "incididunt ut labore et dolore magna aliqua").split()
base = 1262304000  # 2010-01-01, the year of TreeFrog's test; one post an hour from there
with con:
    con.execute("DELETE FROM posts")
    for i in range(1, n + 1):
        title = f"Post {i}: " + " ".join(words[(i + k) % len(words)] for k in range(4))
        if i == n:  # the newest post, on the first page: its title needs escaping
            title = f"Post {i}: fish & chips <b>\"quoted\"</b> 'single'"
        body = "\n\n".join(" ".join(words[(i * p + k) % len(words)] for k in range(60))
                           for p in range(1, 4))
        t = base + i * 3600
        con.execute("INSERT INTO posts(id, title, body, created_at, updated_at) VALUES(?, ?, ?, ?, ?)",
                    (i, title, body, t, t))
for (i,) in con.execute("SELECT id FROM posts ORDER BY created_at DESC, id DESC LIMIT 10"):
    print(i)
con.close()
PY
}

# ---- start and check ----------------------------------------------------------------------
# start_server KEY DB: KEY is kiln (build/bin/blog), kiln-base(-hello) (BASE_BUILD's), kiln-migrate (the same, only to
# migrate DB), kiln-hello (build/bin/hello), go or express; starts it in a new process
# group and waits until it answers 200.
start_server() {
  local key=$1 db=${2:-} port log="$raw/server-$1.log" pid path=/posts
  port=$(free_port)
  case $key in
    kiln | kiln-migrate)
      local dir=$root
      [[ -d $root/examples/blog ]] && dir=$root/examples/blog
      # shellcheck disable=SC2086
      (cd "$dir" && BLOG_DB=$db exec setsid "$KILN_BLOG" --port "$port" $KILN_ARGS) >>"$log" 2>&1 </dev/null &
      ;;
    kiln-base)
      local dir; dir=$(git -C "$BASE_BUILD" rev-parse --show-toplevel)/examples/blog
      # shellcheck disable=SC2086
      (cd "$dir" && BLOG_DB=$db exec setsid "$BASE_BUILD/bin/blog" --port "$port" $KILN_ARGS) >>"$log" 2>&1 </dev/null &
      ;;
    kiln-base-hello)
      path="/hello?name=John"
      # shellcheck disable=SC2086
      setsid "$BASE_BUILD/bin/hello" --port "$port" $KILN_ARGS >>"$log" 2>&1 </dev/null &
      ;;
    kiln-hello)
      path="/hello?name=John"
      # shellcheck disable=SC2086
      setsid "$KILN_HELLO" --port "$port" $KILN_ARGS >>"$log" 2>&1 </dev/null &
      ;;
    *) setsid bash "$(peer_dir "$key")/run.sh" "$port" "$db" >>"$log" 2>&1 </dev/null & ;;
  esac
  await_server "$key" $! "$port" "$path" "$log"
}

# check_index KEY SIZE: the first page lists exactly the expected posts, newest first,
# with the newest title escaped. Prints "ok BYTES" or "FAIL reason BYTES".
check_index() {
  local key=$1 size=$2 page="$raw/page-$1-$2.html"
  curl -s --max-time 5 -o "$page" "http://127.0.0.1:${port_of[$key]}/posts" || true
  python3 - "$page" "$tmp/expected-$size.txt" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8", errors="replace").read()
want = [int(l) for l in open(sys.argv[2]) if l.strip()]
got = [int(i) for i in re.findall(r'href="/posts/(\d+)"', page)]
size = len(page.encode())
if got != want:
    print(f"FAIL lists posts {got[:12]} instead of {want} {size}")
elif want and ("fish &amp; chips &lt;b&gt;" not in page or "<b>" in page):
    print(f"FAIL the newest title is not escaped {size}")
else:
    print(f"ok {size}")
PY
}

# check_hello KEY: <h1>hello John</h1>, and a name of <script>"&' comes back escaped.
# Prints "ok BYTES" or "FAIL reason BYTES".
check_hello() {
  local key=$1 base="http://127.0.0.1:${port_of[$1]}/hello" page="$raw/page-${1%-hello}-hello.html" a b n
  curl -s --max-time 5 -o "$page" "$base?name=John" || true
  n=$(wc -c <"$page" 2>/dev/null || echo 0)
  a=$(cat "$page" 2>/dev/null || true)
  b=$(curl -s --max-time 5 "$base?name=%3Cscript%3E%22%26%27" || true)
  if [[ $a != *"<h1>hello John</h1>"* ]]; then echo "FAIL /hello?name=John answered: ${a:0:80} $n"
  elif [[ $b == *"<script>"* || $b != *"&lt;script&gt;"* || $b != *"&amp;"* ]]; then echo "FAIL the name is not escaped: ${b:0:80} $n"
  else echo "ok $n"; fi
}

# ---- one client run ------------------------------------------------------------------------
# run_client KEY TOOL SECONDS|COUNT OUT: writes OUT (the client's output) and prints
# "rps ok failed server_cpu_ms_per_1k client_cpu_ms_per_1k".
run_client() {
  local key=$1 tool=$2 amount=$3 out=$4 pid=${pid_of[$1]} port=${port_of[$1]} cmd=()
  case $tool in
    kbench) cmd=(timeout $((amount + 60)) "$KILN_CLIENT" bench -c 0 -b "$CONNS" -r 1000000000 -d "$amount" --json
                 "http://127.0.0.1:$port/posts") ;;
    httperf) cmd=(timeout 600 httperf --server=127.0.0.1 --port="$port" --uri=/posts
                  --num-conns="$amount" --num-calls=1) ;;
    ab) cmd=(timeout 600 ab -n "$amount" -c "$AB_CONC" "http://127.0.0.1:$port/hello?name=John") ;;
    ab-time) cmd=(timeout $((amount + 60)) ab -q -t "$amount" -n 100000000 -c "$AB_CONC"
                  "http://127.0.0.1:$port/hello?name=John") ;;
  esac
  local srv_before srv_after cli_before cli_after
  tree_stats "$pid"; srv_before=$TREE_TICKS
  self_child_ticks; cli_before=$CHILD_TICKS
  (exec "${cmd[@]}") >"$out" 2>"$out.err" || true
  self_child_ticks; cli_after=$CHILD_TICKS
  tree_stats "$pid"; srv_after=$TREE_TICKS
  python3 - "$tool" "$out" $((srv_after - srv_before)) $((cli_after - cli_before)) "$clk_tck" "$amount" <<'PY'
import json, re, sys
tool, path, srv, cli, hz, amount = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
text = open(path, errors="replace").read()
def grab(pattern, default=None):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else default
rps, ok, failed = float("nan"), 0, 0
try:
    if tool == "kbench":
        j = json.loads(text.strip().splitlines()[-1])
        rps, ok, failed = j["requests_per_second"], j["ok"], j["failed"]
    elif tool == "httperf":
        rps = grab(r"Request rate: ([\d.]+) req/s")
        ok = int(grab(r"Reply status: 1xx=\d+ 2xx=(\d+)", 0))
        failed = amount - ok
    else:  # ab, ab-time
        rps = grab(r"Requests per second:\s+([\d.]+)")
        done = int(grab(r"Complete requests:\s+(\d+)", 0))
        bad = int(grab(r"Failed requests:\s+(\d+)", 0)) + int(grab(r"Non-2xx responses:\s+(\d+)", 0))
        ok, failed = done - bad, bad + (amount - done if tool == "ab" else 0)
    if rps is None:
        rps = float("nan")
except Exception:
    pass
per1k = lambda t: "%.4f" % (t * 1000.0 / hz / (ok / 1000.0)) if ok else "NaN"
print("%.1f %d %d %s %s" % (rps, ok, failed, per1k(srv), per1k(cli)))
PY
}

results="$raw/results.tsv"  # scenario tool server round rps ok failed srv_ms cli_ms
meta="$raw/servers.tsv"     # scenario server status(ran|not_run) check page_bytes note
: >"$results"
: >"$meta"

# measure SCENARIO TOOLS KEY...: warm-up, then ROUNDS alternating rounds over the running
# servers (KEY=name or kiln-hello), every tool in TOOLS per server and round.
measure() {
  local scen=$1 tools=$2; shift 2
  local keys=("$@") key tool n i round order line
  ((${#keys[@]} > 0)) || return 0
  if ((WARMUP > 0)); then
    for key in "${keys[@]}"; do
      if [[ $scen == klone ]]; then run_client "$key" ab-time "$WARMUP" "$raw/warmup-$scen-$key.txt" >/dev/null
      else run_client "$key" kbench "$WARMUP" "$raw/warmup-$scen-$key.json" >/dev/null; fi
    done
  fi
  for round in $(seq "$ROUNDS"); do
    n=${#keys[@]} order=()
    for ((i = 0; i < n; i++)); do order+=("${keys[$(((i + round - 1) % n))]}"); done
    for key in "${order[@]}"; do
      for tool in $tools; do
        [[ -n ${pid_of[$key]:-} ]] || continue
        case $tool in
          kbench) line=$(run_client "$key" kbench "$DURATION" "$raw/$scen-$key-kbench-r$round.json") ;;
          httperf) line=$(run_client "$key" httperf "$HTTPERF_CONNS" "$raw/$scen-$key-httperf-r$round.txt") ;;
          ab) line=$(run_client "$key" ab "$AB_REQUESTS" "$raw/$scen-$key-ab-r$round.txt") ;;
        esac
        read -r rps ok failed srv cli <<<"$line"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$scen" "$tool" "${key%-hello}" "$round" "$rps" "$ok" \
          "$failed" "$srv" "$cli" >>"$results"
        echo "round $round $scen $tool ${key%-hello}: $rps req/s, $ok ok, $failed failed, server $srv / client $cli CPU ms per 1k" >&2
        if ! kill -0 "${pid_of[$key]}" 2>/dev/null; then
          note_of[$scen-${key%-hello}]="the server exited during round $round: $(tail -1 "$raw/server-$key.log" | cut -c1-120)"
          echo "${key%-hello}: ${note_of[$scen-${key%-hello}]}" >&2
          stop_server "$key"
        fi
      done
    done
  done
}

# ---- go ------------------------------------------------------------------------------------
echo "kiln blog benchmark: $(date -u '+%F %T UTC'), $nproc CPUs ($cpu_model), raw output in $raw_rel" >&2
declare -A setup_failed
for s in "${servers[@]}"; do
  if setup_server "$s"; then version_of[$s]=$(version_line "$s")
  else setup_failed[$s]=${not_run[$s]}; echo "$s: not run: ${not_run[$s]}" >&2; fi
done

if want treefrog; then
  tools=kbench; ((has_httperf)) && tools+=" httperf"
  for size in $SIZES; do
    scen="treefrog-$size"
    make_db "$size"
    running=()
    for s in "${servers[@]}"; do
      if [[ -n ${setup_failed[$s]:-} ]]; then
        printf '%s\t%s\tnot_run\t%s\t\t\n' "$scen" "$s" "${setup_failed[$s]}" >>"$meta"; continue
      fi
      if [[ $s == kiln && ! -x $KILN_BLOG ]]; then
        printf '%s\t%s\tnot_run\t%s\t\t\n' "$scen" "$s" "$KILN_BLOG is not built (make build)" >>"$meta"; continue
      fi
      if [[ $s == kiln-base && ! -x $BASE_BUILD/bin/blog ]]; then
        printf '%s\t%s\tnot_run\t%s\t\t\n' "$scen" "$s" "$BASE_BUILD/bin/blog is not built" >>"$meta"; continue
      fi
      echo "start $s ($size posts) ..." >&2
      if start_server "$s" "$tmp/blog-$size.sqlite"; then
        running+=("$s")
        read -r status rest <<<"$(check_index "$s" "$size")"
        bytes=${rest##* }; check="all checks passed"
        [[ $status == ok ]] || check="FAILED: ${rest% *}"
        printf '%s\t%s\tran\t%s\t%s\t\n' "$scen" "$s" "$check" "$bytes" >>"$meta"
        echo "$s on port ${port_of[$s]} (pid ${pid_of[$s]}): $check, page $bytes bytes" >&2
      else
        printf '%s\t%s\tnot_run\t%s\t\t\n' "$scen" "$s" "${not_run[$s]}" >>"$meta"
        echo "$s: not run: ${not_run[$s]}" >&2
      fi
    done
    measure "$scen" "$tools" "${running[@]}"
    for s in "${running[@]}"; do stop_server "$s"; done
  done
fi

if want klone; then
  scen=klone
  make_db 0  # the peers serve /hello next to their blog index
  running=()
  for s in "${servers[@]}"; do
    key=$s; [[ $s == kiln || $s == kiln-base ]] && key=$s-hello
    if ((!has_ab)); then printf '%s\t%s\tnot_run\t%s\t\t\n' "$scen" "$s" "ab (apache2-utils) is not installed" >>"$meta"; continue; fi
    if [[ -n ${setup_failed[$s]:-} ]]; then
      printf '%s\t%s\tnot_run\t%s\t\t\n' "$scen" "$s" "${setup_failed[$s]}" >>"$meta"; continue
    fi
    if [[ $s == kiln && ! -x $KILN_HELLO ]]; then
      printf '%s\t%s\tnot_run\t%s\t\t\n' "$scen" "$s" "$KILN_HELLO is not built (make build)" >>"$meta"; continue
    fi
    if [[ $s == kiln-base && ! -x $BASE_BUILD/bin/hello ]]; then
      printf '%s\t%s\tnot_run\t%s\t\t\n' "$scen" "$s" "$BASE_BUILD/bin/hello is not built" >>"$meta"; continue
    fi
    echo "start $s (hello) ..." >&2
    if start_server "$key" "$tmp/blog-0.sqlite"; then
      running+=("$key")
      read -r status rest <<<"$(check_hello "$key")"
      bytes=${rest##* }; check="all checks passed"
      [[ $status == ok ]] || check="FAILED: ${rest% *}"
      printf '%s\t%s\tran\t%s\t%s\t\n' "$scen" "$s" "$check" "$bytes" >>"$meta"
      echo "$s on port ${port_of[$key]} (pid ${pid_of[$key]}): $check" >&2
    else
      printf '%s\t%s\tnot_run\t%s\t\t\n' "$scen" "$s" "${not_run[$key]}" >>"$meta"
      echo "$s: not run: ${not_run[$key]}" >&2
    fi
  done
  measure klone ab "${running[@]}"
  for key in "${running[@]}"; do stop_server "$key"; done
fi

# ---- report ----------------------------------------------------------------------------------
notes="$raw/notes.tsv"
: >"$notes"
for k in "${!note_of[@]}"; do printf '%s\t%s\n' "$k" "${note_of[$k]}" >>"$notes"; done
versions="$raw/versions.tsv"
: >"$versions"
for s in "${servers[@]}"; do printf '%s\t%s\n' "$s" "${version_of[$s]:-not run: ${setup_failed[$s]:-}}" >>"$versions"; done
mkdir -p "$(dirname "$OUT")"
{
  echo "# TreeFrog's and Klone's tests: kiln, Go and Express"
  echo
  echo "The tests two of the seeds published, repeated on this machine with kiln and two peers"
  echo "serving the same pages (bench/blog.sh, bench/peers/blog-go, bench/peers/blog-express)."
  echo
  echo "- date: $(date -u '+%F %T UTC')"
  echo "- machine: $nproc CPUs, $cpu_model, $(uname -sr); servers and clients share it, all on 127.0.0.1"
  echo "- command: \`$command_line\`"
  echo "- each cell: median of $ROUNDS round(s) (servers alternate; each round starts with the next one), after a ${WARMUP}s warm-up per server"
  python3 - "$results" "$meta" "$notes" "$versions" "$CONNS" "$DURATION" "$HTTPERF_CONNS" "$AB_REQUESTS" "$AB_CONC" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
meta = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.strip()]
notes = dict(l.rstrip("\n").split("\t", 1) for l in open(sys.argv[3]) if l.strip())
versions = [l.rstrip("\n").split("\t", 1) for l in open(sys.argv[4]) if l.strip()]
conns, duration, hconns, abn, abc = sys.argv[5:10]
def num(v):
    try:
        f = float(v)
        return None if f != f else f
    except ValueError:
        return None
def med(scen, tool, srv, col):
    vals = [num(r[col]) for r in rows if r[0] == scen and r[1] == tool and r[2] == srv]
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None
def failed(scen, tool, srv):
    return sum(int(r[6]) for r in rows if r[0] == scen and r[1] == tool and r[2] == srv)
def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)
scens = []
for m in meta:
    if m[0] not in scens:
        scens.append(m[0])
tool_text = {
    "kbench": f"`kiln bench -c 0 -b {conns} -d {duration}` (a new connection per request, {conns} at a time)",
    "httperf": f"`httperf --num-conns={hconns} --num-calls=1` (one connection at a time)",
    "ab": f"`ab -n {abn} -c {abc}` (HTTP/1.0, a new connection per request)",
}
targets = []
before_after = []  # (scenario, tool, base req/s, kiln req/s, base CPU, kiln CPU)
for scen in scens:
    ms = [m for m in meta if m[0] == scen]
    if scen.startswith("treefrog-"):
        size = scen.split("-", 1)[1]
        print(f"\n## TreeFrog's test: the blog index, {size} posts, one request per connection\n")
        print("`GET /posts`: the newest 10 posts (title linking to the post, date) and the total for")
        print("the page links, read from SQLite on every request in one read transaction; every")
        print("server reads the same freshly made file.\n")
        published = ("| TreeFrog 0.54, published (seeds/000) | httperf --num-conns=10000 --num-calls=1, "
                     "0 records, thread MPM (MaxServers=20); MacBook Pro, 2.4 GHz Core 2 Duo, 4 GB, "
                     "Mac OS X 10.6, 2010 | 562 | | 1,686 (httperf's CPU time line: 3.13 s user + 13.73 s system over 10,000) "
                     "| 0 | 734 (313 header + 421 content) | |")
    else:
        print("\n## Klone's test: hello NAME\n")
        print("`GET /hello?name=John` answers `<h1>hello John</h1>` with the name HTML-escaped.\n")
        published = ("| Klone 2.2.0prv4, published (seeds/002, John Fremlin, 2009-06-24) | "
                     "ab -n 100000 -c10 /?name=John; kloned prefork, max_requests_per_child raised; "
                     "server and ab pinned to different CPUs (schedtool); hardware not stated | "
                     "9,078 | | | 0 | 23 (content) | |")
    print("| server | client | req/s | server CPU ms/1k req | client CPU ms/1k req | failed | page bytes | vs faster peer (req/s, server CPU) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    tools = [t for t in ("kbench", "httperf", "ab") if any(r[0] == scen and r[1] == t for r in rows)]
    for tool in tools:
        peers = [m[1] for m in ms if m[1] not in ("kiln", "kiln-base") and m[2] == "ran" and med(scen, tool, m[1], 4)]
        best = max(peers, key=lambda p: med(scen, tool, p, 4)) if peers else None
        for m in ms:
            name = m[1]
            if m[2] != "ran":
                continue
            rps, cpu = med(scen, tool, name, 4), med(scen, tool, name, 7)
            rel = ""
            if best and name != best and rps:
                brps, bcpu = med(scen, tool, best, 4), med(scen, tool, best, 7)
                rel = f"{rps / brps:.2f}x, {fmt(cpu / bcpu if cpu is not None and bcpu else None, '.2f')}x ({best})"
            elif name == best:
                rel = "(the faster peer)"
            print(f"| {name} | {tool} | {fmt(rps, ',.0f')} | {fmt(cpu, '.3f')} | "
                  f"{fmt(med(scen, tool, name, 8), '.3f')} | {failed(scen, tool, name)} | {m[4]} | {rel} |")
            if name == "kiln" and best and rps:
                brps, bcpu = med(scen, tool, best, 4), med(scen, tool, best, 7)
                cr = cpu / bcpu if cpu is not None and bcpu else None
                targets.append((scen, tool, best, rps / brps, cr))
            if name == "kiln" and rps and med(scen, tool, "kiln-base", 4):
                arps, acpu = med(scen, tool, "kiln-base", 4), med(scen, tool, "kiln-base", 7)
                before_after.append((scen, tool, arps, rps, acpu, cpu))
    print(published)
    print()
    for m in ms:
        if m[2] == "not_run":
            print(f"- {m[1]}: not run: {m[3]}")
        else:
            print(f"- {m[1]}: curl checks: {m[3]}" + (f"; {notes[scen + '-' + m[1]]}" if scen + "-" + m[1] in notes else ""))
    print()
    for tool in tools:
        print(f"- {tool}: {tool_text[tool]}")
print("\n## Targets (issue 5): kiln >= 1.3x the faster peer's req/s, <= 0.5x its server CPU per 1,000 requests\n")
if not targets:
    print("No scenario had kiln and a peer both measured.")
else:
    print("| scenario | client | faster peer | kiln req/s ratio | kiln server CPU ratio | met |")
    print("| --- | --- | --- | --- | --- | --- |")
    for scen, tool, best, rr, cr in targets:
        ok = rr >= 1.3 and cr is not None and cr <= 0.5
        print(f"| {scen} | {tool} | {best} | {rr:.2f}x (>= 1.3) | {fmt(cr, '.2f')}x (<= 0.5) | {'yes' if ok else 'no'} |")
if before_after:
    print("\n## Before and after: kiln-base (before) and kiln (after), same rounds\n")
    print("| scenario | client | before req/s | after req/s | after/before | before CPU ms/1k | after CPU ms/1k | after/before |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for scen, tool, arps, brps, acpu, bcpu in before_after:
        cr = bcpu / acpu if acpu and bcpu is not None else None
        print(f"| {scen} | {tool} | {arps:,.0f} | {brps:,.0f} | {brps / arps:.2f} | {fmt(acpu, '.3f')} | {fmt(bcpu, '.3f')} | {fmt(cr, '.2f')} |")
print("\n## What runs\n")
for name, text in versions:
    print(f"- {name}: {text}")
PY
  echo
  echo "Columns: req/s is the client's own figure (kiln bench: successful requests over its"
  echo "elapsed time; httperf: Request rate; ab: Requests per second). Server CPU is"
  echo "utime+stime of the server's whole process tree (/proc, clock ticks) during the run per"
  echo "1,000 successful requests; client CPU likewise for the load client. Failed counts are"
  echo "summed over the rounds. Page bytes are the body of one response (curl). The published"
  echo "rows are the seeds' figures on 2009/2010 hardware, for orientation, not a ratio."
  echo
  echo "Raw client outputs, pages and server logs: $raw_rel/ (not committed)."
} | tee "$OUT"
