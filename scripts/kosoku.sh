#!/usr/bin/env bash
# Prints the path of kosoku (PyPI: the Autobahn|Testsuite cases, Python 3, run by a
# Rust core; the original autobahntestsuite is Python 2 only), installing it first
# into a venv of its own if this machine has none. The version is pinned.
#   scripts/kosoku.sh        -> /root/.cache/kiln/kosoku-0.1.0/bin/kosoku
set -euo pipefail

version=0.1.0
dir=${KILN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln}/kosoku-$version
bin=$dir/bin/kosoku
if [[ ! -x $bin ]]; then
  # Debian's python3 with its venv module (python3-venv, from scripts/deps.sh).
  if ! /usr/bin/python3 -m venv "$dir" >/dev/null 2>&1; then
    echo "kosoku.sh: cannot make a venv in $dir (install python3-venv: scripts/deps.sh)" >&2
    exit 1
  fi
  if ! "$dir/bin/pip" install --disable-pip-version-check -q "kosoku==$version" >"$dir/install.log" 2>&1; then
    echo "kosoku.sh: 'pip install kosoku==$version' failed:" >&2
    tail -20 "$dir/install.log" >&2
    rm -rf "$dir"
    exit 1
  fi
fi
echo "$bin"
