#!/usr/bin/env bash
# Serves the Flask peer on 127.0.0.1:PORT in the foreground: Waitress, one process,
# 4 threads, Flask's debug mode off (FLASK_DEBUG and FLASK_ENV unset).
set -euo pipefail
port=${1:?usage: run.sh PORT}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
unset FLASK_DEBUG FLASK_ENV
exec "$here/.venv/bin/python" "$here/app.py" "$port" "$root/examples/generic/public" \
  "$root/examples/generic/lorem.html"
