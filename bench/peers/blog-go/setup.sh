#!/usr/bin/env bash
# Builds the blog benchmark's Go peer into bench/peers/blog-go/bin/server: net/http and
# mattn/go-sqlite3 (the version pinned in go.mod, checked against go.sum) linked with
# cgo against the system's libsqlite3 (libsqlite3-dev; build tag libsqlite3). The module
# cache lives in bench/peers/blog-go/.gomodcache (git-ignored).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v go >/dev/null || { echo "blog-go peer: 'go' not found on PATH" >&2; exit 1; }
command -v gcc >/dev/null || { echo "blog-go peer: gcc is needed (cgo)" >&2; exit 1; }
cd "$here"
if [[ -x bin/server && -z $(find go.mod go.sum main.go -newer bin/server -print -quit) ]]; then exit 0; fi
export GOTOOLCHAIN=local GOFLAGS="-buildvcs=false -mod=readonly -modcacherw" CGO_ENABLED=1
export GOMODCACHE="$here/.gomodcache"
flock /tmp/kiln-build.lock go build -trimpath -tags libsqlite3 -o bin/server . ||
  { echo "blog-go peer: go build failed (module proxy unreachable, or libsqlite3-dev missing?)" >&2; exit 1; }
