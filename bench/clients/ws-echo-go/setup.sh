#!/usr/bin/env bash
# Builds the WebSocket echo load client into bench/clients/ws-echo-go/bin/ws-echo:
# github.com/gorilla/websocket at the version pinned in go.mod, checked against go.sum
# (GOTOOLCHAIN=local: no other toolchain is fetched). The module cache lives in
# bench/clients/ws-echo-go/.gomodcache (git-ignored). Idempotent: does nothing when the
# binary is newer than the sources.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
go=$(command -v go || true)
[[ -n $go ]] || { [[ -x /usr/lib/go/bin/go ]] && go=/usr/lib/go/bin/go; }
[[ -n $go ]] || { echo "ws-echo-go: 'go' not found on PATH nor at /usr/lib/go/bin/go (Debian: apt-get install golang-go)" >&2; exit 1; }
cd "$here"
if [[ -x bin/ws-echo && -z $(find go.mod go.sum ./*.go -newer bin/ws-echo -print -quit) ]]; then exit 0; fi
export GOTOOLCHAIN=local GOFLAGS="-buildvcs=false -mod=readonly -modcacherw"
export GOMODCACHE="$here/.gomodcache"
timeout 600 flock /tmp/kiln-build.lock "$go" build -p 2 -trimpath -o bin/ws-echo . ||
  { echo "ws-echo-go: go build failed (module proxy unreachable, or Go older than go.mod's 1.22?)" >&2; exit 1; }
