#!/usr/bin/env bash
# Installs the blog benchmark's Express peer (exact versions of package-lock.json) into
# bench/peers/blog-express/node_modules, npm's cache in .npm-cache (both git-ignored).
# better-sqlite3 downloads a prebuilt addon or, failing that, compiles itself and its
# bundled SQLite with node-gyp (g++, make, python3, node's headers): about 2 minutes
# on 2 cores, under the build lock.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null && command -v npm >/dev/null ||
  { echo "blog-express peer: node and npm are needed on PATH" >&2; exit 1; }
cd "$here"
if [[ -f node_modules/better-sqlite3/build/Release/better_sqlite3.node &&
      -d node_modules/express && node_modules/.package-lock.json -nt package-lock.json ]]; then
  exit 0  # installed, and the lock file has not changed since
fi
flock /tmp/kiln-build.lock npm ci --omit=dev --no-audit --no-fund --loglevel=error \
  --cache "$here/.npm-cache" >/dev/null ||
  { echo "blog-express peer: npm ci failed (registry unreachable, or no compiler for better-sqlite3?)" >&2; exit 1; }
