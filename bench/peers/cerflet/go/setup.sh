#!/usr/bin/env bash
# Builds bench/peers/cerflet/go/bin/server (standard library only: no go.sum).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v go >/dev/null || { echo "cerflet go peer: 'go' not found on PATH" >&2; exit 1; }
cd "$here"
if [[ -x bin/server && -z $(find go.mod main.go -newer bin/server -print -quit) ]]; then exit 0; fi
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
timeout 600 flock /tmp/kiln-build.lock go build -trimpath -o bin/server . ||
  { echo "cerflet go peer: go build failed" >&2; exit 1; }
