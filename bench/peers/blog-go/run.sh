#!/usr/bin/env bash
# Serves the blog benchmark's Go peer on 127.0.0.1:PORT in the foreground, reading the
# posts from DB (GOMAXPROCS: all cores).
set -euo pipefail
port=${1:?usage: run.sh PORT DB}
db=${2:?usage: run.sh PORT DB}
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/bin/server" -port "$port" -db "$db"
