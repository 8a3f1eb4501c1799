#!/usr/bin/env bash
# Builds the session study's independent Go load client into bench/clients/study-go/bin/study-go
# (standard library only: no go.sum). Idempotent: does nothing when the binary is newer
# than the sources.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v go >/dev/null || { echo "study-go: 'go' not found on PATH" >&2; exit 1; }
cd "$here"
if [[ -x bin/study-go && -z $(find go.mod ./*.go -newer bin/study-go -print -quit) ]]; then exit 0; fi
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
flock /tmp/kiln-build.lock go build -trimpath -o bin/study-go . ||
  { echo "study-go: go build failed" >&2; exit 1; }
