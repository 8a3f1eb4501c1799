#!/usr/bin/env bash
# Serves the blog benchmark's Express peer on 127.0.0.1:PORT in the foreground, reading
# the posts from DB: NODE_ENV=production, WORKERS processes through node's cluster
# (default: one per core).
set -euo pipefail
port=${1:?usage: run.sh PORT DB}
db=${2:?usage: run.sh PORT DB}
here=$(cd "$(dirname "$0")" && pwd)
export NODE_ENV=production
exec node "$here/server.js" "$port" "$db" "${WORKERS:-$(nproc)}"
