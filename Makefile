# Front door. `make run` and `make test` are what the README promises; everything
# goes through scripts/deps.sh first so a fresh Debian 12 machine works.
# Builds take a machine-wide lock: two builds never run at once on 2 cores.
BUILD    ?= build
JOBS     ?= 2
LOCK     := flock /tmp/kiln-build.lock
PORT     ?= 8080
FUZZ_SECONDS ?= 20

.PHONY: all deps build run test fuzz fuzz-build fuzz-coverage asan tsan bench clean

all: build

deps:
	@bash scripts/deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: deps $(BUILD)/build.ninja
	$(LOCK) ninja -C $(BUILD) -j$(JOBS)

run: build
	$(BUILD)/bin/blog --port $(PORT)

test: build fuzz-build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 300
	@bash tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

build-fuzz/build.ninja:
	CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DKILN_FUZZ=ON -DKILN_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo

fuzz-build: deps build-fuzz/build.ninja
	$(LOCK) ninja -C build-fuzz -j$(JOBS)

fuzz: fuzz-build
	@bash tests/fuzz/run.sh build-fuzz 600

# Line coverage per fuzz target (tests/fuzz/REPORT.md): fuzz each target in turn into a
# kept corpus, then replay it in a coverage build (build-cov).
fuzz-coverage: fuzz-build
	@bash tests/fuzz/coverage.sh grow build-fuzz 90 build-cov/corpus
	@bash tests/fuzz/coverage.sh report build-cov build-cov/corpus

# Under the sanitizers everything runs several times slower: latency bounds in the
# integration tests are scaled (KILN_TEST_TIME_SCALE). Under ASan a test that fails is
# run once more: a timing flake shows in the log as a failure, then a pass. A sanitizer
# report in any attempt still fails the run (ctest's log keeps every attempt's output).
# The release run (`make test`) and TSan's run each test once.
SANITIZER_RETRY := --repeat until-pass:2
SANITIZER_REPORT := ERROR: (Address|Leak)Sanitizer|: runtime error:
asan: deps
	cmake -S . -B build-asan -G Ninja -DKILN_SANITIZE=ON
	$(LOCK) ninja -C build-asan -j$(JOBS)
	cd build-asan && KILN_TEST_TIME_SCALE=3 ctest --output-on-failure -j$(JOBS) --timeout 600 $(SANITIZER_RETRY)
	@if grep -qE '$(SANITIZER_REPORT)' build-asan/Testing/Temporary/LastTest.log; then \
	  echo "make asan: a sanitizer report in a test that passed on its retry:"; \
	  grep -nE '$(SANITIZER_REPORT)' build-asan/Testing/Temporary/LastTest.log | head -20; exit 1; fi

# ThreadSanitizer on what runs on several threads: the engine's loops, the hybrid
# pool and kiln::blocking's threads (unit tests over a socketpair, the test client,
# the end-to-end tests that use several loop threads, the pool or blocking work). Processes (supervisor, prefork) are left to asan.
TSAN_TARGETS := kiln_test_server connection_test loop_test testing_client_test blocking_test store_test process_bus_test
TSAN_TESTS   := ^(connection_test|loop_test|testing_client_test|blocking_test|store_test|process_bus_test|integration_(hybrid|keepalive|pipelining|sessions|timeouts|coroutines|websocket))$$
tsan: deps
	cmake -S . -B build-tsan -G Ninja -DKILN_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
	$(LOCK) ninja -C build-tsan -j$(JOBS) $(TSAN_TARGETS)
	cd build-tsan && KILN_TEST_TIME_SCALE=3 TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j$(JOBS) --timeout 600 -R '$(TSAN_TESTS)'

bench:
	@bash bench/plaintext.sh

clean:
	rm -rf $(BUILD) build-fuzz build-cov build-asan build-tsan
