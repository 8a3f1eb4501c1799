#!/usr/bin/env bash
# Serves the TechEmpower actix peer on 127.0.0.1:PORT in the foreground, one worker
# thread (and one PostgreSQL connection) per core, on the database at DATABASE_URL
# (prepared with examples/techempower/db/migrations/001_world_and_fortune.sql).
#   run.sh PORT          the actix-web variant (TFB's "Realistic" actix entry)
#   run.sh PORT http     the bare actix-http variant (TFB's "Platform" entry);
#                        run-http.sh PORT does the same
set -euo pipefail
port=${1:?usage: run.sh PORT [web|http]   (env DATABASE_URL)}
mode=${2:-web}
[[ $mode == web || $mode == http ]] || { echo "tfb-actix peer: variant must be web or http, not '$mode'" >&2; exit 2; }
[[ -n ${DATABASE_URL:-} ]] || { echo "tfb-actix peer: DATABASE_URL is not set" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/target/release/tfb-actix" "$port" "$mode"
