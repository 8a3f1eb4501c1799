# Front door. `make run` and `make test` are what the README promises; everything
# goes through scripts/deps.sh first so a fresh Debian 12 machine works.
# Builds take a machine-wide lock: two builds never run at once on 2 cores.
BUILD    ?= build
JOBS     ?= 2
LOCK     := flock /tmp/kiln-build.lock
PORT     ?= 8080
FUZZ_SECONDS ?= 20

.PHONY: all deps build run test fuzz fuzz-build asan bench clean

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

asan: deps
	cmake -S . -B build-asan -G Ninja -DKILN_SANITIZE=ON
	$(LOCK) ninja -C build-asan -j$(JOBS)
	cd build-asan && ctest --output-on-failure -j$(JOBS) --timeout 600

bench:
	@bash bench/plaintext.sh

clean:
	rm -rf $(BUILD) build-fuzz build-asan
