#!/usr/bin/env bash
# Serves the actix-web peer on 127.0.0.1:PORT in the foreground: one worker per core.
set -euo pipefail
port=${1:?usage: run.sh PORT}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
exec "$here/target/release/generic-actix" "$port" "$root/examples/generic/public" \
  "$root/examples/generic/lorem.html"
