#!/usr/bin/env bash
# Runs a browser test: Debian's chromium driven by playwright-core from npm.
#   tests/browser/run.sh NAME BINARY OUT_DIR     (NAME.test.mjs --NAME BINARY: blog, chat)
# Installs the pinned node packages (package-lock.json) into tests/browser/node_modules
# when they are missing or stale, under the machine-wide build lock. CHROMIUM=path
# overrides /usr/bin/chromium. Exits non-zero, saying why, when something is missing.
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 NAME BINARY OUT_DIR" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
name=$1
binary=$2
out=$3
chromium=${CHROMIUM:-/usr/bin/chromium}

fail() { echo "browser test: $*" >&2; exit 1; }
[[ -x "$chromium" ]] || fail "no chromium at $chromium: install Debian's package (apt-get install chromium; make deps does it)"
command -v node >/dev/null || fail "node is missing: install Debian's nodejs and npm (make deps does it)"
command -v npm >/dev/null || fail "npm is missing: install Debian's npm (make deps does it)"
[[ -f "$here/$name.test.mjs" ]] || fail "no test $here/$name.test.mjs"
[[ -x "$binary" ]] || fail "no $name binary at $binary (build it: ninja -C build $name)"

# The version package-lock.json pins, and the one installed (empty if none).
pinned() { node -e 'console.log(require(process.argv[1]).packages["node_modules/playwright-core"].version)' "$here/package-lock.json"; }
installed() { node -e 'try { console.log(require(process.argv[1]).version) } catch { console.log("") }' \
                "$here/node_modules/playwright-core/package.json"; }
if [[ "$(installed)" != "$(pinned)" ]]; then
  # npm ci is CPU- and network-heavy: one at a time on this machine, and only once.
  flock /tmp/kiln-build.lock bash -c '
    cd "$1"
    [[ "$(node -p "try { require(\"./node_modules/playwright-core/package.json\").version } catch { \"\" }")" == "$2" ]] && exit 0
    echo "browser test: npm ci (playwright-core $2) in $1" >&2
    npm ci --no-audit --no-fund --loglevel=error
  ' _ "$here" "$(pinned)" || fail "npm ci failed in $here (is the npm registry reachable?)"
fi

mkdir -p "$out"
exec node "$here/$name.test.mjs" "--$name" "$binary" --out "$out" --chromium "$chromium"
