#!/usr/bin/env bash
# Creates bench/peers/flask/.venv and installs requirements.txt (every package pinned).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
command -v "$py" >/dev/null || { echo "flask peer: $py not found" >&2; exit 1; }
cd "$here"
stamp=.venv/.installed
if [[ -f $stamp && $stamp -nt requirements.txt ]]; then exit 0; fi
rm -rf .venv
"$py" -m venv .venv || { echo "flask peer: python3 -m venv failed" >&2; exit 1; }
flock /tmp/kiln-build.lock .venv/bin/pip install --quiet --no-input --disable-pip-version-check \
  --require-virtualenv -r requirements.txt ||
  { echo "flask peer: pip install failed (PyPI unreachable?)" >&2; exit 1; }
touch "$stamp"
