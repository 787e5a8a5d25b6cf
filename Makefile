# Thin wrapper over CMake. `make run` and `make test` are all a newcomer needs.
BUILD      ?= build
ASAN_BUILD ?= build-asan
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
BENCH      ?=
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60

# Debian packages the build, the tests and the REPL need.
DEB_PACKAGES := gcc libc6-dev make cmake pkg-config liblua5.4-dev libyaml-dev \
                libcmocka-dev lua-unit libedit-dev libopenblas-serial-dev
# Only `make fuzz` needs these: clang and its libFuzzer runtime.
FUZZ_DEB_PACKAGES := clang libclang-rt-dev
FUZZ_HARNESSES := topo addr tl_torch

.PHONY: all deps fuzz-deps build run test test-asan conformance fuzz-build fuzz install perf clean

all: build

# $(call install_debs,PACKAGES): installs the missing ones as root, or
# prints the apt-get line and fails.
define install_debs
	@missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends$$missing; \
	  else \
	    echo "missing Debian packages:$$missing"; \
	    echo "install them as root with:"; \
	    echo "  apt-get install -y --no-install-recommends$$missing"; \
	    exit 1; \
	  fi; \
	fi
endef

deps:
	$(call install_debs,$(DEB_PACKAGES))

fuzz-deps:
	$(call install_debs,$(FUZZ_DEB_PACKAGES))

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

# The main job: the 2-D sharded GEMM on the default topology, checked
# against a CPU reference; `make run BENCH=benches/x.lua` runs another bench.
run: build
	@if [ -n "$(BENCH)" ]; then ./$(BUILD)/bin/kernbench $(BENCH); \
	else ./$(BUILD)/bin/kernbench benches/sharded_gemm.lua --verify-data; fi

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DKB_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

# The SimPy conformance suite (tests/conformance/README.md): regenerates the
# logs with SimPy 3 (Debian's python3-simpy3) and checks them against the
# committed ones, then compares kernbench's output with them, then runs 3000
# random models (random_models.lua) against kernbench and against SimPy itself.
conformance: build
	$(call install_debs,python3-simpy3)
	tests/conformance/simpy.sh
	tests/conformance/check.sh ./$(BUILD)/bin/kernbench
	tests/conformance/random_simpy.sh ./$(BUILD)/bin/kernbench 1 3000

# The libFuzzer harnesses of tests/fuzz, built with clang and ASan + UBSan;
# `make fuzz FUZZ_SECONDS=N` runs each for N seconds on a scratch copy of its
# seed corpus and prints executions, coverage and findings per harness.
fuzz-build: deps fuzz-deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DKB_FUZZ=ON -DKB_BUILD_TESTS=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_HARNESSES))

fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# Benchmarks of the simulator itself (see docs/PERFORMANCE.md).
perf: build
	./$(BUILD)/bin/perf_event_queue
	./$(BUILD)/bin/kernbench benches/perf/lua_processes.lua
	./$(BUILD)/bin/kernbench benches/perf/chain.lua
	KB_OUT_DIR=$(BUILD) ./$(BUILD)/bin/kernbench benches/perf/pe_dma.lua
	./$(BUILD)/bin/kernbench -q benches/perf/tl_calls.lua
	./$(BUILD)/bin/kernbench -q benches/perf/gemm_pipeline.lua

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
