#!/usr/bin/env bash
# Serves the Express peer on 127.0.0.1:PORT in the foreground: one Node process,
# NODE_ENV=production (see bench/README.md for why not a cluster).
set -euo pipefail
port=${1:?usage: run.sh PORT}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
export NODE_ENV=production
exec node "$here/server.js" "$port" "$root/examples/generic/public" "$root/examples/generic/lorem.html"
