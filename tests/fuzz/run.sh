#!/usr/bin/env bash
# Runs every kiln fuzz target for a fixed time on a scratch copy of its seed corpus.
#   tests/fuzz/run.sh BUILD_DIR SECONDS       e.g. tests/fuzz/run.sh build-fuzz 20
# FUZZ_JOBS (2) targets run at once. Prints one line per target (executions, corpus
# growth), in a fixed order, and ends with "N passed, M failed"; exits non-zero if any
# target crashed or is missing. Then fuzz_template's oracle runs its own test
# (template_oracle_selftest: it passes kilnc's escaping and catches wrong escapers).
# The committed corpus is never written to; crash inputs are kept in
# BUILD_DIR/fuzz/crashes/ so they survive the scratch directory.
set -uo pipefail

build=${1:?usage: run.sh BUILD_DIR SECONDS}
seconds=${2:?usage: run.sh BUILD_DIR SECONDS}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/targets.sh"
targets=("${fuzz_targets[@]}")

work=$(mktemp -d /tmp/kiln-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT

jobs=${FUZZ_JOBS:-2}

# One target: its line goes to $work/$t/result, its verdict to $work/$t/ok or nowhere.
fuzz_one() {
  local t=$1 bin="$build/fuzz/$1"
  local out="$work/$t/result"
  mkdir -p "$work/$t/corpus" "$work/$t/artifacts"
  if [[ ! -x "$bin" ]]; then
    echo "$t: FAILED (no binary at $bin; run 'make fuzz-build')" >"$out"
    return
  fi
  cp "$here/corpus/$t/"* "$work/$t/corpus/" 2>/dev/null
  local seeds log="$work/$t/log"
  seeds=$(ls "$work/$t/corpus" | wc -l)
  local dict
  dict=$(dict_for "$t")
  # Outer timeout: libFuzzer's own -max_total_time is checked between runs, so a hang
  # inside one input is caught by -timeout and anything worse by timeout(1).
  timeout --kill-after=10 $((seconds + 60)) "$bin" \
    -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    -dict="$dict" -artifact_prefix="$work/$t/artifacts/" \
    -print_final_stats=1 "$work/$t/corpus" >"$log" 2>&1
  local rc=$?
  local execs units
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [[ -z "$execs" ]] && execs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
  units=$(ls "$work/$t/corpus" | wc -l)
  if [[ $rc -eq 0 ]]; then
    echo "$t: ok, ${execs:-?} execs in ${seconds}s, corpus $seeds -> $units" >"$out"
    touch "$work/$t/ok"
  else
    local keep="$build/fuzz/crashes/$t"
    mkdir -p "$keep"
    cp "$work/$t/artifacts/"* "$keep/" 2>/dev/null
    cp "$log" "$keep/last.log"
    { echo "$t: FAILED (exit $rc) after ${execs:-?} execs; inputs and log in $keep/"
      grep -E 'invariant failed|ERROR: |SUMMARY: |runtime error' "$log" | head -5 | sed 's/^/    /'; } >"$out"
  fi
}

running=0
for t in "${targets[@]}"; do
  if (( running >= jobs )); then
    wait -n
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

passed=0 failed=0
for t in "${targets[@]}"; do
  cat "$work/$t/result"
  if [[ -e "$work/$t/ok" ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
# fuzz_template's oracle must be able to fail (tests/fuzz/template_oracle/selftest.cpp).
if "$build/fuzz/template_oracle_selftest" >"$work/selftest.log" 2>&1; then
  echo "template_oracle_selftest: ok"; passed=$((passed + 1))
else
  echo "template_oracle_selftest: FAILED"; sed 's/^/    /' "$work/selftest.log" | head -20; failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
