#!/usr/bin/env bash
# Serves the Go peer on 127.0.0.1:PORT in the foreground (GOMAXPROCS: all cores).
set -euo pipefail
port=${1:?usage: run.sh PORT}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
exec "$here/bin/server" -port "$port" -public "$root/examples/generic/public" \
  -lorem "$root/examples/generic/lorem.html"
