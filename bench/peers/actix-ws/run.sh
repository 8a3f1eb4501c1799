#!/usr/bin/env bash
# Serves the actix-ws echo peer on 127.0.0.1:PORT in the foreground: WORKERS workers
# (default one per core); the echo endpoint is GET /ws, GET /plaintext answers "Hello, World!".
set -euo pipefail
port=${1:?usage: run.sh PORT [WORKERS]}
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/target/release/actix-ws-echo" "$port" ${2:+"$2"}
