#!/usr/bin/env bash
# Builds bench/peers/tfb-actix/target/release/tfb-actix, the TechEmpower actix peer
# (actix-web and actix-http variants in one binary), with cargo build --release --locked;
# crates come from crates.io into cargo's usual cache, ~/.cargo/registry.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v cargo >/dev/null || { echo "tfb-actix peer: cargo not found on PATH" >&2; exit 1; }
cd "$here"
bin=target/release/tfb-actix
if [[ -x $bin && -z $(find Cargo.toml Cargo.lock src -newer "$bin" -print -quit) ]]; then exit 0; fi
flock /tmp/kiln-build.lock cargo build --release --locked --quiet -j2 ||
  { echo "tfb-actix peer: cargo build failed (crates.io unreachable?)" >&2; exit 1; }
