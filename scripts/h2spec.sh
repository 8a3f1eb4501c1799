#!/usr/bin/env bash
# Prints the path of h2spec (the HTTP/2 conformance suite), building it first if this
# machine has none: Go (Debian's golang-go, from scripts/deps.sh) and the Go module
# proxy. The version is pinned: h2spec 2.6.0's code (`@latest` resolves to 2.2.1).
#   scripts/h2spec.sh        -> /root/.cache/kiln/h2spec-70ac229/bin/h2spec
set -euo pipefail

version=v0.0.0-20200804131034-70ac22940108
dir=${KILN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln}/h2spec-70ac229
bin=$dir/bin/h2spec
if [[ ! -x $bin ]]; then
  go=$(command -v go || true)
  [[ -z $go && -x /usr/lib/go/bin/go ]] && go=/usr/lib/go/bin/go
  if [[ -z $go ]]; then
    echo "h2spec.sh: no Go toolchain (install golang-go: scripts/deps.sh)" >&2
    exit 1
  fi
  mkdir -p "$dir"
  if ! GOPATH=$dir/gopath GOBIN=$dir/bin GOFLAGS=-modcacherw GO111MODULE=on \
       "$go" install "github.com/summerwind/h2spec/cmd/h2spec@$version" >"$dir/install.log" 2>&1; then
    echo "h2spec.sh: 'go install github.com/summerwind/h2spec/cmd/h2spec@$version' failed:" >&2
    tail -20 "$dir/install.log" >&2
    exit 1
  fi
fi
echo "$bin"
