#!/usr/bin/env bash
# Serves Cerflet's hello page on Go's net/http at 127.0.0.1:PORT in the foreground.
set -euo pipefail
port=${1:?usage: run.sh PORT}
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/bin/server" -port "$port"
