#!/usr/bin/env bash
# Serves the TechEmpower Go peer on 127.0.0.1:PORT in the foreground (GOMAXPROCS: all
# cores), on the PostgreSQL database at DATABASE_URL (prepared with
# examples/techempower/db/migrations/001_world_and_fortune.sql).
set -euo pipefail
port=${1:?usage: run.sh PORT   (env DATABASE_URL)}
[[ -n ${DATABASE_URL:-} ]] || { echo "tfb-go peer: DATABASE_URL is not set" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/bin/server" -port "$port"
