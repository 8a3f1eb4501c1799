#!/usr/bin/env bash
# Line coverage of the fuzz targets (clang source-based coverage, llvm-cov), per target,
# over the sources that target is about. Two steps, one fuzzer running at a time:
#   tests/fuzz/coverage.sh grow FUZZ_BUILD SECONDS CORPUS_DIR [TARGET...]
#     fuzzes each target for SECONDS into CORPUS_DIR/<target>/ (seeded from the
#     committed corpus, kept between calls); prints executions and corpus growth.
#   tests/fuzz/coverage.sh report COV_BUILD CORPUS_DIR [TARGET...]
#     configures COV_BUILD once (the fuzz configuration plus -fprofile-instr-generate
#     -fcoverage-mapping), builds the targets, replays CORPUS_DIR/<target>/ (or the
#     committed corpus) and prints a table; uncovered lines go to COV_BUILD/coverage/.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

# What each target is about: the sources its coverage is measured on.
declare -A sources=(
  [fuzz_parser]="src/http/parser.cpp"
  [fuzz_chunked]="src/http/chunked.cpp"
  [fuzz_url]="src/http/url.cpp"
  [fuzz_multipart]="src/http/multipart.cpp"
  [fuzz_form]="src/http/form.cpp"
  [fuzz_cookie]="src/http/cookie.cpp"
  [fuzz_template]="$(cd "$top" && ls tools/kilnc/*.cpp | grep -v /main.cpp | tr '\n' ' ')"
  [fuzz_escape]="src/view/escape.cpp src/view/url.cpp"
  [fuzz_router]="src/app/router.cpp"
  [fuzz_session_record]="src/app/session.cpp"
  [fuzz_log_escape]="src/server/log_escape.cpp src/util/utf8.cpp"
  [fuzz_static_path]="src/app/static_path.cpp src/net/file_root.cpp"
  [fuzz_config]="src/server/config.cpp"
  [fuzz_form_values]="src/app/form_values.cpp src/util/utf8.cpp"
  [fuzz_pg_values]="src/pg/values.cpp"
  [fuzz_json_writer]="src/app/json_writer.cpp src/util/utf8.cpp"
  [fuzz_proxy_protocol]="src/http/proxy_protocol.cpp"
  [fuzz_forwarded]="src/http/forwarded.cpp"
  [fuzz_ws_frame]="src/http/ws_frame.cpp"
  [fuzz_ws_deflate]="src/http/ws_deflate.cpp"
  [fuzz_ws]="src/http/ws_session.cpp"
  [fuzz_h2]="src/http/h2_session.cpp"
)
source "$here/targets.sh"
all=("${fuzz_targets[@]}")


tool() {  # llvm-cov and llvm-profdata, unversioned or from Debian's llvm-14
  command -v "$1" 2>/dev/null || ls /usr/lib/llvm-*/bin/"$1" 2>/dev/null | tail -1
}

grow() {
  local build=$1 seconds=$2 out=$3; shift 3
  local targets=("$@"); [[ ${#targets[@]} -eq 0 ]] && targets=("${all[@]}")
  mkdir -p "$out"
  for t in "${targets[@]}"; do
    local bin="$build/fuzz/$t"
    [[ -x $bin ]] || { echo "$t: no binary at $bin"; continue; }
    mkdir -p "$out/$t" "$out/$t.artifacts"
    cp -n "$here/corpus/$t/"* "$out/$t/" 2>/dev/null
    local before; before=$(ls "$out/$t" | wc -l)
    timeout --kill-after=10 $((seconds + 60)) "$bin" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
      -rss_limit_mb=2048 -dict="$(dict_for "$t")" -artifact_prefix="$out/$t.artifacts/" \
      -print_final_stats=1 "$out/$t" >"$out/$t.log" 2>&1
    local rc=$? execs
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -1)
    echo "$t: exit $rc, ${execs:-?} execs in ${seconds}s, corpus $before -> $(ls "$out/$t" | wc -l)"
    [[ $rc -eq 0 ]] || grep -E 'invariant failed|ERROR: |SUMMARY: |runtime error' "$out/$t.log" | head -5 | sed 's/^/    /'
  done
}

report() {
  local build=$1 corpus=$2; shift 2
  local targets=("$@"); [[ ${#targets[@]} -eq 0 ]] && targets=("${all[@]}")
  local profdata cov; profdata=$(tool llvm-profdata); cov=$(tool llvm-cov)
  [[ -n $profdata && -n $cov ]] || { echo "llvm-profdata/llvm-cov not found (apt-get install llvm)"; exit 2; }
  if [[ ! -f $build/build.ninja ]]; then
    CXX=clang++ cmake -S "$top" -B "$build" -G Ninja -DKILN_FUZZ=ON -DKILN_TESTS=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="-fprofile-instr-generate -fcoverage-mapping" \
      -DCMAKE_EXE_LINKER_FLAGS="-fprofile-instr-generate" >/dev/null || exit 2
  fi
  flock /tmp/kiln-build.lock ninja -C "$build" -j2 "${targets[@]}" >/dev/null || exit 2
  local out="$build/coverage"
  mkdir -p "$out"
  printf '%-20s %7s %7s %7s\n' target lines missed cover
  for t in "${targets[@]}"; do
    local dir="$corpus/$t"; [[ -d $dir ]] || dir="$here/corpus/$t"
    rm -f "$out/$t".prof*
    # -runs=0: run every corpus input once, mutate nothing.
    LLVM_PROFILE_FILE="$out/$t.profraw" timeout 600 "$build/fuzz/$t" -runs=0 -max_len=16384 -rss_limit_mb=2048 \
      "$dir" >"$out/$t.replay.log" 2>&1 || { echo "$t: replay failed (see $out/$t.replay.log)"; continue; }
    "$profdata" merge -sparse "$out/$t.profraw" -o "$out/$t.profdata"
    local files=() f; for f in ${sources[$t]}; do files+=("$top/$f"); done
    "$cov" report "$build/fuzz/$t" -instr-profile="$out/$t.profdata" "${files[@]}" >"$out/$t.report"
    # Uncovered lines with their text, file by file (instantiations folded).
    "$cov" show "$build/fuzz/$t" -instr-profile="$out/$t.profdata" -show-instantiations=false "${files[@]}" |
      awk -F'|' '/^\/.*:$/ { print; next } $2 ~ /^ *0$/ { print }' >"$out/$t.uncovered"
    # TOTAL row (or the single file's row): lines, missed lines, line cover.
    awk -v t="$t" 'NF >= 13 && $1 !~ /^(Filename|-)/ { row = $0 } END {
      n = split(row, c, " "); printf "%-20s %7s %7s %7s\n", t, c[n-5], c[n-4], c[n-3] }' "$out/$t.report"
  done
  echo "per-file tables: $out/<target>.report; uncovered lines: $out/<target>.uncovered"
}

case ${1:-} in
  grow) shift; [[ $# -ge 3 ]] || { echo "usage: $0 grow FUZZ_BUILD SECONDS CORPUS_DIR [TARGET...]"; exit 2; }; grow "$@" ;;
  report) shift; [[ $# -ge 2 ]] || { echo "usage: $0 report COV_BUILD CORPUS_DIR [TARGET...]"; exit 2; }; report "$@" ;;
  *) sed -n '2,10p' "$0"; exit 2 ;;
esac
