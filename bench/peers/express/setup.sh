#!/usr/bin/env bash
# Installs the Express peer's packages (exact versions of package-lock.json) into
# bench/peers/express/node_modules, with npm's cache in bench/peers/express/.npm-cache.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null && command -v npm >/dev/null ||
  { echo "express peer: node and npm are needed on PATH" >&2; exit 1; }
cd "$here"
if [[ -d node_modules/express && node_modules/.package-lock.json -nt package-lock.json ]]; then
  exit 0  # installed, and the lock file has not changed since
fi
flock /tmp/kiln-build.lock npm ci --omit=dev --no-audit --no-fund --loglevel=error \
  --cache "$here/.npm-cache" >/dev/null ||
  { echo "express peer: npm ci failed (registry unreachable?)" >&2; exit 1; }
