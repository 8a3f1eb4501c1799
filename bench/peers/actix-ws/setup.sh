#!/usr/bin/env bash
# Builds bench/peers/actix-ws/target/release/actix-ws-echo, the WebSocket echo peer
# (actix-web 4 with actix-ws), with cargo build --release --locked; crates come from
# crates.io into cargo's usual cache, ~/.cargo/registry.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v cargo >/dev/null || { echo "actix-ws peer: cargo not found on PATH" >&2; exit 1; }
cd "$here"
bin=target/release/actix-ws-echo
if [[ -x $bin && -z $(find Cargo.toml Cargo.lock src -newer "$bin" -print -quit) ]]; then exit 0; fi
flock /tmp/kiln-build.lock cargo build --release --locked --quiet -j2 ||
  { echo "actix-ws peer: cargo build failed (crates.io unreachable?)" >&2; exit 1; }
