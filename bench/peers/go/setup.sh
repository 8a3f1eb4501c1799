#!/usr/bin/env bash
# Builds the Go peer into bench/peers/go/bin/server (standard library only: no go.sum).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v go >/dev/null || { echo "go peer: 'go' not found on PATH" >&2; exit 1; }
cd "$here"
if [[ -x bin/server && -z $(find go.mod main.go -newer bin/server -print -quit) ]]; then exit 0; fi
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
flock /tmp/kiln-build.lock go build -trimpath -o bin/server . ||
  { echo "go peer: go build failed" >&2; exit 1; }
