#!/usr/bin/env bash
# Builds the TechEmpower Go peer into bench/peers/tfb-go/bin/server: net/http and
# github.com/jackc/pgx/v5 (the version pinned in go.mod, checked against go.sum; needs
# Go >= 1.25, GOTOOLCHAIN=local so no other toolchain is fetched). The module cache
# lives in bench/peers/tfb-go/.gomodcache (git-ignored).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v go >/dev/null || { echo "tfb-go peer: 'go' not found on PATH" >&2; exit 1; }
cd "$here"
if [[ -x bin/server && -z $(find go.mod go.sum main.go -newer bin/server -print -quit) ]]; then exit 0; fi
export GOTOOLCHAIN=local GOFLAGS="-buildvcs=false -mod=readonly -modcacherw"
export GOMODCACHE="$here/.gomodcache"
timeout 600 flock /tmp/kiln-build.lock go build -trimpath -o bin/server . ||
  { echo "tfb-go peer: go build failed (module proxy unreachable, or Go older than go.mod's 1.25?)" >&2; exit 1; }
