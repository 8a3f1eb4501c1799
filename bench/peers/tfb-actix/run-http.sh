#!/usr/bin/env bash
# Serves the bare actix-http variant of the TechEmpower actix peer (TFB's "Platform"
# entry) on 127.0.0.1:PORT in the foreground: the same as run.sh PORT http.
set -euo pipefail
port=${1:?usage: run-http.sh PORT   (env DATABASE_URL)}
exec "$(cd "$(dirname "$0")" && pwd)/run.sh" "$port" http
