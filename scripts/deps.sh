#!/usr/bin/env bash
# The one list of Debian packages kiln needs. Installs only what is missing, so it
# is cheap to call from `make run`, `make test` and `.ci/run` every time.
#   scripts/deps.sh          build + test dependencies
#   scripts/deps.sh bench    also the load tools and peer servers used by bench/
set -euo pipefail

build=(
  g++ cmake ninja-build ccache make pkg-config   # toolchain
  libgtest-dev                                   # unit tests
  libhttp-parser-dev                             # independent parser for the differential test
  libtomlplusplus-dev                            # kiln.toml
  libssl-dev                                     # HMAC-SHA256 (signed cookies), CSPRNG
  nlohmann-json3-dev                             # JSON request bodies (DOM)
  libsqlite3-dev                                 # embedded database (src/db)
  libpq-dev postgresql                           # PostgreSQL driver (src/pg); the server for its tests
  libhiredis-dev redis-server                    # Redis client (src/redis); the server for its tests
  libsodium-dev libutf8proc-dev                  # Argon2id password hashes, passwords' Unicode normalization (src/auth)
  libnghttp2-dev                                 # HTTP/2 framing and HPACK (src/http/h2_session)
  zlib1g-dev libbrotli-dev libzstd-dev           # response compression (src/http/compress)
  python3-h2 golang-go                           # HTTP/2 tests: the h2 client library; Go builds h2spec
  python3-websockets python3-venv                # WebSocket tests: an independent client; a venv for kosoku (Autobahn)
  haproxy                                        # the load balancer of tests/cluster
  clang libclang-rt-14-dev                       # libFuzzer + sanitizers for the fuzz targets
  libgumbo-dev                                   # an HTML5 parser: fuzz_template's oracle (tests/fuzz/template_oracle)
  curl python3                                   # integration tests (curl for 100-continue)
  chromium nodejs $(command -v npm >/dev/null || echo npm)  # browser test (Playwright drives chromium); npm unless node ships it
)
bench=(wrk nginx-light procps apache2-utils httperf nghttp2-client)

want=("${build[@]}")
[[ "${1:-}" == "bench" ]] && want+=("${bench[@]}")

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "deps: installing ${missing[*]}"
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
